"""Wake-ups between runtimes on one home.

Messages themselves travel through the store (durable, in the recipient's
inbox); a runtime only needs a nudge to look. Each runtime listens on an
abstract Unix socket named after its lease token, so whoever can read the
lease can reach its holder, and nothing is left on disk.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Callable

PREFIX = "pi-agents-"


def address(token: str) -> str:
    return "\0" + PREFIX + token


class Mailbox:
    """Calls `on_poke` whenever another runtime says it left inputs for us."""

    def __init__(self, token: str, on_poke: Callable[[], None]) -> None:
        self.token = token
        self.on_poke = on_poke
        self._server: asyncio.AbstractServer | None = None

    @staticmethod
    def supported() -> bool:
        return sys.platform.startswith("linux")

    async def start(self) -> None:
        if self.supported():
            self._server = await asyncio.start_unix_server(self._handle, path=address(self.token))

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            with contextlib.suppress(OSError, asyncio.IncompleteReadError):
                await reader.readline()
            self.on_poke()
        finally:
            writer.close()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None


async def poke(token: str, timeout: float = 2.0) -> bool:
    """Nudge the runtime holding `token`; False when nobody listens."""
    if not Mailbox.supported():
        return False
    try:
        async with asyncio.timeout(timeout):
            _, writer = await asyncio.open_unix_connection(path=address(token))
            writer.write(b"inbox\n")
            await writer.drain()
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()
        return True
    except (OSError, TimeoutError):
        return False
