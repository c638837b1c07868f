"""The SQLite store's leases on a store made before heartbeats: read as they are when
opened read-only (by their process alone), and given the registry when opened to write."""

from __future__ import annotations

import socket
import sqlite3

import pytest

from piagents.store.base import LeaseHolder
from piagents.store.sqlite import SQLiteStore


def test_a_store_made_before_the_registry_is_read_without_it_and_gets_it_when_written(
    tmp_path,
) -> None:
    path = tmp_path / "store.db"
    SQLiteStore(path).close()
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE holders")
        db.execute(
            "INSERT INTO sessions (id, cwd, created, updated, lease_pid, lease_host, "
            "lease_token, lease_started) VALUES ('s', '/', 1, 1, 1, ?, 'old', '')",
            (socket.gethostname(),),
        )
    reader = SQLiteStore(path, read_only=True)
    try:
        assert reader.workers() == []
        # pid 1 lives (init) and its start time was not recorded: its process decides.
        assert reader.lease_of("s") == LeaseHolder(1, socket.gethostname(), "old", "")
        assert reader.states(["s"]) == {"s": "idle"}
    finally:
        reader.close()
    SQLiteStore(path).close()  # a writable opening lays out what is missing
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT 1 FROM sqlite_master WHERE name = 'holders'").fetchall() == [(1,)]


def _fence_reads(store: SQLiteStore) -> list[str]:
    """The statements that look for a lease lost, as the store runs them from now on."""
    seen: list[str] = []
    store._db.set_trace_callback(
        lambda sql: seen.append(sql) if "lease_token IS NOT" in sql else None
    )
    return seen


def test_a_holder_reads_its_leases_again_only_once_the_database_changed_under_it(
    tmp_path,
) -> None:
    from piagents.ai.messages import UserMessage
    from piagents.store import lease
    from piagents.store.base import LeaseLost, Registration
    from piagents.store.records import MessageEntry, SessionRecord

    path = tmp_path / "store.db"
    holder, other = lease.new_holder(), lease.new_holder()
    mine, theirs = SQLiteStore(path), SQLiteStore(path, lease_lapse=0.0)
    try:
        mine.register(Registration(holder))
        for sid in ("root", "peer"):
            mine.create_session(SessionRecord(id=sid, cwd="/", created=1, updated=1))
            mine.acquire_lease(sid, holder)
        reads = _fence_reads(mine)
        entry = MessageEntry(UserMessage.of("hi"))
        mine.append("root", [entry])
        assert len(reads) == 1  # its first write looks
        mine.append("root", [entry])
        mine.set_state("root", "running")
        assert len(reads) == 1  # nothing changed since: no one else could take a lease
        theirs.create_session(SessionRecord(id="x", cwd="/", created=1, updated=1))
        mine.append("root", [entry])
        assert len(reads) == 2  # another connection committed: it looks again
        with pytest.raises(ValueError), mine._conn.tx():
            mine.append("root", [entry])
            raise ValueError("undone")
        mine.append("root", [entry])
        assert len(reads) == 3  # a write undone may have undone a lease: it looks again
        # Another holder takes one over: the next write to that tree is refused.
        theirs.register(Registration(other))
        theirs.acquire_lease("peer", other)  # lapse 0: mine counts as lapsed to it
        with pytest.raises(LeaseLost):
            mine.append("peer", [entry])
        mine.append("root", [entry])  # the tree it still holds takes its writes
        assert len(mine.entries("root")) == 5 and mine.entries("peer") == []
    finally:
        mine.close(), theirs.close()
        lease.retire(holder), lease.retire(other)
