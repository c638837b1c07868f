"""What only the SQLite store has: its file checked before it is opened, WAL, the
memory map, and the upgrades of its earlier schemas. The contract both stores keep
is tests/store/test_store.py."""

import json
import sqlite3

import msgspec
import pytest

from piagents.ai.messages import TextContent, UserMessage
from piagents.store.base import StoreError
from piagents.store.records import (
    CompactionEntry,
    MessageEntry,
    ModelChangeEntry,
    ProgramRecord,
    SessionRecord,
    entry_to_json,
    new_id,
    new_program_id,
)
from piagents.store.sqlite import BLOCK, MMAP_SIZE, SQLiteStore


@pytest.fixture
def store(tmp_path):
    s = SQLiteStore(tmp_path / "store.db")
    yield s
    s.close()


def test_a_file_that_is_not_sqlite_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "store.db"
    path.write_bytes(b"hello, I am a text file" * 10)
    before = path.read_bytes()
    with pytest.raises(StoreError, match="not an SQLite database"):
        SQLiteStore(path)
    assert path.read_bytes() == before


def test_a_foreign_sqlite_database_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "store.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE mine (x)")
    db.commit()
    db.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="another program"):
        SQLiteStore(path)
    assert path.read_bytes() == before


def test_a_corrupt_database_gives_a_clear_error(tmp_path):
    path = tmp_path / "store.db"
    s = SQLiteStore(path)
    s.create_session(SessionRecord(id="s", cwd="/"))
    s.close()
    data = bytearray(path.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)
    path.write_bytes(bytes(data))
    with pytest.raises(StoreError):
        s2 = SQLiteStore(path)
        s2.entries("s")
        s2.list_sessions()


def test_the_database_is_in_wal_mode(tmp_path):
    SQLiteStore(tmp_path / "store.db").close()
    db = sqlite3.connect(tmp_path / "store.db")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def _chain(n, start=0):
    return [MessageEntry(UserMessage.of(f"m{start + i}")) for i in range(n)]


def test_the_store_is_read_through_a_memory_map(store):
    assert store._db.execute("PRAGMA mmap_size").fetchone()[0] == MMAP_SIZE > 0


def test_a_session_made_in_a_batch_takes_its_appends_in_order(store):
    """A session the batch made starts at seq 0 without asking the table; the appends
    after its first one read where it is, in the same batch or later."""
    with store.batch():
        store.create_session(SessionRecord(id="new", cwd="/w"))
        store.append("new", _chain(2))
        store.append("new", _chain(1, start=2))
    store.append("new", _chain(1, start=3))
    with store.batch():
        store.create_session(SessionRecord(id="other", cwd="/w"))
        with pytest.raises(StoreError):
            store.create_session(SessionRecord(id="other", cwd="/w"))  # refused, caught
        store.append("other", _chain(1))

    assert [e.message.text for e in store.entries("new")] == ["m0", "m1", "m2", "m3"]
    assert [e.message.text for e in store.entries("other")] == ["m0"]


def test_a_store_from_the_first_schema_is_upgraded_in_place(tmp_path):
    path = tmp_path / "store.db"
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, cwd TEXT NOT NULL, name TEXT,"
        " model TEXT NOT NULL DEFAULT '', thinking TEXT NOT NULL DEFAULT 'off', owner_id TEXT,"
        " root_id TEXT, created INTEGER NOT NULL, updated INTEGER NOT NULL,"
        " meta TEXT NOT NULL DEFAULT '{}', lease_pid INTEGER, lease_host TEXT,"
        " lease_token TEXT, lease_started TEXT);"
        "INSERT INTO sessions (id, cwd, created, updated) VALUES ('old', '/w', 1, 1);"
        f"PRAGMA application_id = {0x70694147}; PRAGMA user_version = 1;"
    )
    db.close()
    store = SQLiteStore(path)
    try:
        assert store.get_session("old").cwd == "/w"
        store.append("old", [MessageEntry(UserMessage.of("hi"))])
        assert store.latest_requests(["old"])["old"][1] == "hi"
        assert store.inputs() == []
    finally:
        store.close()


def test_the_recency_index_of_an_earlier_store_is_made_one_of_roots_only(tmp_path):
    """Owned Agents are never listed by recency: their rows stay out of that index, so a
    spawn's commit and each of its appends write one page less."""
    path = tmp_path / "store.db"
    SQLiteStore(path).close()
    db = sqlite3.connect(path)
    db.executescript(  # as the schema before had it
        "DROP INDEX sessions_roots_updated; CREATE INDEX sessions_updated ON sessions(updated);"
    )
    db.close()
    store = SQLiteStore(path)
    try:
        store.create_session(SessionRecord(id="old", cwd="/w", created=1, updated=1))
        store.create_session(SessionRecord(id="new", cwd="/w", created=2, updated=2))
        store.create_session(
            SessionRecord(id="kid", cwd="/w", owner_id="old", root_id="old", created=3, updated=3)
        )
        assert [s.id for s in store.list_sessions(roots_only=True)] == ["new", "old"]
    finally:
        store.close()
    db = sqlite3.connect(path)
    indexes = {r[0]: r[1] for r in db.execute("SELECT name, sql FROM sqlite_master")}
    db.close()
    assert "sessions_updated" not in indexes
    assert indexes["sessions_roots_updated"].endswith("WHERE owner_id IS NULL")


