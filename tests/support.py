"""How the tests wait: on a real condition or an event, never on the clock alone.

Every test directory imports this module as `support` (pytest puts `tests/` on the
path for `tests/conftest.py`). A test that must wait for something the code under
test does in the background waits for that thing itself:

- `await until(condition, what=...)` polls `condition` until it gives a true value
  (returned), on the event loop, so the code under test keeps running;
- `eventually(condition, what=...)` does the same without an event loop, for
  processes and files outside this one;
- `await settled()` lets every other task run until it blocks, for the checks that
  something did *not* happen;
- `Gate` holds model calls until the test releases them, and records who started;
- `ElapsedClock` is a wait clock on which every wait's whole timeout has passed at
  once (a `wait` of 10 s costs no real time).

The timeouts are generous on purpose: they bound a test that would otherwise hang,
and they are never what the test waits for, so a slow machine (two copies of the
suite side by side on two cores) only makes a passing test slower, not failing.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")

TIMEOUT_S = 30.0
"""How long a wait may take before the test fails: far above any run on a loaded machine."""


def _failure(what: str | None, condition: object, timeout: float) -> AssertionError:
    return AssertionError(f"timed out after {timeout:g} s waiting for {what or condition}")


async def until(
    condition: Callable[[], T | Awaitable[T]],
    what: str | None = None,
    *,
    timeout: float = TIMEOUT_S,
    pause: Callable[[], Awaitable[object]] | None = None,
) -> T:
    """Wait until `condition()` is true and return its value.

    `condition` may be a coroutine function (it is awaited each time). Between
    checks the loop yields with `pause()` (a UI test passes its pilot's pause so
    the app renders), or else a short sleep: polling, never a fixed delay. After
    `timeout` seconds the test fails with an AssertionError naming `what`.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value  # type: ignore[return-value]
        if time.monotonic() > deadline:
            raise _failure(what, condition, timeout)
        await (pause() if pause is not None else asyncio.sleep(0.01))  # polling, not a delay


def eventually(
    condition: Callable[[], T], what: str | None = None, *, timeout: float = TIMEOUT_S
) -> T:
    """`until` for code without an event loop: for other processes, files, pids."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise _failure(what, condition, timeout)
        time.sleep(0.02)  # polling the condition, not a delay the test relies on


class Gate:
    """Model calls held per Agent name until the test releases that name.

    Use `gate.handler` as a scripted model's route: each call records its Agent's
    name in `started`, then waits for `release(name)`, then answers
    "<name> finished".
    """

    def __init__(self) -> None:
        self.started: list[Any] = []
        self.events: dict[Any, asyncio.Event] = {}

    def event(self, name: Any) -> asyncio.Event:
        return self.events.setdefault(name, asyncio.Event())

    def release(self, name: Any) -> None:
        self.event(name).set()

    async def handler(self, call: Any) -> str:
        self.started.append(call.agent_name)
        await self.event(call.agent_name).wait()
        return f"{call.agent_name} finished"


async def settled(rounds: int = 5) -> None:
    """Let every other task of this event loop run until it blocks.

    For the checks that something did *not* happen (no notification, no new turn):
    they hold once whatever the test set off has run as far as it can. Returns when
    the loop had no callback ready to run for `rounds` turns in a row; work waiting
    on a timer, a thread or another process is not waited for.
    """
    loop = asyncio.get_running_loop()
    quiet = 0
    deadline = time.monotonic() + TIMEOUT_S
    while quiet < rounds:
        await asyncio.sleep(0)  # one turn of the loop, not a delay
        # CPython's event loop keeps its ready callbacks in `_ready`.
        quiet = quiet + 1 if not getattr(loop, "_ready", ()) else 0
        if time.monotonic() > deadline:
            raise AssertionError("the event loop never settled")


class ElapsedClock:
    """A wait clock on which the whole timeout of every wait has passed at once; it notes
    each timeout it was given."""

    def __init__(self) -> None:
        self.timeouts: list[float] = []

    async def wait_for(self, event: asyncio.Event, timeout: float) -> bool:
        self.timeouts.append(timeout)
        return event.is_set()
