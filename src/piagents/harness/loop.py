"""The agent loop: runs, turns, tool boundaries, queues and abort.

A run starts from one or more inputs and ends with a final answer. A turn is
one model response and the tool calls it makes. `steer` inputs join the
current run after its tool calls; `followUp` inputs start the next run;
writes are added at the next tool boundary (or at once when idle) and never
start a turn.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from piagents.ai.arguments import ArgumentProblem, storable
from piagents.ai.messages import (
    AssistantMessage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from piagents.ai.models import ModelRef, ThinkingLevel
from piagents.ai.provider import ModelRequest, Provider
from piagents.harness.abandoned import let_go
from piagents.harness.events import (
    Input,
    InputQueued,
    LoopEvent,
    MessageCommitted,
    Phase,
    PhaseChanged,
    RunEnded,
    RunOutcome,
    RunStarted,
    ToolStarted,
    TurnStarted,
)
from piagents.harness.loop_guard import model_calls_exhausted
from piagents.harness.loop_records import (
    DEFAULT_CONFIG,
    AbortResult,
    LoopConfig,
    QueueMode,
    render,
)
from piagents.harness.loop_run import Run
from piagents.harness.session import Session
from piagents.harness.streaming import stream_response
from piagents.harness.tool_calls import (
    aborted_message,
    call_tool,
    failure_text,
    noted,
    rejected,
    result_message,
)
from piagents.harness.tools.base import Tool, ToolContext, ToolResult, spec_of
from piagents.store.records import MessageEntry


@dataclass(slots=True)
class LoopHooks:
    """Where a higher layer plugs in: slots before a run, results after it."""

    before_run: Callable[[AgentLoop, tuple[Input, ...]], Awaitable[None]] | None = None
    after_run: Callable[[AgentLoop, RunOutcome], None] | None = None
    # Runs before each model call; may compact the session.
    before_model_call: Callable[[AgentLoop], Awaitable[None]] | None = None
    # Inputs taken back before they started (abort, or a user clearing the queue).
    on_withdrawn: Callable[[AgentLoop, tuple[Input, ...]], None] | None = None


class AgentLoop:
    """Drives one session. Runs are tasks in the owner's task group."""

    def __init__(
        self,
        session: Session,
        *,
        task_group: asyncio.TaskGroup,
        resolve_provider: Callable[[ModelRef], Provider],
        model: ModelRef,
        thinking: ThinkingLevel,
        tools: Sequence[Tool],
        system_prompt: str,
        output_dir: Path,
        config: LoopConfig = DEFAULT_CONFIG,
        hooks: LoopHooks | None = None,
        agent_name: str | None = None,
    ) -> None:
        self.session = session
        self._tg = task_group
        self.resolve_provider = resolve_provider
        self.model = model
        self.thinking: ThinkingLevel = thinking
        self.tools: dict[str, Tool] = {t.name: t for t in tools}
        self.system_prompt = system_prompt
        self.output_dir = output_dir
        self._cwd: tuple[str, Path] = ("", Path())  # the session's cwd, as text and as a Path
        self.config = config
        self.hooks = hooks or LoopHooks()
        self.agent_name = agent_name
        self.phase: Phase = "idle"
        self.listeners: list[Callable[[LoopEvent], None]] = []
        self._steers: deque[Input] = deque()
        self._follow_ups: deque[Input] = deque()
        self._writes: deque[Input] = deque()
        self._waiters: dict[str, asyncio.Future[RunOutcome]] = {}
        self._driver: asyncio.Task[None] | None = None
        self._run: Run | None = None
        self._abandoned: set[asyncio.Task[Any]] = set()
        self._turn = 0
        self.closed = False

    # ---- observation -------------------------------------------------------

    def emit(self, event: LoopEvent) -> None:
        for listener in list(self.listeners):
            listener(event)

    def _set_phase(self, phase: Phase) -> None:
        if phase != self.phase:
            self.phase = phase
            self.emit(PhaseChanged(phase))

    @property
    def busy(self) -> bool:
        """A run is in progress or queued, or inputs wait."""
        return self._run is not None or bool(self._follow_ups or self._steers)

    @property
    def in_turn(self) -> bool:
        return self._run is not None and self.phase == "running"

    def queued_inputs(self) -> list[Input]:
        return [*self._steers, *self._follow_ups]

    def queued_writes(self) -> list[Input]:
        return list(self._writes)

    # ---- delivery -----------------------------------------------------------

    def submit(self, inp: Input) -> asyncio.Future[RunOutcome] | None:
        """Accept an input or a write; returns a future of the input's run outcome."""
        if self.closed:
            raise RuntimeError("the agent is closed")
        if inp.delivery == "write":
            if self._run is not None and self.phase == "running":
                self._writes.append(inp)
                self.emit(InputQueued(inp))
            else:
                self._flush_writes()  # any left by a run the store failed, first
                self._commit_inputs([inp])
            return None
        future: asyncio.Future[RunOutcome] = asyncio.get_running_loop().create_future()
        self._waiters[inp.id] = future
        if inp.delivery == "steer" and self.in_turn:
            self._steers.append(inp)
        else:
            self._follow_ups.append(inp)
        self.emit(InputQueued(inp))
        self._ensure_driver()
        return future

    async def prompt(self, text: str) -> RunOutcome:
        future = self.submit(Input(text))
        assert future is not None
        return await future

    def withdraw_queued(self, which: Callable[[Input], bool] | None = None) -> list[Input]:
        """Take back inputs that have not started (all, or those `which` selects)."""
        taken: list[Input] = []
        for queue in (self._steers, self._follow_ups):
            keep = [i for i in queue if which is not None and not which(i)]
            taken.extend(i for i in queue if which is None or which(i))
            queue.clear()
            queue.extend(keep)
        if taken and self.hooks.on_withdrawn is not None:
            self.hooks.on_withdrawn(self, tuple(taken))
        for inp in taken:
            self._settle(RunOutcome((inp,), "aborted", ""))
        return taken

    def _ensure_driver(self) -> None:
        if self._driver is None or self._driver.done():
            self._driver = self._tg.create_task(self._drive())

    def _take(self, queue: deque[Input], mode: QueueMode) -> list[Input]:
        if mode == "all":
            items = list(queue)
            queue.clear()
            return items
        return [queue.popleft()] if queue else []

    def _input_messages(
        self, inputs: Sequence[Input]
    ) -> tuple[list[UserMessage], list[MessageEntry]]:
        """The inputs' messages, and the entries of those not committed yet."""
        messages = [render(i) for i in inputs]
        fresh = [MessageEntry(m) for i, m in zip(inputs, messages, strict=True) if not i.committed]
        return messages, fresh

    def _announce(self, messages: Sequence[UserMessage]) -> None:
        for m in messages:
            self.emit(MessageCommitted(m))

    def _commit_inputs(self, inputs: Sequence[Input]) -> None:
        messages, fresh = self._input_messages(inputs)
        if fresh:
            self.session.append(*fresh)
        self._announce(messages)

    async def _commit_inputs_async(self, inputs: Sequence[Input]) -> None:
        """`_commit_inputs` awaiting the commit (the store may make it on its write thread)."""
        messages, fresh = self._input_messages(inputs)
        if fresh:
            await self.session.append_async(*fresh, then=lambda _: self._announce(messages))
        else:
            self._announce(messages)

    def _flush_writes(self) -> None:
        """Commit the queued writes; if the store refuses them they stay queued (they
        were accepted), for the next boundary or the next write."""
        if self._writes:
            self._commit_inputs(list(self._writes))
            self._writes.clear()  # all of them: no write can come in during a synchronous commit

    # ---- runs ---------------------------------------------------------------

    async def _drive(self) -> None:
        while not self.closed and (self._steers or self._follow_ups):
            if self._steers:
                batch = self._take(self._steers, self.config.steering_mode)
            else:
                batch = self._take(self._follow_ups, self.config.follow_up_mode)
            await self._run_inputs(batch)

    async def _run_inputs(self, batch: list[Input]) -> None:
        run = Run(list(batch))
        self._run = run
        outcome: RunOutcome | None = None
        try:
            self._set_phase("queued")
            if self.hooks.before_run is not None:
                await self.hooks.before_run(self, tuple(batch))
            if run.aborted.is_set():
                outcome = RunOutcome(tuple(run.inputs), "aborted", "")
                return
            run.inputs.extend(self._steers)  # steers that arrived while queued join now
            self._steers.clear()
            self._set_phase("running")
            self.emit(RunStarted(tuple(run.inputs)))
            self._flush_writes()  # any left by a run the store failed, in order
            await self._commit_inputs_async(run.inputs)
            outcome = await self._turns(run)
        except asyncio.CancelledError:
            outcome = RunOutcome(tuple(run.inputs), "aborted", "")
            raise
        except Exception as exc:  # a bug in a hook or tool plumbing ends the run, not the runtime
            outcome = RunOutcome(tuple(run.inputs), "failed", failure_text(exc))
        finally:
            if outcome is None:
                outcome = RunOutcome(tuple(run.inputs), "aborted", "")
            self._run = None
            with contextlib.suppress(Exception):
                self._flush_writes()
            self._set_phase("idle")
            run.finished.set()
            if self.hooks.after_run is not None:
                try:
                    self.hooks.after_run(self, outcome)
                except Exception as exc:  # e.g. the store could not record the run's end
                    outcome = RunOutcome(outcome.inputs, "failed", failure_text(exc))
            self._settle(outcome)
            self.emit(RunEnded(outcome))

    def _settle(self, outcome: RunOutcome) -> None:
        for inp in outcome.inputs:
            fut = self._waiters.pop(inp.id, None)
            if fut is not None and not fut.done():
                fut.set_result(outcome)

    async def _turns(self, run: Run) -> RunOutcome:
        while True:
            if run.aborted.is_set():
                return RunOutcome(tuple(run.inputs), "aborted", "")
            limit = self.config.max_model_calls
            if limit is not None and run.model_calls >= limit:
                return RunOutcome(tuple(run.inputs), "failed", model_calls_exhausted(limit))
            run.model_calls += 1
            self._turn += 1
            self.emit(TurnStarted(self._turn))
            step = asyncio.create_task(self._step(run))
            run.step = step
            try:
                await run.until_done_or_abandoned(step)
            except asyncio.CancelledError:
                step.cancel()
                await run.until_done_or_abandoned(step)  # unless abandoned meanwhile
                if not step.done():
                    self._let_go(step)
                raise
            if not step.done():  # abandoned: let it run on, out of our books
                self._let_go(step)
                return RunOutcome(tuple(run.inputs), "aborted", "")
            if step.cancelled():
                return RunOutcome(tuple(run.inputs), "aborted", "")
            message = step.result()
            if message.stop_reason == "aborted" or run.aborted.is_set():
                return RunOutcome(tuple(run.inputs), "aborted", message.text)
            if message.stop_reason == "error":
                return RunOutcome(tuple(run.inputs), "failed", message.error_message or "error")
            if run.repeats.stopped is not None:  # queued steers start the next run
                return RunOutcome(tuple(run.inputs), "failed", run.repeats.stopped)
            self._flush_writes()
            steers = self._take(self._steers, self.config.steering_mode)
            if steers:
                run.inputs.extend(steers)
                await self._commit_inputs_async(steers)
                continue
            if message.tool_calls:
                continue
            return RunOutcome(tuple(run.inputs), "completed", message.text)

    def _let_go(self, step: asyncio.Task[Any]) -> None:
        """An abandoned step runs on, out of our books and asyncio's (so the process exits)."""
        self._abandoned.add(step)
        step.add_done_callback(self._abandoned.discard)
        let_go(step)

    async def _step(self, run: Run) -> AssistantMessage:
        """One model response and its tool calls; commits each step as it happens."""
        if self.hooks.before_model_call is not None:  # inside the step, so abort cancels it
            await self.hooks.before_model_call(self)
        message, unusable = storable(await self._stream(run))
        if run.abandoned.is_set():
            return message
        await self.session.append_message_async(
            message, then=lambda _: self.emit(MessageCommitted(message))
        )
        if message.stop_reason in ("aborted", "error") or not message.tool_calls:
            return message
        await self._execute_tools(run, message.tool_calls, unusable)
        return message

    async def _stream(self, run: Run) -> AssistantMessage:
        provider = self.resolve_provider(self.model)
        request = ModelRequest(
            model=self.model,
            system_prompt=self.system_prompt,
            messages=tuple(self.session.context()),
            tools=tuple(spec_of(t) for t in self.tools.values()),
            thinking=self.thinking,
            agent_id=self.session.id,
            agent_name=self.agent_name,
            aborted=run.aborted,
        )

        def keep_partial(partial: AssistantMessage) -> None:
            if not run.abandoned.is_set():
                self.session.append_message(partial)
                self.emit(MessageCommitted(partial))

        return await stream_response(provider, request, self.config.retry, self.emit, keep_partial)

    async def _execute_tools(
        self, run: Run, calls: list[ToolCall], unusable: dict[int, ArgumentProblem]
    ) -> None:
        """Run the calls of one response; those in `unusable` (by index) only get their error."""
        results: dict[int, ToolResultMessage] = {}
        next_to_commit = 0

        def commit_ready() -> None:
            nonlocal next_to_commit
            while next_to_commit in results and not run.abandoned.is_set():
                call = calls[next_to_commit]
                msg = noted(run.repeats, self.tools.get(call.name), call, results[next_to_commit])
                self.session.append_message(msg)
                self.emit(MessageCommitted(msg))
                next_to_commit += 1

        names = tuple(c.name for c in calls)

        async def one(index: int, call: ToolCall) -> None:
            self.emit(ToolStarted(call))
            problem = unusable.get(index)
            if problem is not None:
                results[index] = result_message(
                    call, rejected(self.tools.get(call.name), call, problem)
                )
            else:
                results[index] = await self._execute_tool(run, call, names)
            commit_ready()

        try:
            if self.config.tool_execution == "sequential":
                for i, call in enumerate(calls):
                    await one(i, call)
            else:
                async with asyncio.TaskGroup() as tg:
                    for i, call in enumerate(calls):
                        tg.create_task(one(i, call))
        except asyncio.CancelledError:
            for i, call in enumerate(calls):
                if i not in results:
                    results[i] = aborted_message(call)
            commit_ready()
            raise

    async def _execute_tool(
        self, run: Run, call: ToolCall, turn_calls: tuple[str, ...]
    ) -> ToolResultMessage:
        return result_message(call, await self.run_tool(call, run.aborted, turn_calls))

    async def run_tool(
        self,
        call: ToolCall,
        aborted: asyncio.Event | None = None,
        turn_calls: tuple[str, ...] = (),
    ) -> ToolResult:
        """Validate and run one tool call; every failure becomes an error result.
        Arguments that are not plain JSON never reach a tool."""
        ctx = ToolContext(
            cwd=self._cwd_path(),
            output_dir=self.output_dir,
            agent_id=self.session.id,
            call_id=call.id,
            aborted=aborted or asyncio.Event(),
            turn_calls=turn_calls,
        )
        return await call_tool(self.tools, call, ctx)

    def _cwd_path(self) -> Path:
        """The session's working directory as a Path, made again only when it changes."""
        text = self.session.record.cwd
        if text != self._cwd[0]:
            self._cwd = (text, Path(text))
        return self._cwd[1]

    # ---- abort & close --------------------------------------------------------

    async def abort(
        self, timeout: float | None = 10.0, which: Callable[[Input], bool] | None = None
    ) -> AbortResult:
        """Stop the current run and withdraw queued inputs (all, or those `which`
        selects); writes stay queued."""
        withdrawn = tuple(self.withdraw_queued(which))
        run = self._run
        if run is None:
            return AbortResult(withdrawn, bool(withdrawn), True)
        run.aborted.set()
        if run.step is not None:
            run.step.cancel()
        elif self._driver is not None:  # still waiting for a slot
            self._driver.cancel()
        try:
            async with asyncio.timeout(timeout):
                await run.finished.wait()
        except TimeoutError:
            run.abandon()
            await run.finished.wait()
            return AbortResult(withdrawn, True, False)
        return AbortResult(withdrawn, True, True)

    async def close(self, timeout: float | None = 10.0) -> bool:
        """Abort everything and stop the driver; inputs not handled end `aborted`.
        False when the turn did not stop within the timeout and was abandoned."""
        result = await self.abort(timeout)
        self.closed = True
        if self._driver is not None and not self._driver.done():
            self._driver.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._driver
        for task in list(self._abandoned):
            task.cancel()
        return result.stopped