def test_pi_style_entries_of_the_first_schema_are_recoded_and_packed(tmp_path):
    path = tmp_path / "store.db"
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, cwd TEXT NOT NULL, name TEXT,"
        " model TEXT NOT NULL DEFAULT '', thinking TEXT NOT NULL DEFAULT 'off', owner_id TEXT,"
        " root_id TEXT, created INTEGER NOT NULL, updated INTEGER NOT NULL,"
        " meta TEXT NOT NULL DEFAULT '{}', lease_pid INTEGER, lease_host TEXT,"
        " lease_token TEXT, lease_started TEXT);"
        "CREATE TABLE entries (session_id TEXT NOT NULL, seq INTEGER NOT NULL,"
        " entry_id TEXT NOT NULL, type TEXT NOT NULL, body TEXT NOT NULL,"
        " PRIMARY KEY (session_id, seq)) WITHOUT ROWID;"
        "INSERT INTO sessions (id, cwd, created, updated) VALUES ('old', '/w', 1, 1);"
        "INSERT INTO sessions (id, cwd, created, updated) VALUES ('broken', '/w', 1, 1);"
        f"PRAGMA application_id = {0x70694147}; PRAGMA user_version = 1;"
    )
    entries = [
        MessageEntry(UserMessage((TextContent(f"m{i}"),), 1000 + i), f"e{i}", None, 2000 + i)
        for i in range(BLOCK + 3)
    ]
    db.executemany(
        "INSERT INTO entries VALUES ('old', ?, ?, 'message', ?)",
        [(i, e.id, json.dumps(entry_to_json(e))) for i, e in enumerate(entries)],
    )
    db.execute("INSERT INTO entries VALUES ('broken', 0, 'x', 'message', '{not json')")
    db.commit()
    db.close()
    store = SQLiteStore(path)
    try:
        assert store.entries("old") == entries
        with pytest.raises(StoreError, match="session broken has an unreadable entry"):
            store.entries("broken")
    finally:
        store.close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 3
    assert db.execute("SELECT count(*) FROM entry_blocks").fetchone()[0] == 1
    # The unreadable body was kept as it was.
    assert db.execute("SELECT body FROM entries WHERE session_id = 'broken'").fetchone() == (
        "{not json",
    )


def test_a_store_of_the_second_schema_is_recoded_as_messagepack(tmp_path):
    path = tmp_path / "store.db"
    store = SQLiteStore(path)
    for sid in ("old", "broken"):
        store.create_session(SessionRecord(id=sid, cwd="/w"))
    comp = CompactionEntry("earlier", None, 10)
    entries = [*_chain(BLOCK + 3), ModelChangeEntry("openai", "gpt-5"), comp, *_chain(2)]
    store.append("old", entries)
    store.append("broken", _chain(BLOCK + 1))
    store.close()
    # Write it back as schema 2 left it: the same maps as JSON, blocks as JSON arrays.
    db = sqlite3.connect(path)
    for table, key in (("entries", "session_id, seq"), ("entry_blocks", "rowid")):
        for *ids, body in db.execute(f"SELECT {key}, body FROM {table} WHERE length(body) > 0"):
            as_json = msgspec.json.encode(msgspec.msgpack.decode(body))
            where = " AND ".join(f"{k.strip()} = ?" for k in key.split(","))
            db.execute(f"UPDATE {table} SET body = ? WHERE {where}", (as_json, *ids))
    db.execute("UPDATE entry_blocks SET body = '[{not json' WHERE session_id = 'broken'")
    db.execute("PRAGMA user_version = 2")
    db.commit()
    store = SQLiteStore(path)
    try:
        assert store.entries("old") == entries
        assert store.entries("old", from_last_compaction=True) == entries[-3:]
        with pytest.raises(StoreError, match="session broken has an unreadable entry"):
            store.entries("broken")
    finally:
        store.close()
    assert db.execute("PRAGMA user_version").fetchone()[0] == 3
    # The unreadable block was kept as it was.
    assert db.execute("SELECT body FROM entry_blocks WHERE session_id = 'broken'").fetchone() == (
        "[{not json",
    )


def test_programs_of_a_store_from_before_scopes_are_upgraded_and_read_as_scripts(
    tmp_path,
) -> None:
    path = tmp_path / "store.db"
    first = SQLiteStore(path)
    me = new_id()
    first.create_session(SessionRecord(id=me, cwd="/", name=None))
    old = ProgramRecord(id=new_program_id(), caller_id=me, root_id=me, code="return 1")
    first.close()
    db = sqlite3.connect(path)  # the programs table as it was, with a body without `kind`
    db.executescript(
        "DROP TABLE programs; CREATE TABLE programs (id TEXT PRIMARY KEY,"
        " caller_id TEXT NOT NULL, root_id TEXT NOT NULL, state TEXT NOT NULL,"
        " returned INTEGER NOT NULL DEFAULT 0, body BLOB NOT NULL);"
    )
    body = msgspec.json.encode({"id": old.id, "callerId": me, "rootId": me, "code": "return 1"})
    db.execute(
        "INSERT INTO programs (id, caller_id, root_id, state, body) VALUES (?,?,?,?,?)",
        (old.id, me, me, "running", body),
    )
    db.commit()
    db.close()
    again = SQLiteStore(path)
    try:
        assert again.get_program(old.id) == old
        assert [p.id for p in again.programs(me, kind="script")] == [old.id]
        assert again.programs(me, kind="scope") == []
        scope = ProgramRecord(id=new_program_id(), caller_id=me, root_id=me, code="", kind="scope")
        again.add_program(scope)
        assert [p.kind for p in again.programs(me)] == ["scope", "script"]
    finally:
        again.close()
