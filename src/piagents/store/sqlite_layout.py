"""How the SQLite store is laid out on disk: its schema, the upgrades of older
schemas, and the packing of entries into blocks."""

from __future__ import annotations

import json
import sqlite3

import msgspec

from piagents.store.records import (
    decode_json_entries,
    decode_json_entry,
    encode_entry,
    entries_array,
    entry_from_json,
)

# 'piAG': marks a database as ours, so a foreign SQLite file is never written to.
APPLICATION_ID = 0x70694147
SCHEMA_VERSION = 3
# Version 2: entry bodies in the records' own compact JSON (not Pi's), packed in blocks.
# Version 3: the same maps as MessagePack, blocks as MessagePack arrays.
# Indexes, tables and columns added since (sessions_owner_name, programs.kind, holders,
# generation_documents)
# need no new version: every writable opening runs `upgrade`, which creates what is
# missing, and an earlier pi-agents reads a store that has them as it is.

# Entries are appended one row each; every BLOCK of them is then packed into one
# `entry_blocks` row (a MessagePack array decoded in one call), which is what makes
# reopening a long session fast. Packed rows keep their id and type (compactions
# keep their body too) so the start of the context is still found by index.
BLOCK = 512

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    cwd TEXT NOT NULL,
    name TEXT,
    model TEXT NOT NULL DEFAULT '',
    thinking TEXT NOT NULL DEFAULT 'off',
    owner_id TEXT,
    root_id TEXT,
    created INTEGER NOT NULL,
    updated INTEGER NOT NULL,
    meta TEXT NOT NULL DEFAULT '{}',
    lease_pid INTEGER,
    lease_host TEXT,
    lease_token TEXT,
    lease_started TEXT,
    latest_request TEXT,
    latest_request_at INTEGER,
    state TEXT NOT NULL DEFAULT 'idle'
);
-- A sibling found by name (spawn's uniqueness check) without reading its siblings;
-- also every lookup by owner (an index of owner_id alone would only cost each spawn's
-- commit one more page).
CREATE INDEX IF NOT EXISTS sessions_owner_name ON sessions(owner_id, name);
CREATE INDEX IF NOT EXISTS sessions_root ON sessions(root_id);
-- Roots newest first (`continue`, the session list). An owned Agent's row stays out of
-- it, so a spawn's commit and each of its appends (which move `updated`) write no page
-- of it.
CREATE INDEX IF NOT EXISTS sessions_roots_updated ON sessions(updated) WHERE owner_id IS NULL;
CREATE TABLE IF NOT EXISTS entries (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    entry_id TEXT NOT NULL,
    type TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entries_id ON entries(session_id, entry_id);
CREATE TABLE IF NOT EXISTS entry_blocks (
    session_id TEXT NOT NULL,
    first_seq INTEGER NOT NULL,
    last_seq INTEGER NOT NULL,
    body BLOB NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS entry_blocks_seq ON entry_blocks(session_id, last_seq);
CREATE TABLE IF NOT EXISTS generations (
    id TEXT PRIMARY KEY,
    root_id TEXT NOT NULL,
    owner_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    state TEXT NOT NULL,
    ended INTEGER NOT NULL DEFAULT 0,
    seq INTEGER NOT NULL,
    body BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS generations_root ON generations(root_id, ended);
CREATE INDEX IF NOT EXISTS generations_owner ON generations(owner_id, ended);
CREATE INDEX IF NOT EXISTS generations_session ON generations(session_id);
CREATE TABLE IF NOT EXISTS inputs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    root_id TEXT NOT NULL,
    recipient_id TEXT NOT NULL,
    sender_id TEXT,
    kind TEXT NOT NULL,
    delivery TEXT NOT NULL,
    text TEXT NOT NULL,
    has_result INTEGER NOT NULL,
    status TEXT NOT NULL,
    result TEXT,
    read INTEGER NOT NULL DEFAULT 0,
    aborted_by_owner INTEGER NOT NULL DEFAULT 0,
    accepted INTEGER NOT NULL,
    ended INTEGER,
    delivered INTEGER NOT NULL DEFAULT 1,
    rendered TEXT
);
CREATE INDEX IF NOT EXISTS inputs_mailbox ON inputs(recipient_id) WHERE delivered = 0;
CREATE INDEX IF NOT EXISTS inputs_recipient ON inputs(recipient_id, seq);
CREATE INDEX IF NOT EXISTS inputs_open ON inputs(root_id, status) WHERE status = 'outstanding';
-- What `list` searches: user messages and compaction summaries, one row each.
CREATE TABLE IF NOT EXISTS search_docs (
    session_id TEXT NOT NULL,
    ts INTEGER NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS search_docs_session ON search_docs(session_id, ts);
CREATE INDEX IF NOT EXISTS entries_compaction ON entries(session_id, type, seq)
    WHERE type = 'compaction';
CREATE TABLE IF NOT EXISTS programs (
    id TEXT PRIMARY KEY,
    caller_id TEXT NOT NULL,
    root_id TEXT NOT NULL,
    state TEXT NOT NULL,
    returned INTEGER NOT NULL DEFAULT 0,
    body BLOB NOT NULL,
    kind TEXT NOT NULL DEFAULT 'script'
);
CREATE INDEX IF NOT EXISTS programs_caller ON programs(caller_id, id);
CREATE INDEX IF NOT EXISTS programs_running ON programs(caller_id) WHERE state = 'running';
-- Runtimes and workers whose heartbeats keep their leases alive (`pi-agents workers`).
CREATE TABLE IF NOT EXISTS holders (
    token TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    started TEXT NOT NULL DEFAULT '',
    kind TEXT NOT NULL DEFAULT 'runtime',
    capacity INTEGER,
    load INTEGER NOT NULL DEFAULT 0,
    heartbeat REAL NOT NULL,
    opened REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_lease ON sessions(lease_token) WHERE lease_token IS NOT NULL;
-- A generation's live evidence (JSON), replaced whole.
CREATE TABLE IF NOT EXISTS generation_documents (
    generation_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    written INTEGER NOT NULL,
    PRIMARY KEY (generation_id, kind)
);
CREATE TABLE IF NOT EXISTS program_values (
    session_id TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (session_id, key)
);
"""

# Columns added since the first schema, so older stores are upgraded in place.
_ADDED_COLUMNS: dict[str, list[tuple[str, str]]] = {
    "sessions": [
        ("latest_request", "TEXT"),
        ("latest_request_at", "INTEGER"),
        ("state", "TEXT NOT NULL DEFAULT 'idle'"),
    ],
    "inputs": [("delivered", "INTEGER NOT NULL DEFAULT 1"), ("rendered", "TEXT")],
    # Programs recorded before SDK scopes were: every one of them a script.
    "programs": [("kind", "TEXT NOT NULL DEFAULT 'script'")],
}


# Indexes an earlier schema had that another one now covers (an earlier pi-agents that
# opens the store makes them again, harmlessly).
_DROPPED_INDEXES = ("sessions_owner", "sessions_updated")


def create(db: sqlite3.Connection) -> None:
    """Lay out a new, empty store in one transaction."""
    db.executescript(
        "BEGIN IMMEDIATE;"
        + _SCHEMA
        + f"PRAGMA application_id = {APPLICATION_ID};"
        + f"PRAGMA user_version = {SCHEMA_VERSION};"
        + "COMMIT;"
    )


def upgrade(db: sqlite3.Connection) -> None:
    """Bring a store written by an earlier pi-agents up to this schema, in place
    (inside the caller's transaction)."""
    version = db.execute("PRAGMA user_version").fetchone()[0]
    for table, columns in _ADDED_COLUMNS.items():
        have = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
        if not have:
            continue  # created below
        for name, decl in columns:
            if name not in have:
                db.execute(f"ALTER TABLE {table} ADD COLUMN {name} {decl}")
    for statement in _SCHEMA.split(";"):
        if statement.strip():
            db.execute(statement)
    for index in _DROPPED_INDEXES:
        db.execute(f"DROP INDEX IF EXISTS {index}")
    if version < 2:
        recode_entries(db)
        for (session_id,) in db.execute("SELECT id FROM sessions").fetchall():
            pack(db, session_id, 0, next_seq(db, session_id))
    elif version < 3:
        recode_json_entries(db)
    if version < SCHEMA_VERSION:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def body_bytes(body: bytes | str) -> bytes:
    """A body as stored: bytes, or text where an unreadable older body was kept."""
    return body.encode() if isinstance(body, str) else body


def next_seq(db: sqlite3.Connection, session_id: str) -> int:
    last = db.execute("SELECT max(seq) FROM entries WHERE session_id = ?", (session_id,)).fetchone()
    return 0 if last[0] is None else int(last[0]) + 1


def positions(db: sqlite3.Connection, session_id: str) -> tuple[int, int]:
    """The session's next seq and the seq of its first entry not yet packed into a
    block, read in one statement (every append reads both, inside its transaction)."""
    row = db.execute(
        "SELECT (SELECT max(seq) FROM entries WHERE session_id = ?1), "
        "(SELECT max(last_seq) FROM entry_blocks WHERE session_id = ?1)",
        (session_id,),
    ).fetchone()
    return (0 if row[0] is None else int(row[0]) + 1, 0 if row[1] is None else int(row[1]) + 1)


def pack(db: sqlite3.Connection, session_id: str, start: int, end: int) -> int:
    """Pack the whole blocks of entries in [start, end) into `entry_blocks`; the new start."""
    while end - start >= BLOCK:
        stop = start + BLOCK
        bodies = db.execute(
            "SELECT body FROM entries WHERE session_id = ? AND seq >= ? AND seq < ? ORDER BY seq",
            (session_id, start, stop),
        ).fetchall()
        if len(bodies) != BLOCK or any(not b[0] for b in bodies):
            return start  # a gap or an already packed row: leave these entries loose
        db.execute(
            "INSERT INTO entry_blocks (session_id, first_seq, last_seq, body) VALUES (?,?,?,?)",
            (session_id, start, stop - 1, entries_array([body_bytes(b[0]) for b in bodies])),
        )
        db.execute(
            "UPDATE entries SET body = x'' "
            "WHERE session_id = ? AND seq >= ? AND seq < ? AND type != 'compaction'",
            (session_id, start, stop),
        )
        start = stop
    return start


def recode_entries(db: sqlite3.Connection) -> None:
    """Rewrite entry bodies from Pi's JSON form (schema 1) into the records' own form.

    A body that cannot be read is kept as it is, so nothing is lost: reading its
    session reports it.
    """
    rows = db.execute("SELECT session_id, seq, body FROM entries").fetchall()
    for session_id, seq, body in rows:
        try:
            recoded = encode_entry(entry_from_json(json.loads(body)))
        except (ValueError, KeyError, TypeError):
            continue
        db.execute(
            "UPDATE entries SET body = ? WHERE session_id = ? AND seq = ?",
            (recoded, session_id, seq),
        )


def recode_json_entries(db: sqlite3.Connection) -> None:
    """Rewrite entry bodies and blocks of schema 2 (JSON) as MessagePack.

    A body or block that cannot be read is kept as it is, so nothing is lost:
    reading its session reports it.
    """
    rows = db.execute("SELECT session_id, seq, body FROM entries WHERE length(body) > 0").fetchall()
    for session_id, seq, body in rows:
        try:
            recoded = encode_entry(decode_json_entry(body))
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue
        db.execute(
            "UPDATE entries SET body = ? WHERE session_id = ? AND seq = ?",
            (recoded, session_id, seq),
        )
    for rowid, body in db.execute("SELECT rowid, body FROM entry_blocks").fetchall():
        try:
            recoded = entries_array([encode_entry(e) for e in decode_json_entries(body)])
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue
        db.execute("UPDATE entry_blocks SET body = ? WHERE rowid = ?", (recoded, rowid))
