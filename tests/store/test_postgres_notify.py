"""Wake-ups on PostgreSQL: a NOTIFY on a holder's channel reaches its listener; a
listener looks once (`on_poke`) after each connection it makes, the first included,
since a NOTIFY sent while it was not listening is lost (the runtime then looks in the
store), so starting it does not wait for its connection."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import psycopg

from piagents.store.postgres import PostgresStore
from piagents.store.postgres_notify import NotifyMailbox, listener_name
from support import until


def _sql(url: str, sql: str, *args: object) -> list[tuple[object, ...]]:
    with psycopg.connect(url, autocommit=True) as db:
        return db.execute(sql, args).fetchall()  # type: ignore[arg-type]


def _backends(url: str, token: str) -> list[object]:
    """The server processes of the listener of `token`."""
    rows = _sql(
        url, "SELECT pid FROM pg_stat_activity WHERE application_name = %s", listener_name(token)
    )
    return [r[0] for r in rows]


@contextlib.asynccontextmanager
async def _listening(
    url: str, token: str
) -> AsyncIterator[tuple[PostgresStore, NotifyMailbox, list[int]]]:
    """A store, the listener of `token` started on it, and its pokes; both closed after."""
    store = PostgresStore(url)
    pokes: list[int] = []
    mailbox = store.mailbox(token, lambda: pokes.append(1))
    assert isinstance(mailbox, NotifyMailbox)
    await mailbox.start()
    try:
        yield store, mailbox, pokes
    finally:
        await mailbox.close()
        store.close()


async def test_a_notify_reaches_the_listener_of_its_token_only(postgres_url) -> None:
    store = PostgresStore(postgres_url)
    pokes: dict[str, int] = {"a": 0, "b": 0}

    def counter(name: str):
        def poked() -> None:
            pokes[name] += 1

        return poked

    a = store.mailbox("a" * 32, counter("a"))
    b = store.mailbox("b" * 32, counter("b"))
    assert isinstance(a, NotifyMailbox) and isinstance(b, NotifyMailbox)
    await a.start()
    await b.start()
    try:
        await a.listening.wait()
        await b.listening.wait()
        await until(lambda: pokes == {"a": 1, "b": 1}, "each listener's first look")
        assert store.notify("a" * 32)
        await until(lambda: pokes["a"] == 2, "the NOTIFY to reach a")
        with store.batch():  # inside a transaction: sent when it commits
            store.notify("b" * 32)
        await until(lambda: pokes["b"] == 2, "the NOTIFY to reach b")
        assert pokes == {"a": 2, "b": 2}
    finally:
        await a.close()
        await b.close()
        store.close()


async def test_a_listener_whose_connection_was_ended_reconnects_and_looks_once(
    postgres_url,
) -> None:
    token = "c" * 32
    async with _listening(postgres_url, token) as (store, mailbox, pokes):
        await until(lambda: len(pokes) == 1, "the first look")
        [first] = await until(lambda: _backends(postgres_url, token), "its connection")
        _sql(postgres_url, "SELECT pg_terminate_backend(%s)", first)
        # Connected again (a new server process), it looks in the store once.
        await until(lambda: mailbox.reconnections == 1 and len(pokes) == 2, "a reconnection")
        [second] = await until(lambda: _backends(postgres_url, token), "the new connection")
        assert second != first
        store.notify(token)
        await until(lambda: len(pokes) == 3, "the NOTIFY after the reconnection")
    await until(lambda: _backends(postgres_url, token) == [], "the listener's connection closed")


async def test_start_does_not_wait_for_the_connection_and_the_first_look_covers_what_came_before(
    postgres_url,
) -> None:
    token = "d" * 32
    async with _listening(postgres_url, token) as (store, mailbox, pokes):
        # Nothing ran between `start` and here: nobody listens yet, the NOTIFY is lost.
        assert not mailbox.listening.is_set()
        assert _backends(postgres_url, token) == []
        store.notify(token)
        # Its connection made, the listener looks once: what was sent is found so.
        await mailbox.listening.wait()
        await until(lambda: len(pokes) == 1, "the first look")
        assert mailbox.reconnections == 0
        assert len(_backends(postgres_url, token)) == 1
