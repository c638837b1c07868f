"""Scripts run in the `pydantic-monty` sandbox: the one door between a Program's
code and the host.

A script is Python, the body of an async function (top-level `await` and
`return`), run by monty's interpreter in a worker process of a `SandboxPool`: it
has no files, network, processes, environment or imports beyond monty's own
modules. What it does to the world goes through the host functions it is given
(`externals`), called by name; a coroutine function's calls run concurrently when
the script gathers them. A `Prelude` (Python run in the same session before the
script) builds the script's API over those flat functions; the script's line
numbers stay its own. `print` reaches `on_print`.

`run_script` returns a `ScriptOutcome`: `completed` (the script returned; its
value as JSON), `failed` (it raised, or hit a limit; the traceback text) or
`stopped` (its `timeout_s` expired). Cancelling the task that awaits it ends the
script too, even in a busy loop: the worker process is killed within
milliseconds, the host calls still running are cancelled, and the cancellation
propagates. Facts behind these choices: docs/monty-notes.md.
"""

from __future__ import annotations

import asyncio
import inspect
import math
import os
import re
import threading
import time
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, cast

import pydantic_monty

from piagents.harness.abandoned import let_go
from piagents.programs.script_errors import feed_filename, traceback_text
from piagents.programs.script_source import as_function_body
from piagents.programs.script_values import JsonValue, to_json_value

HostFunction = Callable[..., object]
"""A function a script may call: a coroutine function (awaited by the script, run
concurrently with the script's other calls) or a plain function (called at once).
Its arguments arrive as JSON values (`to_json_value`); it returns a value monty
converts (None, bool, int, float, str, lists, dicts) or raises an exception,
which the script sees as the nearest built-in exception with the same message."""

ScriptState = Literal["completed", "failed", "stopped"]


@dataclass(frozen=True)
class Limits:
    """What a script may use. `None` lifts a limit."""

    timeout_s: float | None = None
    """Wall-clock seconds for the whole run, waits on the host included; expiry stops it."""
    max_memory_bytes: int | None = 256 * 1024 * 1024
    """The sandbox's heap; exceeding it raises an uncatchable `MemoryError`."""
    max_cpu_s: float | None = 300.0
    """Seconds of sandbox execution between two host calls; exceeding it raises an
    uncatchable `TimeoutError`. Also ends a busy loop whose host process died."""
    max_recursion_depth: int = 1000
    max_host_calls: int = 1_000_000
    """Host calls, name lookups and awaits of host futures (monty's default is 1000)."""
    cleanup_timeout_s: float = 5.0
    """How long host calls still running when the script ends are awaited once cancelled."""


def _as_is(code: str) -> str:
    return code


@dataclass(frozen=True)
class Prelude:
    """Python run before the script in the same session: the script's API."""

    source: str
    bridge: Callable[[str], str] = _as_is
    """The script's source as the prelude needs it run, on the same lines."""


@dataclass(frozen=True)
class ScriptOutcome:
    """How a script ended."""

    state: ScriptState
    value: JsonValue = None
    """What the script returned (`completed`), as a JSON value."""
    error: str | None = None
    """Why it failed (`failed`): a traceback in the script's own line numbers."""
    wall_time_s: float = 0.0
    abandoned_calls: int = 0
    """Host calls that did not stop within `Limits.cleanup_timeout_s` (left running)."""


class SandboxError(Exception):
    """The sandbox could not run a script (a broken prelude, a missing worker binary)."""


