"""Programs run for their callers: one `ProgramRunner` per runtime.

It owns the sandbox's worker pool (started on the first Program, closed with the
runner) and the Programs running here, each a task of its own. A Program is a store
record from its start (`running`) to its one end (`completed`, `failed`, `stopped`,
with its result text and why it stopped); its `store()` values are written with its
end when it completes. A foreground Program's caller waits for it with its slot
given up; a background one's caller gets a notification when it ends, unless it is
waiting for it. A caller going offline, or the runtime closing, stops its Programs.
The SDK's Program scopes opened here are records too (`scopes`), stopped alike; the
tool's side (`programs`, `short_id`) reads only scripts.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from piagents.agents.clock import AsyncioClock, WaitClock
from piagents.events.records import ProgramChanged
from piagents.harness.tool_calls import failure_text
from piagents.harness.tools.base import Tool
from piagents.programs import texts
from piagents.programs.addressing import short_ids
from piagents.programs.calls import Run
from piagents.programs.ports import Closed, ProgramAgents, ProgramScope
from piagents.programs.run_result import (
    RunResult,
    StopCause,
    run_result,
    sandbox_failure,
    timed_out,
)
from piagents.programs.sandbox import Limits, SandboxError, SandboxPool, ScriptOutcome, run_script
from piagents.programs.scopes import RecordedScopes
from piagents.programs.script_api import script_externals, script_prelude
from piagents.programs.script_host import ProgramHost, prelude_names
from piagents.programs.sdk import ProgramScopeSession
from piagents.store.base import Store, StoreError
from piagents.store.records import ProgramRecord, new_program_id

if TYPE_CHECKING:
    from piagents.agent import Agent

log = logging.getLogger("piagents")


def now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True, slots=True)
class RunnerPorts:
    """What the runner uses of the runtime."""

    store: Callable[[], Store]
    notify: Callable[[Agent, str], None]
    """A notification to a caller (delivered as the `agent` face delivers its own)."""
    yielded: Callable[[Agent], AbstractAsyncContextManager[object]]
    """The caller's slot given up for the context's duration (an owned caller's)."""
    cleanup_timeout: Callable[[], float]
    """Seconds a Program's work is given to stop when it ends."""
    publish: Callable[[ProgramChanged], None]
    """Announces a Program's start or end once the store has committed it."""
    clock: WaitClock = field(default_factory=AsyncioClock)
    """Times `wait` (tests pass one that needs no real time)."""
    limits: Limits = field(default_factory=Limits)
    """The sandbox's limits for every Program (its `timeout` is the Program's own)."""
    pool: Callable[[], SandboxPool] = SandboxPool


@dataclass(eq=False, slots=True)
class LiveProgram:
    """A Program running here."""

    record: ProgramRecord
    scope: ProgramScope
    host: ProgramHost
    task: asyncio.Task[ProgramRecord] | None = None  # runs it and records its end
    script: asyncio.Future[ScriptOutcome] | None = None  # its script, cancelled to stop it
    stop: StopCause | None = None
    waiting: int = 0  # the caller's `wait` calls waiting for it now
    silent: bool = False  # no notification: it stops because its caller goes away
    ended: asyncio.Event = field(default_factory=asyncio.Event)


class ProgramRunner:
    """Every Program run in one runtime (see the module docstring)."""

    def __init__(self, ports: RunnerPorts, agents: ProgramAgents | None = None) -> None:
        self.ports = ports
        self.agents = agents
        self.live: dict[str, LiveProgram] = {}
        self._stack = AsyncExitStack()
        self._pool: SandboxPool | None = None
        self._pool_lock = asyncio.Lock()
        self._closed = False
        self.scopes = RecordedScopes(
            lambda: self.ports.store(), ports.publish, lambda: self._closed
        )

    # ---- running ------------------------------------------------------------------

    def start(
        self, caller: Agent, request: Run, tools: Callable[[], Mapping[str, Tool]]
    ) -> LiveProgram:
        """Record a new Program of `caller`, running, and start it."""
        if self._closed:
            raise RuntimeError("the runtime is closing: no new Program can start")
        record = caller.session.record
        program = ProgramRecord(
            id=new_program_id(),
            caller_id=record.id,
            root_id=record.root_id or record.id,
            code=request.code,
            background=request.background,
            timeout=request.timeout,
            created=now_ms(),
        )
        self.ports.store().add_program(program)
        self._announce(program)
        short = self.short_id(caller.id, program.id)
        scope = ProgramScope(program.id, short, caller)
        host = ProgramHost(
            scope, tools, self.agents, lambda: self.ports.store().program_values(caller.id)
        )
        live = LiveProgram(program, scope, host)
        self.live[program.id] = live
        live.task = asyncio.get_running_loop().create_task(self._drive(live))
        return live

    async def run_foreground(
        self, caller: Agent, request: Run, tools: Callable[[], Mapping[str, Tool]]
    ) -> ProgramRecord:
        """Run a Program and return its ended record, the caller's slot given up meanwhile.
        A cancelled call (the caller's turn aborted) stops it."""
        live = self.start(caller, request, tools)
        task = live.task
        assert task is not None
        async with self.ports.yielded(caller):
            try:
                return await asyncio.shield(task)
            except asyncio.CancelledError:
                await self.stop(live, texts.CALLER_TURN_ABORTED)
                raise

    async def _drive(self, live: LiveProgram) -> ProgramRecord:
        started = time.monotonic()
        host = live.host
        request = live.record
        outcome: ScriptOutcome | None = None
        failure: RunResult | None = None
        limits = dataclasses.replace(
            self.ports.limits,
            timeout_s=request.timeout,
            cleanup_timeout_s=self.ports.cleanup_timeout(),
        )
        # The script runs in a task of its own, the one `stop` cancels: this one lives
        # on to record the end (a task cancelled before its first step runs nothing).
        if live.stop is None:
            live.script = asyncio.ensure_future(self._script(request.code, host, limits))
            try:
                outcome = await live.script
            except asyncio.CancelledError:
                if live.stop is None:  # cancelled from outside the runner
                    live.stop = StopCause("aborted", texts.RUNTIME_CLOSED)
            except SandboxError as exc:
                failure = sandbox_failure(time.monotonic() - started, str(exc))
            except Exception as exc:  # a fault of the host's side: the Program fails with it
                log.exception("Program %s failed on the host's side", request.id)
                failure = sandbox_failure(time.monotonic() - started, failure_text(exc))
        if outcome is not None and outcome.state == "stopped" and request.timeout is not None:
            live.stop = timed_out(request.timeout)
        closed = await self._close_agents(live)
        seconds = time.monotonic() - started
        result = failure or run_result(
            outcome,
            seconds=seconds,
            items=host.items,
            printed=host.printed,
            calls=host.calls,
            stop=live.stop,
            cleanup_failed=bool(closed.abandoned) or bool(outcome and outcome.abandoned_calls),
        )
        return self._end(live, result)

    async def _script(self, code: str, host: ProgramHost, limits: Limits) -> ScriptOutcome:
        pool = await self._started_pool()
        return await run_script(
            code,
            pool=pool,
            externals=script_externals(host),
            limits=limits,
            on_print=host.on_print,
            prelude=script_prelude(prelude_names(host.tool_names())),
        )

    async def _close_agents(self, live: LiveProgram) -> Closed:
        if self.agents is None or not live.host.made_agents:
            return Closed()
        try:
            return await self.agents.close(live.scope, self.ports.cleanup_timeout())
        except Exception:
            log.exception("The Agents of Program %s could not be closed", live.record.id)
            return Closed(("the Program's Agents",))

    def _end(self, live: LiveProgram, result: RunResult) -> ProgramRecord:
        caller = live.scope.caller
        text = result.text
        if texts.needs_truncation(text):
            text = texts.truncated_result(
                text, _saved(caller.loop.output_dir, live.record.id, text)
            )
        ended = msgspec.structs.replace(
            live.record,
            state=result.state,
            result=text,
            reason=live.stop.detail if live.stop is not None else None,
            returned=not live.record.background,
            ended=now_ms(),
        )
        values = live.host.values if result.state == "completed" else None
        try:
            self.ports.store().end_program(ended, values)
        except StoreError as exc:
            log.warning("Program %s could not be recorded as ended: %s", ended.id, exc)
        else:
            self._announce(ended)
        live.record = ended
        self.live.pop(ended.id, None)
        live.ended.set()
        if ended.background and not live.waiting and not live.silent and not self._closed:
            with contextlib.suppress(StoreError):  # the result is recorded: only unsent
                short = self.short_id(caller.id, ended.id)  # as it is shown now
                self.ports.notify(caller, texts.notification(short, ended.state))
        return ended

    def _announce(self, program: ProgramRecord) -> None:
        self.ports.publish(ProgramChanged.of(program))

    async def _started_pool(self) -> SandboxPool:
        async with self._pool_lock:
            if self._pool is None:
                if self._closed:
                    raise SandboxError("the runtime is closing")
                self._pool = await self._stack.enter_async_context(self.ports.pool())
            return self._pool

    def scope(self, caller: Agent) -> ProgramScopeSession:
        """A Program scope for the SDK (`Agent.program()`): the embedder's own Python with
        a Program's handles, its Agents these Programs' Agents; recorded (`scopes`)."""
        if self.agents is None:
            raise RuntimeError("this runtime gives Programs no Agents")
        return ProgramScopeSession(
            self.agents,
            caller,
            cleanup_timeout=self.ports.cleanup_timeout(),
            records=self.scopes,
        )

    # ---- stopping -------------------------------------------------------------------

    async def stop(self, live: LiveProgram, reason: str) -> bool:
        """Stop a running Program; False when it did not end within the cleanup timeout."""
        task = live.task
        if task is None or task.done():
            return True
        if live.stop is None:
            live.stop = StopCause("aborted", reason)
        if live.script is not None:
            live.script.cancel()
        # Its own cleanup (its Agents, its tool calls) has the cleanup timeout; the
        # margin covers the worker's kill and the record's write.
        done, _ = await asyncio.wait({task}, timeout=self.ports.cleanup_timeout() * 2 + 1)
        return bool(done)

    async def stop_for(self, caller_id: str, reason: str) -> None:
        """Stop the caller's running Programs and scopes, without notifications (it goes
        away)."""
        lives = [p for p in self.live.values() if p.record.caller_id == caller_id]
        for live in lives:
            live.silent = True
        await asyncio.gather(
            *(self.stop(live, reason) for live in lives), self.scopes.stop_for(caller_id, reason)
        )

    def caller_loaded(self, caller_id: str) -> None:
        """Records a killed process left running (scripts and scopes) end `stopped`, with
        their reason."""
        try:
            left = self.ports.store().programs(caller_id, state="running")
            if left:
                self.ports.store().stop_running_programs(caller_id, texts.PROCESS_ENDED, now_ms())
        except StoreError as exc:
            log.warning("Programs of %s left running could not be stopped: %s", caller_id, exc)
            return
        for program in left:
            self._announce(msgspec.structs.replace(program, state="stopped"))

    async def close(self) -> None:
        """Stop every Program (the runtime closes) and end the sandbox's workers."""
        for live in self.live.values():
            live.silent = True
        await asyncio.gather(
            *(self.stop(p, texts.RUNTIME_CLOSED) for p in list(self.live.values())),
            self.scopes.stop_for(None, texts.RUNTIME_CLOSED),
        )
        self._closed = True
        await self._stack.aclose()
        self._pool = None

    # ---- reading ------------------------------------------------------------------

    def running(self, caller_id: str) -> bool:
        """Whether the caller has a Program or a scope running here (work that keeps it
        loaded)."""
        return any(
            p.record.caller_id == caller_id for p in self.live.values()
        ) or self.scopes.running(caller_id)

    def programs(self, caller_id: str) -> list[ProgramRecord]:
        """The caller's Programs its `program` tool shows (scripts, not the SDK's scopes),
        newest first, as recorded (live ones as they are now)."""
        return self.ports.store().programs(caller_id, kind="script")

    def short_id(self, caller_id: str, program_id: str) -> str:
        ids = [p.id for p in self.programs(caller_id)]
        return short_ids(ids)[program_id]

    def shown(self, records: Sequence[ProgramRecord]) -> dict[str, str]:
        shorts = short_ids([p.id for p in records])
        return {p.id: shorts[p.id] for p in records}


def _saved(output_dir: Path, program_id: str, text: str) -> str | None:
    """The whole result, kept in the caller's output directory; None when it cannot be."""
    path = output_dir / f"program-{program_id}.txt"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        log.warning("The full result of Program %s could not be saved: %s", program_id, exc)
        return None
    return str(path)
