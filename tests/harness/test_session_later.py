"""A session's appends awaited on the store's write thread (PostgreSQL): memory and
`then` follow the commit, a cancelled awaiter loses nothing, whatever comes next
follows what is under way, and a failed append leaves the session as it was. On
SQLite the same call commits at once, without letting anything else run."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from piagents.ai.messages import UserMessage
from piagents.harness.session import Session
from piagents.store.base import SessionNotFound, Store
from piagents.store.postgres import PostgresStore
from piagents.store.records import Entry, MessageEntry
from piagents.store.sqlite import SQLiteStore
from support import until


@pytest.fixture
def pg(postgres_url: str) -> Iterator[PostgresStore]:
    store = PostgresStore(postgres_url)
    yield store
    store.close()


def _message(text: str) -> MessageEntry:
    return MessageEntry(UserMessage.of(text))


def _texts(entries: list[Entry]) -> list[str]:
    return [e.message.text for e in entries if isinstance(e, MessageEntry)]


def _session(store: Store, tmp_path: Path) -> Session:
    return Session.create(store, cwd=str(tmp_path), model="faux/x")


async def test_memory_and_then_follow_the_commit(pg: PostgresStore, tmp_path: Path) -> None:
    session = _session(pg, tmp_path)
    heard: list[object] = []

    async def other() -> None:
        heard.append("another task")

    task = asyncio.create_task(other())
    appended = await session.append_async(
        _message("a"), _message("b"), then=lambda es: heard.append(_texts(es))
    )
    await task
    assert heard == ["another task", ["a", "b"]]  # it ran while the commit was made
    assert _texts(pg.entries(session.id)) == ["a", "b"]
    assert [m.text for m in session.context()] == ["a", "b"]
    assert session.leaf_id == appended[-1].id
    assert appended[1].parent_id == appended[0].id


async def test_an_awaiter_cancelled_mid_commit_loses_nothing(
    pg: PostgresStore, tmp_path: Path
) -> None:
    session = _session(pg, tmp_path)
    heard: list[list[str]] = []
    task = asyncio.create_task(
        session.append_async(_message("kept"), then=lambda es: heard.append(_texts(es)))
    )
    await asyncio.sleep(0)  # the write is handed over; the awaiter now waits for it
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # The commit cannot be taken back: once it lands, memory and `then` follow it.
    await until(lambda: heard, "the write to land")
    assert heard == [["kept"]]
    assert _texts(pg.entries(session.id)) == ["kept"]
    assert [m.text for m in session.context()] == ["kept"]


async def test_an_append_while_one_is_under_way_follows_it(
    pg: PostgresStore, tmp_path: Path
) -> None:
    session = _session(pg, tmp_path)
    later = asyncio.create_task(session.append_async(_message("first")))
    await asyncio.sleep(0)  # under way on the write thread
    (second,) = session.append(_message("second"))  # waits for it, then chains after it
    await later
    stored = pg.entries(session.id)
    assert _texts(stored) == ["first", "second"]
    assert second.parent_id == stored[0].id
    assert [m.text for m in session.context()] == ["first", "second"]


async def test_a_failed_append_raises_to_its_awaiter_and_changes_nothing(
    pg: PostgresStore, postgres_url: str, tmp_path: Path
) -> None:
    session = _session(pg, tmp_path)
    (kept,) = await session.append_async(_message("kept"))
    with psycopg.connect(postgres_url, autocommit=True) as db:  # gone behind its back
        db.execute("DELETE FROM entries WHERE session_id = %s", (session.id,))
        db.execute("DELETE FROM sessions WHERE id = %s", (session.id,))
    heard: list[object] = []
    with pytest.raises(SessionNotFound):
        await session.append_async(_message("lost"), then=heard.append)
    assert heard == []
    assert session.leaf_id == kept.id
    assert [m.text for m in session.context()] == ["kept"]


async def test_on_sqlite_the_append_commits_at_once_without_letting_others_run(
    tmp_path: Path,
) -> None:
    store = SQLiteStore(tmp_path / "store.db")
    try:
        session = _session(store, tmp_path)
        ran: list[str] = []

        async def other() -> None:
            ran.append("other")

        task = asyncio.create_task(other())
        await session.append_async(_message("a"), then=lambda _: ran.append("then"))
        assert ran == ["then"]  # the other task has not run: the call never suspended
        await task
        assert _texts(store.entries(session.id)) == ["a"]
    finally:
        store.close()