class SandboxPool:
    """Monty's worker processes, started by `async with` and ended with it.

    Each run takes a worker of its own for its whole life (a Program waiting on
    its Agents holds one, idle), so `max_workers` bounds the scripts that run at
    once; further runs wait for a worker. An idle worker costs about 10 MB.
    """

    def __init__(self, *, warm_workers: int = 1, max_workers: int = 64) -> None:
        self._monty = pydantic_monty.AsyncMonty(
            min_processes=warm_workers, max_processes=max_workers
        )
        self._workers_before: set[int] = set()

    async def __aenter__(self) -> SandboxPool:
        self._workers_before = _worker_processes()
        try:
            await self._monty.__aenter__()
        except (OSError, pydantic_monty.MontyError) as error:
            raise SandboxError(f"the sandbox's workers could not start: {error}") from error
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._monty.__aexit__(exc_type, exc, tb)
        # Monty 1.4 reaps its workers after its exit returns; an interpreter that
        # exits meanwhile aborts (SIGABRT) about one time in five. Wait for them.
        deadline = time.monotonic() + _REAP_TIMEOUT_S
        while _worker_processes() - self._workers_before and time.monotonic() < deadline:
            await asyncio.sleep(0.002)  # polling the processes, not a delay

    def session(self, limits: Limits) -> pydantic_monty.AsyncMontySession:
        """A session of one worker, entered with `async with` (monty's own type)."""
        resource_limits: pydantic_monty.ResourceLimits = {
            "max_memory": limits.max_memory_bytes,
            "max_turn_duration_secs": limits.max_cpu_s,
            "max_recursion_depth": limits.max_recursion_depth,
            "max_suspensions": limits.max_host_calls,
        }
        # A script's asyncio.sleep sleeps as long as asked (monty caps it at 10 s by
        # default); the run's timeout bounds it.
        policy: pydantic_monty.OSPolicy = {"sleep_system_max": math.inf}
        return self._monty.checkout(
            script_name="program.py", limits=resource_limits, os_policy=policy
        )


_REAP_TIMEOUT_S = 2.0


def _worker_processes() -> set[int]:
    """The ids of this process's children that are monty workers (none without /proc)."""
    me = str(os.getpid())
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        end = text.rindex(")")
        if text[text.index("(") + 1 : end] == "monty" and text[end + 2 :].split()[1] == me:
            found.add(int(stat.parent.name))
    return found


async def run_script(
    code: str,
    *,
    pool: SandboxPool,
    externals: Mapping[str, HostFunction],
    limits: Limits,
    on_print: Callable[[str], None],
    prelude: Prelude | None = None,
) -> ScriptOutcome:
    """Run `code` as the body of an async function (see the module docstring).

    `on_print` receives the script's printed text (stdout and stderr, in order, in
    chunks of whole lines) as it is printed, and must not raise. Raises
    `SandboxError` when the prelude fails, and `CancelledError` when the awaiting
    task is cancelled (after the worker is killed and the host calls cancelled).
    """
    started = time.monotonic()
    calls = _HostCalls(externals)
    try:
        async with asyncio.timeout(limits.timeout_s):
            outcome = await _run(code, pool, calls, limits, on_print, prelude)
    except TimeoutError:
        outcome = ScriptOutcome("stopped")
    finally:
        abandoned = await calls.cancel(limits.cleanup_timeout_s)
    return ScriptOutcome(
        outcome.state,
        value=outcome.value,
        error=outcome.error,
        wall_time_s=time.monotonic() - started,
        abandoned_calls=abandoned,
    )


async def _run(
    code: str,
    pool: SandboxPool,
    calls: _HostCalls,
    limits: Limits,
    on_print: Callable[[str], None],
    prelude: Prelude | None,
) -> ScriptOutcome:
    lookup = calls.lookup()

    def printed(stream: Literal["stdout", "stderr"], text: str) -> None:
        calls.on_loop(on_print, text)

    outcome: ScriptOutcome | None = None
    try:
        # A worker killed under the script may surface on entering or leaving its
        # session as well as in the feed: it fails the script in each case.
        async with pool.session(limits) as session:
            outcome = await _feed(session, code, lookup, printed, calls, prelude)
    except pydantic_monty.MontyCrashedError as error:
        if outcome is None:  # what the script gave before its worker went still stands
            outcome = ScriptOutcome("failed", error=f"The sandbox's worker process died: {error}")
    return outcome


