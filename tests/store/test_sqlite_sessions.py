"""A sibling found by name is answered by an index whatever the number of siblings
(SQLite's plan; what the lookup answers, on every store: test_store_sessions.py)."""

import sqlite3

import pytest

from piagents.store.records import SessionRecord
from piagents.store.sqlite import SQLiteStore


@pytest.fixture
def path(tmp_path):
    return tmp_path / "store.db"


@pytest.fixture
def store(path):
    s = SQLiteStore(path)
    yield s
    s.close()


def child(i, name, owner="r", **extra):
    return SessionRecord(id=f"c{i}", cwd="/", name=name, owner_id=owner, root_id="r", **extra)


def test_the_lookup_reads_an_index_not_the_siblings(store):
    for i in range(50):
        store.create_session(child(i, f"w{i}"))
    plan = store._db.execute(
        "EXPLAIN QUERY PLAN SELECT id FROM sessions WHERE owner_id = ? AND name = ?",
        ("r", "w7"),
    ).fetchall()
    assert "USING INDEX sessions_owner_name" in " ".join(str(row[-1]) for row in plan)


def test_a_store_made_before_the_index_gets_it_when_opened_and_is_read_without_it(path):
    SQLiteStore(path).close()
    with sqlite3.connect(path) as db:
        db.execute("DROP INDEX sessions_owner_name")
        db.execute(
            "INSERT INTO sessions (id, cwd, name, owner_id, root_id, created, updated) "
            "VALUES ('c1', '/', 'w1', 'r', 'r', 1, 1)"
        )

    reader = SQLiteStore(path, read_only=True)  # reads as it is: no index, same answer
    assert reader.session_named("r", "w1").id == "c1"
    reader.close()
    with sqlite3.connect(path) as db:
        assert not db.execute(
            "SELECT 1 FROM sqlite_master WHERE name = 'sessions_owner_name'"
        ).fetchall()

    SQLiteStore(path).close()  # a writable opening lays out what is missing
    with sqlite3.connect(path) as db:
        assert db.execute(
            "SELECT 1 FROM sqlite_master WHERE name = 'sessions_owner_name'"
        ).fetchall() == [(1,)]
