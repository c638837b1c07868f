"""The PostgreSQL store's write thread (`append_later`, `end_inputs_later`): writes
committed in the order given, on a connection of its own, with the same refusals
as the store's own calls; closing the store lets the writes given finish. The
SQLite store commits on the caller's thread and hands nothing over."""

from __future__ import annotations

import asyncio
from pathlib import Path

import psycopg
import pytest

from piagents.ai.messages import UserMessage
from piagents.store import lease
from piagents.store.base import LeaseLost, Registration, SessionNotFound
from piagents.store.postgres import PostgresStore
from piagents.store.records import InputRecord, MessageEntry, SessionRecord, new_id
from piagents.store.sqlite import SQLiteStore


def _session(store: PostgresStore | SQLiteStore, **kw: str) -> str:
    sid = new_id()
    store.create_session(SessionRecord(id=sid, cwd="/", created=1, updated=1, **kw))
    return sid


def _message(text: str) -> MessageEntry:
    return MessageEntry(UserMessage.of(text))


def _input(root: str, recipient: str, sender: str) -> InputRecord:
    return InputRecord(
        id=new_id(), root_id=root, recipient_id=recipient, sender_id=sender,
        kind="input", delivery="followUp", text="go", has_result=True,
    )  # fmt: skip


def test_later_writes_commit_in_the_order_given(postgres_url: str) -> None:
    store = PostgresStore(postgres_url)
    try:
        root = _session(store)
        child = _session(store, owner_id=root, root_id=root)
        accepted = store.add_input(_input(root, child, root))
        writes = [store.append_later(child, [_message(str(i))]) for i in range(20)]
        ended = store.end_inputs_later(child, [accepted.id], "completed", "done")
        assert all(w is not None for w in writes) and ended is not None
        [record] = ended.result()  # waits for it, and so for every write before it
        assert (record.id, record.status, record.result) == (accepted.id, "completed", "done")
        assert [e.message.text for e in store.entries(child)] == [str(i) for i in range(20)]
        again = store.end_inputs_later(child, [accepted.id], "failed", "twice")
        assert again is not None and again.result() == []  # an input ends once
    finally:
        store.close()


def test_each_sessions_writes_keep_their_order_across_the_threads(postgres_url: str) -> None:
    store = PostgresStore(postgres_url)
    try:
        sessions = [_session(store) for _ in range(12)]  # spread over the write threads
        writes = [
            store.append_later(sid, [_message(f"{sid} {i}")]) for i in range(10) for sid in sessions
        ]
        for w in writes:
            assert w is not None
            w.result()
        for sid in sessions:
            assert [e.message.text for e in store.entries(sid)] == [f"{sid} {i}" for i in range(10)]
    finally:
        store.close()


def test_a_later_write_is_refused_as_the_store_refuses_it(postgres_url: str) -> None:
    holder = lease.new_holder()
    store = PostgresStore(postgres_url)
    try:
        missing = store.append_later(new_id(), [_message("x")])
        assert missing is not None
        with pytest.raises(SessionNotFound):
            missing.result()
        store.register(Registration(holder))
        root = _session(store)
        store.acquire_lease(root, holder)
        with psycopg.connect(postgres_url, autocommit=True) as db:  # another holder takes it
            db.execute(
                "UPDATE sessions SET lease_token = 'taken', lease_pid = 1, lease_host = 'h' "
                "WHERE id = %s",
                (root,),
            )
        fenced = store.append_later(root, [_message("late")])
        assert fenced is not None
        with pytest.raises(LeaseLost):
            fenced.result()
        assert store.entries(root) == []
    finally:
        lease.retire(holder)
        store.close()


def test_closing_the_store_lets_the_writes_given_finish(postgres_url: str) -> None:
    store = PostgresStore(postgres_url)
    sid = _session(store)
    for i in range(50):
        store.append_later(sid, [_message(str(i))])
    store.close()
    reopened = PostgresStore(postgres_url)
    try:
        assert len(reopened.entries(sid)) == 50
    finally:
        reopened.close()


def test_sqlite_and_a_read_only_store_hand_nothing_over(postgres_url: str, tmp_path: Path) -> None:
    sqlite = SQLiteStore(tmp_path / "store.db")
    try:
        sid = _session(sqlite)
        assert sqlite.append_later(sid, [_message("x")]) is None
        assert sqlite.end_inputs_later(sid, ["i"], "completed", None) is None
    finally:
        sqlite.close()
    PostgresStore(postgres_url).close()  # laid out
    reader = PostgresStore(postgres_url, read_only=True)
    try:
        assert reader.append_later(new_id(), [_message("x")]) is None
        assert reader.end_inputs_later("s", ["i"], "completed", None) is None
    finally:
        reader.close()


async def test_later_writes_waits_for_every_write_and_what_follows_it(postgres_url: str) -> None:
    store = PostgresStore(postgres_url)
    try:
        sessions = [_session(store) for _ in range(6)]
        followed: list[str] = []
        for sid in sessions:
            write = store.append_later(sid, [_message("x")])
            assert write is not None
            asyncio.wrap_future(write.future).add_done_callback(lambda _, s=sid: followed.append(s))
        await store.later_writes()
        assert sorted(followed) == sorted(sessions)  # their callbacks ran before it returned
        assert all(len(store.entries(sid)) == 1 for sid in sessions)
    finally:
        store.close()
