"""Coalescing runtime events into at most one repaint per frame, without polling."""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable

from textual.message_pump import MessagePump

FRAME_S = 1 / 60


class FrameScheduler:
    """Runs `callback` in `owner`'s task at most once per `delay`, and only after `poke()`.

    Runtime listeners call `poke()` from any task. The first poke after a quiet
    frame runs at once; pokes within a frame of the last run share one timer.
    When nothing happens no timer exists, so an idle UI uses no CPU.
    """

    def __init__(
        self,
        owner: MessagePump,
        callback: Callable[[], Awaitable[None] | None],
        delay: float = FRAME_S,
    ) -> None:
        self._owner = owner
        self._callback = callback
        self._delay = delay
        self._armed = False
        self._running = False
        self._again = False
        self._last_run = 0.0

    def poke(self) -> None:
        if self._running:
            self._again = True
            return
        if self._armed:
            return
        wait = self._last_run + self._delay - time.monotonic()
        scheduled = (
            self._owner.call_later(self._run)
            if wait <= 0
            else self._owner.call_later(self._arm, wait)
        )
        self._armed = scheduled

    def _arm(self, wait: float) -> None:
        self._owner.set_timer(wait, self._fire)

    def _fire(self) -> None:
        if not self._owner.call_later(self._run):
            self._armed = False

    async def _run(self) -> None:
        self._armed = False
        self._running = True
        try:
            while True:
                self._again = False
                self._last_run = time.monotonic()
                result = self._callback()
                if inspect.isawaitable(result):
                    await result
                if not self._again:
                    return
        finally:
            self._running = False
