"""The write-ahead log is checkpointed by a thread of its own, never inside a commit."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from piagents.store import sqlite_checkpoint
from piagents.store.records import SessionRecord
from piagents.store.sqlite import SQLiteStore
from piagents.store.sqlite_checkpoint import Checkpointer
from piagents.store.sqlite_connection import Connection
from support import eventually


def wal_database(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE t (x)")
    return db


def commit(conn: Connection, x: int) -> None:
    with conn.tx() as db:
        db.execute("INSERT INTO t VALUES (?)", (x,))


def checkpoint_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "piagents-checkpoint"]


def test_the_store_connection_does_not_checkpoint_on_commit(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "store.db")
    try:
        assert store._db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
    finally:
        store.close()
    read_only = SQLiteStore(tmp_path / "store.db", read_only=True)
    try:
        assert read_only._db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 1000
    finally:
        read_only.close()


def test_every_so_many_commits_a_thread_checkpoints_and_close_stops_it(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    db = wal_database(path)
    checkpointer = Checkpointer(path, db, every=5)
    conn = Connection(path, db, busy_timeout=1.0, checkpointer=checkpointer)
    for x in range(4):
        commit(conn, x)
    assert checkpoint_threads() == []  # nothing to do yet, no thread
    commit(conn, 4)
    eventually(lambda: checkpointer.checkpoints == 1, "the first checkpoint")
    for x in range(5):
        commit(conn, x)
    eventually(lambda: checkpointer.checkpoints == 2, "the second checkpoint")
    assert len(checkpoint_threads()) == 1
    conn.close()
    assert checkpoint_threads() == []
    assert not Path(f"{path}-wal").exists()  # the last connection checkpointed it all


def test_without_a_thread_connection_the_store_checkpoints_itself_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object, **kwargs: object) -> sqlite3.Connection:
        raise sqlite3.OperationalError("unable to open database file")

    path = tmp_path / "t.db"
    db = wal_database(path)
    conn = Connection(path, db, busy_timeout=1.0, checkpointer=Checkpointer(path, db, every=2))
    monkeypatch.setattr(sqlite_checkpoint.sqlite3, "connect", refuse)
    state = {"x": 0}

    def restored() -> bool:
        state["x"] += 1
        commit(conn, state["x"])
        return db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 1000

    eventually(restored, "SQLite's own checkpoints back on")
    conn.close()


def test_a_store_written_past_a_checkpoint_reads_back_whole(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "store.db")
    for i in range(sqlite_checkpoint.CHECKPOINT_EVERY * 2 + 1):
        store.create_session(SessionRecord(id=f"s{i}", cwd="/", name=f"n{i}"))
    store.close()
    again = SQLiteStore(tmp_path / "store.db", read_only=True)
    try:
        assert again.get_session("s400").name == "n400"
    finally:
        again.close()


def test_the_log_starts_over_while_the_writer_keeps_committing(tmp_path: Path) -> None:
    """A checkpoint beside a busy writer cannot copy the frames committed meanwhile (here:
    those a reader's snapshot does not see yet); the writer finishes it at its next
    commit, so the log is reused from its start instead of growing with every commit."""
    path = tmp_path / "t.db"
    db = wal_database(path)
    checkpointer = Checkpointer(path, db, every=5)
    conn = Connection(path, db, busy_timeout=1.0, checkpointer=checkpointer)
    row = b"x" * 8192  # three pages a commit

    def write(n: int) -> None:
        for _ in range(n):
            with conn.tx() as tx:
                tx.execute("INSERT INTO t VALUES (?)", (row,))

    reader = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    for done in range(1, 21):
        write(4)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM t").fetchall()  # holds a snapshot of 4
        write(1)
        eventually(lambda done=done: checkpointer.checkpoints == done, "the thread's checkpoint")
        reader.execute("COMMIT")
    write(1)
    reader.close()
    assert checkpointer.finished == 20
    size = Path(f"{path}-wal").stat().st_size
    one_round = 6 * 3 * 4096 * 1.5  # six commits of three pages, with headroom
    assert size < one_round * 2, f"the log holds {size} bytes after 101 commits"
    conn.close()
