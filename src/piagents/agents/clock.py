"""How long a `wait` waits: the real event loop's clock, or a test's."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Protocol


class WaitClock(Protocol):
    async def wait_for(self, event: asyncio.Event, timeout: float) -> bool:
        """Wait until `event` is set or `timeout` seconds have passed; True if it was set."""
        ...


class AsyncioClock:
    """The event loop's own clock (`asyncio.timeout`)."""

    async def wait_for(self, event: asyncio.Event, timeout: float) -> bool:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await event.wait()
        return event.is_set()
