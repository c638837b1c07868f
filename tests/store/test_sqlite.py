import json
import os
import sqlite3
import subprocess
import sys

import pytest

from piagents.ai.messages import AssistantMessage, TextContent, UserMessage
from piagents.store import lease
from piagents.store.base import LeaseHolder, SessionInUse, StoreError
from piagents.store.records import (
    CompactionEntry,
    CustomEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionRecord,
    ThinkingLevelChangeEntry,
)
from piagents.store.sqlite import SQLiteStore


@pytest.fixture
def store(tmp_path):
    s = SQLiteStore(tmp_path / "store.db")
    yield s
    s.close()


def test_a_session_round_trips_with_all_its_fields(store):
    rec = SessionRecord(
        id="s1",
        cwd="/w",
        model="openai/gpt-5",
        thinking="high",
        name="n",
        owner_id="o",
        root_id="r",
        meta={"k": [1]},
    )
    store.create_session(rec)
    assert store.get_session("s1") == rec


def test_entries_of_every_kind_round_trip_in_order(store):
    store.create_session(SessionRecord(id="s", cwd="/"))
    entries = [
        MessageEntry(UserMessage.of("hi")),
        MessageEntry(AssistantMessage((TextContent("yo"),))),
        ModelChangeEntry("anthropic", "claude"),
        ThinkingLevelChangeEntry("low"),
        CustomEntry("x", {"a": 1}),
    ]
    store.append("s", entries[:2])
    store.append("s", entries[2:])
    assert store.entries("s") == entries


def test_loading_from_the_last_compaction_starts_at_its_first_kept_entry(store):
    store.create_session(SessionRecord(id="s", cwd="/"))
    old = [MessageEntry(UserMessage.of(f"m{i}")) for i in range(5)]
    store.append("s", old)
    comp = CompactionEntry("sum", old[3].id, 100)
    later = MessageEntry(UserMessage.of("after"))
    store.append("s", [comp, later])
    assert store.entries("s", from_last_compaction=True) == [old[3], old[4], comp, later]


def test_appending_updates_the_session_time(store):
    store.create_session(SessionRecord(id="s", cwd="/", updated=1))
    e = MessageEntry(UserMessage.of("hi"))
    store.append("s", [e])
    assert store.get_session("s").updated == e.timestamp


def test_nothing_of_a_failed_append_is_visible(store):
    store.create_session(SessionRecord(id="s", cwd="/"))
    e = MessageEntry(UserMessage.of("hi"))
    with pytest.raises(StoreError):
        store.append("missing-session", [e])
    assert store.entries("missing-session") == []


def test_sessions_list_newest_first_and_filter_by_cwd_and_roots(store):
    store.create_session(SessionRecord(id="a", cwd="/x", updated=1))
    store.create_session(SessionRecord(id="b", cwd="/x", updated=3))
    store.create_session(SessionRecord(id="c", cwd="/y", updated=2, owner_id="a", root_id="a"))
    assert [r.id for r in store.list_sessions()] == ["b", "c", "a"]
    assert [r.id for r in store.list_sessions(cwd="/x")] == ["b", "a"]
    assert [r.id for r in store.list_sessions(roots_only=True)] == ["b", "a"]


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


def test_a_live_lease_holder_is_named_in_the_error(store):
    store.create_session(SessionRecord(id="s", cwd="/"))
    first, second = lease.new_holder(), lease.new_holder()
    try:
        store.acquire_lease("s", first)
        with pytest.raises(SessionInUse) as info:
            store.acquire_lease("s", second)
        assert f"pid {os.getpid()}" in str(info.value)
        assert first.host in str(info.value)
    finally:
        lease.retire(first)
        lease.retire(second)


def test_a_lease_of_a_closed_runtime_is_taken_over(store):
    store.create_session(SessionRecord(id="s", cwd="/"))
    first, second = lease.new_holder(), lease.new_holder()
    store.acquire_lease("s", first)
    lease.retire(first)
    store.acquire_lease("s", second)
    assert store.lease_of("s") == second
    lease.retire(second)


def test_a_lease_of_a_dead_process_is_taken_over(store, tmp_path):
    store.create_session(SessionRecord(id="s", cwd="/"))
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    dead = LeaseHolder(proc.pid, lease.new_holder().host, "t", "1")
    store.acquire_lease("s", dead)
    mine = lease.new_holder()
    store.acquire_lease("s", mine)
    assert store.lease_of("s") == mine
    lease.retire(mine)


def test_a_lease_held_by_another_live_process_is_refused(store, tmp_path):
    store.create_session(SessionRecord(id="s", cwd="/"))
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        other = LeaseHolder(
            proc.pid, lease.new_holder().host, "t", lease.process_start_time(proc.pid)
        )
        store.acquire_lease("s", other)
        with pytest.raises(SessionInUse, match=f"pid {proc.pid}"):
            store.acquire_lease("s", lease.new_holder())
    finally:
        proc.kill()
        proc.wait()


def test_entries_are_stored_as_pi_style_json(store, tmp_path):
    store.create_session(SessionRecord(id="s", cwd="/"))
    store.append("s", [MessageEntry(UserMessage.of("hi"))])
    db = sqlite3.connect(tmp_path / "store.db")
    body = json.loads(db.execute("SELECT body FROM entries").fetchone()[0])
    assert body["type"] == "message"
    assert body["message"] == {
        "role": "user",
        "content": [{"type": "text", "text": "hi"}],
        "timestamp": body["message"]["timestamp"],
    }


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