async def _feed(
    session: Any,
    code: str,
    lookup: dict[str, Any],
    printed: Callable[[Literal["stdout", "stderr"], str], None],
    calls: _HostCalls,
    prelude: Prelude | None,
) -> ScriptOutcome:
    feeds = 0
    if prelude is not None:
        try:
            await session.feed_run(prelude.source, external_lookup=lookup, print_callback=printed)
        except pydantic_monty.MontyCrashedError:
            raise
        except pydantic_monty.MontyError as error:
            raise SandboxError(f"the script's prelude failed: {error}") from error
        feeds += 1
    try:
        bridged = prelude.bridge(code) if prelude is not None else code
        value = await session.feed_run(
            as_function_body(bridged), external_lookup=lookup, print_callback=printed
        )
    except (pydantic_monty.MontyRuntimeError, pydantic_monty.MontySyntaxError) as error:
        text = traceback_text(
            error.traceback(),
            error.display("type-msg"),
            script_feed=feed_filename(feeds),
            script_lines=re.split(r"\r\n|\r|\n", code),
            host_errors=calls.errors,
        )
        return ScriptOutcome("failed", error=text)
    except pydantic_monty.MontyCrashedError:
        raise
    except pydantic_monty.MontyError as error:
        return ScriptOutcome("failed", error=f"{type(error).__name__}: {error}")
    return ScriptOutcome("completed", value=to_json_value(value))


class _HostCalls:
    """The externals as the script calls them, and the calls still running.

    Monty calls plain functions (and the print callback) from a thread of its own,
    so they are run on the event loop's thread here, the script waiting for their
    result; a coroutine function's call runs on the loop as a task tracked here,
    since monty does not cancel it when the script ends: it is cancelled when the
    run ends, however it ends."""

    def __init__(self, externals: Mapping[str, HostFunction]) -> None:
        self._externals = externals
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._running: set[asyncio.Task[object]] = set()
        self.errors: dict[str, tuple[str, ...]] = {}
        """The message of each exception a host function raised -> its classes' names."""

    def lookup(self) -> dict[str, Any]:
        return {name: self._wrapped(function) for name, function in self._externals.items()}

    def on_loop(self, function: Callable[..., object], *args: object) -> object:
        """`function(*args)` run on the event loop's thread, from whichever thread."""
        if threading.get_ident() == self._loop_thread:
            return function(*args)

        async def call() -> object:
            return function(*args)

        return asyncio.run_coroutine_threadsafe(call(), self._loop).result()

    def _wrapped(self, function: HostFunction) -> HostFunction:
        is_async = inspect.iscoroutinefunction(function)

        def call(*args: object, **kwargs: object) -> object:
            json_args = [to_json_value(arg) for arg in args]
            json_kwargs = {key: to_json_value(value) for key, value in kwargs.items()}
            if is_async:
                coroutine = function(*json_args, **json_kwargs)
                return self._tracked(cast(Coroutine[Any, Any, object], coroutine))
            return self.on_loop(self._called, function, json_args, json_kwargs)

        return call

    def _called(
        self, function: HostFunction, args: list[JsonValue], kwargs: dict[str, JsonValue]
    ) -> object:
        try:
            result = function(*args, **kwargs)
        except Exception as error:
            self._note(error)
            raise
        if inspect.isawaitable(result):
            if inspect.iscoroutine(result):
                result.close()
            raise TypeError(f"{function!r} returned an awaitable: make it a coroutine function")
        return result

    async def _tracked(self, coroutine: Coroutine[Any, Any, object]) -> object:
        task = asyncio.ensure_future(coroutine)
        self._running.add(task)
        task.add_done_callback(self._running.discard)
        try:
            return await task
        except Exception as error:
            self._note(error)
            raise

    def _note(self, error: Exception) -> None:
        self.errors[str(error)] = tuple(cls.__name__ for cls in type(error).__mro__)

    async def cancel(self, timeout_s: float) -> int:
        """Cancel the calls still running; the number that did not end in `timeout_s`."""
        running = [task for task in self._running if not task.done()]
        if not running:
            return 0
        for task in running:
            task.cancel()
        _, pending = await asyncio.wait(running, timeout=timeout_s)
        for task in pending:
            let_go(task)
        return len(pending)
