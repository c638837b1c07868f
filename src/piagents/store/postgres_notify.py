"""Wake-ups between runtimes on one PostgreSQL database, on any machine: LISTEN/NOTIFY.

A runtime LISTENs on the channel of its holder token, on a connection of its own;
whoever leaves inputs for it in the store sends NOTIFY on that channel through the
store's connection, so the nudge goes out only once the inputs are committed. A
NOTIFY sent while the listener was not connected is lost: after every connection it
makes (the first included) the listener calls `on_poke` once, and the runtime takes
whatever waits. So `start` does not wait for the connection (10-15 ms of a runtime's
opening on a database on the same machine): what is sent to the runtime before its
LISTEN is found by that first look.

The listener is psycopg's AsyncConnection, read by a task on the runtime's own
event loop: no thread to hand notifications across, and closing it is cancelling
that task, at once (a thread blocked in `notifies()` would only see a stop flag at
its next timeout).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg import sql

from piagents.store.postgres_open import CONNECT_TIMEOUT_S

log = logging.getLogger("piagents")

RECONNECT_WAITS = (0.05, 0.2, 0.5, 1.0, 2.0)  # then every 2 s, for as long as it takes
PREFIX = "piagents_"


def channel(token: str) -> str:
    """The channel the holder `token` listens on (a token is 32 hex digits)."""
    return PREFIX + token


def listener_name(token: str) -> str:
    """The listener's `application_name`, to tell its connection among the server's."""
    return f"pi-agents listener {token}"


class NotifyMailbox:
    """Calls `on_poke` whenever a NOTIFY comes on the channel of `token`, and once after
    each reconnection of its connection."""

    def __init__(self, url: str, location: str, token: str, on_poke: Callable[[], None]) -> None:
        self.url = url
        self.location = location
        self.token = token
        self.on_poke = on_poke
        self.reconnections = 0  # how often the connection was made again
        self.listening = asyncio.Event()  # set while a connection LISTENs
        self._conn: psycopg.AsyncConnection[Any] | None = None
        self._task: asyncio.Task[None] | None = None

    async def _connect(self) -> psycopg.AsyncConnection[Any]:
        conn = await psycopg.AsyncConnection.connect(
            self.url,
            autocommit=True,
            connect_timeout=CONNECT_TIMEOUT_S,
            application_name=listener_name(self.token),
        )
        try:
            await conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel(self.token))))
        except BaseException:  # closed (cancelled) while it was being made, say
            with contextlib.suppress(psycopg.Error):
                await conn.close()
            raise
        return conn

    async def start(self) -> None:
        """LISTEN from now on: connecting (and retrying) in the background."""
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        first = True
        while True:
            self._conn = await self._reconnect(first)
            if not first:
                self.reconnections += 1
            first = False
            self.listening.set()
            loop.call_soon(self.on_poke)  # what was sent before is lost: look once
            try:
                async for _ in self._conn.notifies():
                    loop.call_soon(self.on_poke)  # its failure is its own, not the listener's
            except psycopg.Error as exc:
                log.warning("%s: the wake-up listener lost its connection: %s", self.location, exc)
            self.listening.clear()
            with contextlib.suppress(psycopg.Error):
                await self._conn.close()
            self._conn = None

    async def _reconnect(self, first: bool) -> psycopg.AsyncConnection[Any]:
        """A listening connection; the first one tried at once, the others after a wait."""
        attempt = 0
        while True:
            if attempt or not first:
                await asyncio.sleep(RECONNECT_WAITS[min(attempt, len(RECONNECT_WAITS) - 1)])
            attempt += 1
            try:
                return await self._connect()
            except psycopg.Error as exc:
                if attempt == 1:
                    log.warning("%s: cannot listen for wake-ups yet: %s", self.location, exc)

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._conn is not None:
            with contextlib.suppress(psycopg.Error):
                await self._conn.close()
            self._conn = None


def notify_sql(token: str) -> tuple[str, tuple[str]]:
    """The statement that wakes the holder `token`, and its argument."""
    return "SELECT pg_notify(%s, '')", (channel(token),)
