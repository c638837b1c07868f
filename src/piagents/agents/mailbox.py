"""Wake-ups between runtimes that share a store.

Messages themselves travel through the store (durable, in the recipient's
inbox); a runtime only needs a nudge to look. The store may have a way of its own
(PostgreSQL: LISTEN/NOTIFY, across machines: `Store.mailbox` and `Store.notify`);
otherwise each runtime listens on an abstract Unix socket named after its lease
token, so whoever can read the lease can reach its holder on this machine, and
nothing is left on disk.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import Callable

from piagents.store.base import Mailbox, Store, StoreError

PREFIX = "pi-agents-"

log = logging.getLogger("piagents")


def address(token: str) -> str:
    return "\0" + PREFIX + token


def open_mailbox(store: Store, token: str, on_poke: Callable[[], None]) -> Mailbox:
    """The mailbox of the holder `token`: the store's own, else its Unix socket."""
    return store.mailbox(token, on_poke) or SocketMailbox(token, on_poke)


class SocketMailbox:
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


async def wake(store: Store, token: str) -> bool:
    """Nudge the runtime holding `token`, through the store when it has a way (sent
    once the inputs left for it are committed), else on its socket; False when
    nobody could be told (it takes them from the store when it next looks)."""
    try:
        if store.notify(token):
            return True
    except StoreError as exc:
        log.warning("A wake-up could not be sent: %s", exc)
        return False
    return await poke(token)


async def poke(token: str, timeout: float = 2.0) -> bool:
    """Nudge the runtime holding `token` on this machine; False when nobody listens."""
    if not SocketMailbox.supported():
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
