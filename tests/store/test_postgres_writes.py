"""The PostgreSQL store's write thread (`append_later`, `end_inputs_later`): writes
committed in the order given, on a connection of its own, with the same refusals
as the store's own calls; closing the store lets the writes given finish. The
writes waiting together commit as one group (one transaction, one round trip), each
with the outcome it has alone. The SQLite store commits on the caller's thread and
hands nothing over."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psycopg
import pytest

from piagents.ai.messages import UserMessage
from piagents.store import lease, postgres_open
from piagents.store.base import LeaseLost, Registration, SessionNotFound, StoreError
from piagents.store.postgres import PostgresStore
from piagents.store.postgres_connection import NOT_SAVED, Connection, Statement
from piagents.store.postgres_entries import EntryLog
from piagents.store.postgres_inputs import InputTable
from piagents.store.records import InputRecord, MessageEntry, SessionRecord, new_id
from piagents.store.sqlite import SQLiteStore
from piagents.store.url import location_of
from piagents.store.write_thread import LaterWrite, Write, WriteThread


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


# ---- group commit: the writes waiting for a thread, in one transaction ----------------


class Groups:
    """A write thread over the store's database as the store makes it, its groups seen."""

    def __init__(self, url: str) -> None:
        self.store = PostgresStore(url)  # lays the database out; makes the sessions
        location = location_of(url)
        self.conn = Connection(
            location, lambda: postgres_open.connect(url, location, read_only=False)
        )
        self.sizes: list[int] = []

        def group(conn: Connection, parts: Sequence[Any]) -> Sequence[Any]:
            self.sizes.append(len(parts))
            return conn.write_group(parts)

        self.threads: WriteThread[Connection] = WriteThread(
            lambda: self.conn, Connection.close, "test-groups", group=group
        )
        self.entries, self.inputs = EntryLog(self.conn), InputTable(self.conn)
        self.gate = threading.Event()

    def hold(self) -> None:
        """Keep the thread busy until `release`: the writes given meanwhile wait together.
        Returns once the thread runs the held write: writes given before that could be
        taken in one batch with it, and would then commit as a group of their own."""
        running = threading.Event()

        def held(_: Connection) -> bool:
            running.set()
            return self.gate.wait(10)

        self.threads.submit("k", held, lambda _: None)
        assert running.wait(10)

    def release(self) -> None:
        self.gate.set()

    def append(self, sid: str, text: str) -> LaterWrite[int | None]:
        write = self.entries.append_write(sid, [_message(text)])
        assert write is not None
        return self.threads.submit("k", write, lambda base: self.entries.settle_append(sid, base))

    def close(self) -> None:
        self.threads.close()
        self.store.close()


def test_the_writes_waiting_together_commit_as_one_group(postgres_url: str) -> None:
    g = Groups(postgres_url)
    try:
        root = _session(g.store)
        children = [_session(g.store, owner_id=root, root_id=root) for _ in range(4)]
        given = [g.store.add_input(_input(root, c, root)) for c in children]
        g.hold()
        appends = [g.append(c, f"to {c}") for c in children for _ in range(2)]
        ends = []
        for c, accepted in zip(children, given, strict=True):
            end = g.inputs.end_write([accepted.id], "completed", f"done {c}")
            assert end is not None
            ends.append(g.threads.submit("k", end, lambda records: records))
        g.release()
        for write in appends:
            write.result()
        assert [[(r.id, r.result) for r in end.result()] for end in ends] == [
            [(accepted.id, f"done {c}")] for c, accepted in zip(children, given, strict=True)
        ]
        assert g.sizes == [12]  # eight appends and four ends, one round trip
        for c in children:
            assert [e.message.text for e in g.store.entries(c)] == [f"to {c}"] * 2
    finally:
        g.close()


def test_a_part_that_changed_nothing_is_refused_alone_and_the_others_commit(
    postgres_url: str,
) -> None:
    g = Groups(postgres_url)
    try:
        sid = _session(g.store)
        root = _session(g.store)
        child = _session(g.store, owner_id=root, root_id=root)
        ended = g.store.add_input(_input(root, child, root))
        g.store.end_inputs([ended.id], "completed", "first")
        g.hold()
        good, missing = g.append(sid, "kept"), g.append(new_id(), "nowhere")
        end = g.inputs.end_write([ended.id], "failed", "twice")
        assert end is not None
        again = g.threads.submit("k", end, lambda records: records)
        g.release()
        good.result()
        with pytest.raises(SessionNotFound):
            missing.result()
        assert again.result() == []  # an input ends once, in a group too
        assert [e.message.text for e in g.store.entries(sid)] == ["kept"]
    finally:
        g.close()


def test_a_group_whose_transaction_failed_is_written_again_one_by_one(postgres_url: str) -> None:
    g = Groups(postgres_url)
    try:
        sid = _session(g.store)
        g.hold()
        first = g.append(sid, "one")
        broken = g.threads.submit(
            "k",
            Write(
                lambda conn: conn.write(lambda db: db.execute("SELECT 1 / 0"), single=True),
                Statement("SELECT 1 / 0", (), lambda cursor: None, lambda db: NOT_SAVED),
                lambda conn, value: value,
            ),
            lambda _: None,
        )
        second = g.append(sid, "two")
        g.release()
        first.result()
        second.result()
        with pytest.raises(StoreError, match="division by zero"):
            broken.result()
        assert g.sizes == [3]
        assert [e.message.text for e in g.store.entries(sid)] == ["one", "two"]  # once each
    finally:
        g.close()


def test_a_group_whose_connection_was_lost_is_saved_once(postgres_url: str) -> None:
    g = Groups(postgres_url)
    try:
        sessions = [_session(g.store) for _ in range(3)]
        g.hold()
        with psycopg.connect(postgres_url, autocommit=True) as admin:  # the server drops it
            admin.execute("SELECT pg_terminate_backend(%s)", (g.conn.db.info.backend_pid,))
        appends = [g.append(sid, "once") for sid in sessions]
        g.release()
        for write in appends:
            write.result()
        assert g.sizes == [3]
        for sid in sessions:
            assert [e.message.text for e in g.store.entries(sid)] == ["once"]
    finally:
        g.close()
