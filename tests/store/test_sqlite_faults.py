"""The SQLite store under faults: a full disk, a lock held elsewhere, read-only,
damaged and misplaced files. Each is a typed StoreError naming the path and the
cause, never a raw sqlite3 error; nothing of a failed write is kept, and the
store works again once the fault is gone."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from piagents.ai.messages import UserMessage
from piagents.store import lease
from piagents.store.base import (
    StoreBusy,
    StoreDamaged,
    StoreError,
    StoreFull,
    StoreIncompatible,
    StoreNotFound,
    StoreReadOnly,
    StoreUnavailable,
)
from piagents.store.records import GenerationRecord, InputRecord, MessageEntry, SessionRecord
from piagents.store.sqlite import SQLiteStore

LIMIT = 1 << 20  # the store's size limit in these tests: 1 MiB


def named(path: Path) -> str:
    return re.escape(str(path))


def fill(path: Path) -> sqlite3.Connection:
    """Another connection grows the database past LIMIT (it has no limit of its own);
    dropping its table frees the space again."""
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("CREATE TABLE filler (b BLOB)")
    other.execute("INSERT INTO filler VALUES (randomblob(?))", (LIMIT + (64 << 10),))
    return other


def big_entry() -> MessageEntry:
    return MessageEntry(UserMessage.of("x" * 20_000))  # needs pages of its own


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "store.db"


def test_a_full_store_refuses_a_write_keeps_nothing_of_it_and_works_once_space_is_freed(
    path: Path,
) -> None:
    store = SQLiteStore(path, max_bytes=LIMIT)
    store.create_session(SessionRecord(id="s", cwd="/"))
    other = fill(path)
    entry = big_entry()

    with pytest.raises(StoreFull, match=f"{named(path)}.*full"):
        store.append("s", [entry])
    assert store.entries("s") == []

    other.execute("DROP TABLE filler")
    store.append("s", [entry])
    assert store.entries("s") == [entry]
    store.close()


def test_a_store_that_cannot_be_laid_out_for_want_of_space_is_store_full(path: Path) -> None:
    with pytest.raises(StoreFull, match=f"{named(path)}.*the disk is full"):
        SQLiteStore(path, max_bytes=4096)  # one page: the schema needs more


def _writes(store: SQLiteStore) -> dict[str, Callable[[], object]]:
    """One call of every kind of write the store makes."""
    holder = lease.new_holder()
    inp = InputRecord(
        id="i1",
        root_id="s",
        recipient_id="s",
        sender_id=None,
        kind="input",
        delivery="followUp",
        text="hi",
        has_result=False,
        status="outstanding",
    )
    gen = GenerationRecord(
        id="g1",
        label="w",
        definition="d",
        root_id="s",
        owner_id="s",
        session_id="s",
        cwd="/",
        task="t",
        placement="inline",
    )
    return {
        "create_session": lambda: store.create_session(SessionRecord(id="t", cwd="/")),
        "update_session": lambda: store.update_session("s", name="n"),
        "append": lambda: store.append("s", [MessageEntry(UserMessage.of("hi"))]),
        "add_input": lambda: store.add_input(inp),
        "end_inputs": lambda: store.end_inputs(["i0"], "completed", "done"),
        "take_undelivered": lambda: store.take_undelivered(["s"]),
        "mark_read": lambda: store.mark_read(["i0"]),
        "set_state": lambda: store.set_state("s", "running"),
        "acquire_lease": lambda: store.acquire_lease("s", holder),
        "release_lease": lambda: store.release_lease("s", holder),
        "add_generation": lambda: store.add_generation(gen),
        "update_generation": lambda: store.update_generation(gen),
    }


WRITES = [
    "create_session",
    "update_session",
    "append",
    "add_input",
    "end_inputs",
    "take_undelivered",
    "mark_read",
    "set_state",
    "acquire_lease",
    "release_lease",
    "add_generation",
    "update_generation",
]


@pytest.mark.parametrize("write", WRITES)
def test_every_write_while_another_process_holds_the_lock_is_store_busy(
    path: Path, write: str
) -> None:
    store = SQLiteStore(path, busy_timeout=0.05)
    store.create_session(SessionRecord(id="s", cwd="/"))
    store.add_input(
        InputRecord(
            id="i0",
            root_id="s",
            recipient_id="s",
            sender_id=None,
            kind="input",
            delivery="followUp",
            text="x",
            has_result=False,
            status="outstanding",
        )
    )
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")

    with pytest.raises(StoreBusy, match=f"{named(path)}.*locked by another process"):
        _writes(store)[write]()

    other.execute("ROLLBACK")
    _writes(store)[write]()  # works again once the lock is released
    store.close()


def test_a_read_only_store_file_refuses_writes_as_read_only(
    path: Path, make_read_only: Callable[[Path], None]
) -> None:
    SQLiteStore(path).close()
    make_read_only(path)
    store = SQLiteStore(path)
    with pytest.raises(StoreReadOnly, match=f"{named(path)}.*read-only"):
        store.create_session(SessionRecord(id="s", cwd="/"))
    assert store.list_sessions() == []
    store.close()


def test_a_store_in_a_read_only_home_names_the_home_and_can_still_be_read(
    tmp_path: Path, make_read_only: Callable[[Path], None]
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    path = home / "store.db"
    store = SQLiteStore(path)
    store.create_session(SessionRecord(id="s", cwd="/"))
    store.close()
    make_read_only(home)

    with pytest.raises(StoreReadOnly, match=f"cannot write in {named(home)}") as info:
        SQLiteStore(path)
    assert "not a usable" not in str(info.value)
    reader = SQLiteStore(path, read_only=True)
    assert [r.id for r in reader.list_sessions()] == ["s"]
    with pytest.raises(StoreReadOnly):
        reader.set_state("s", "running")
    reader.close()


def test_a_store_opened_read_only_is_never_written(path: Path) -> None:
    store = SQLiteStore(path)
    store.create_session(SessionRecord(id="s", cwd="/"))
    store.close()
    before = path.read_bytes()
    reader = SQLiteStore(path, read_only=True)
    with pytest.raises(StoreReadOnly, match=named(path)):
        reader.append("s", [MessageEntry(UserMessage.of("hi"))])
    reader.close()
    assert path.read_bytes() == before


def _damage_the_sessions_table(path: Path) -> None:
    """Overwrite the root page of `sessions`, an interior page once it has many rows."""
    store = SQLiteStore(path)
    for i in range(400):
        store.create_session(SessionRecord(id=f"s{i:04}", cwd="/" + "w" * 200))
    store.close()
    with sqlite3.connect(path) as db:
        (root,) = db.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'sessions'"
        ).fetchone()
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
    db.close()
    data = bytearray(path.read_bytes())
    start = (root - 1) * page_size
    data[start : start + page_size] = b"\xff" * page_size
    path.write_bytes(bytes(data))


def test_a_damaged_interior_page_is_store_damaged_on_reads_and_writes(path: Path) -> None:
    _damage_the_sessions_table(path)
    store = SQLiteStore(path)
    with pytest.raises(StoreDamaged, match=f"{named(path)}.*malformed"):
        store.list_sessions()
    with pytest.raises(StoreDamaged, match=f"{named(path)}.*malformed"):
        store.create_session(SessionRecord(id="new", cwd="/"))
    store.close()


def test_a_store_path_that_is_a_directory_is_a_clear_error(path: Path) -> None:
    path.mkdir()
    with pytest.raises(StoreUnavailable, match=f"{named(path)} is a directory"):
        SQLiteStore(path)


def test_a_home_that_is_a_regular_file_is_a_clear_error(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.write_text("not a directory")
    with pytest.raises(StoreUnavailable, match=f"{named(home)} is not a directory"):
        SQLiteStore(home / "store.db")
    assert home.read_text() == "not a directory"


def test_a_home_that_cannot_be_created_is_a_clear_error(
    tmp_path: Path, make_read_only: Callable[[Path], None]
) -> None:
    parent = tmp_path / "locked"
    parent.mkdir()
    make_read_only(parent)
    home = parent / "home"
    with pytest.raises(StoreError, match=f"cannot create {named(home)}"):
        SQLiteStore(home / "store.db")


def test_a_store_of_a_newer_schema_is_refused_before_anything_is_written(path: Path) -> None:
    SQLiteStore(path).close()
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE search_docs")  # what a newer schema might have done
        db.execute("PRAGMA user_version = 99")
    db.close()
    before = path.read_bytes()

    with pytest.raises(StoreIncompatible, match=f"{named(path)}.*newer pi-agents"):
        SQLiteStore(path)

    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["store.db"]


def test_a_store_of_an_earlier_schema_opened_read_only_is_upgraded_then_read(path: Path) -> None:
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

    reader = SQLiteStore(path, read_only=True)

    assert [r.id for r in reader.list_sessions()] == ["old"]
    assert reader.entries("old") == []
    with pytest.raises(StoreReadOnly):
        reader.set_state("old", "running")
    reader.close()


def test_opening_read_only_where_there_is_no_store_creates_nothing(tmp_path: Path) -> None:
    with pytest.raises(StoreNotFound, match=named(tmp_path / "home" / "store.db")):
        SQLiteStore(tmp_path / "home" / "store.db", read_only=True)
    assert not (tmp_path / "home").exists()
