"""A runtime held open by a front end for as long as it runs: opened in a task of its
own, closed once, and the reason when it could not open or stopped on its own."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from piagents.runtime import Runtime


class HeldRuntime:
    """`async with runtime` in a task: `open()` waits until it is open (or failed);
    `close()` takes its Agents offline and closes the store; `on_stopped` is called
    when it ends without being asked to."""

    def __init__(self, runtime: Runtime, on_stopped: Callable[[], None]) -> None:
        self.runtime = runtime
        self._on_stopped = on_stopped
        self._task: asyncio.Task[None] | None = None
        self._open = asyncio.Event()
        self._stop = asyncio.Event()

    @property
    def closing(self) -> bool:
        return self._stop.is_set()

    async def open(self) -> bool:
        """True once the runtime is open; False when it failed to (see `error()`)."""
        self._task = asyncio.create_task(self._hold())
        self._task.add_done_callback(self._ended)
        opened = asyncio.create_task(self._open.wait())
        await asyncio.wait({self._task, opened}, return_when=asyncio.FIRST_COMPLETED)
        opened.cancel()
        return self._open.is_set()

    async def _hold(self) -> None:
        async with self.runtime:
            self._open.set()
            await self._stop.wait()

    def _ended(self, task: asyncio.Task[None]) -> None:
        if self._open.is_set() and not self._stop.is_set():
            self._on_stopped()

    def error(self) -> str:
        """Why the runtime did not open, or stopped."""
        task = self._task
        if task is not None and task.done() and not task.cancelled() and task.exception():
            return str(task.exception())
        return "the runtime stopped"

    async def close(self) -> None:
        """Take every Agent offline and close the store; safe to call twice."""
        self._stop.set()
        if self._task is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await self._task
