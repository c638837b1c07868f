"""How the PostgreSQL store is laid out: the tables (the SQLite store's, in
PostgreSQL's types), the schema version table, the steps that bring an earlier
layout up to this one, and the packing of entries into blocks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from piagents.store.records import entries_array
from piagents.store.sqlite_layout import BLOCK

Db = Any  # a psycopg connection inside a transaction

VERSION_TABLE = "piagents_schema"
"""One row: the layout's version. A database with it is a pi-agents store."""

# Each step brings a store of the version before it (its index) to its own
# version (its index + 1); a new store runs them all. A later pi-agents appends
# steps, never changes one.
STEPS: list[Sequence[str]] = [
    (
        f"CREATE TABLE {VERSION_TABLE} (version INTEGER NOT NULL)",
        f"INSERT INTO {VERSION_TABLE} (version) VALUES (0)",
        """CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            cwd TEXT NOT NULL,
            name TEXT,
            model TEXT NOT NULL DEFAULT '',
            thinking TEXT NOT NULL DEFAULT 'off',
            owner_id TEXT,
            root_id TEXT,
            created BIGINT NOT NULL,
            updated BIGINT NOT NULL,
            meta TEXT NOT NULL DEFAULT '{}',
            lease_pid INTEGER,
            lease_host TEXT,
            lease_token TEXT,
            lease_started TEXT,
            latest_request TEXT,
            latest_request_at BIGINT,
            state TEXT NOT NULL DEFAULT 'idle',
            seq BIGINT GENERATED ALWAYS AS IDENTITY,
            -- The seq of the session's next entry, and of its first not yet packed.
            next_seq INTEGER NOT NULL DEFAULT 0,
            packed_seq INTEGER NOT NULL DEFAULT 0
        )""",
        "CREATE INDEX sessions_owner_name ON sessions (owner_id, name)",
        "CREATE INDEX sessions_root ON sessions (root_id)",
        "CREATE INDEX sessions_updated ON sessions (updated)",
        """CREATE TABLE entries (
            session_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            entry_id TEXT NOT NULL,
            type TEXT NOT NULL,
            body BYTEA NOT NULL,
            PRIMARY KEY (session_id, seq)
        )""",
        "CREATE INDEX entries_id ON entries (session_id, entry_id)",
        "CREATE INDEX entries_compaction ON entries (session_id, seq) WHERE type = 'compaction'",
        """CREATE TABLE entry_blocks (
            session_id TEXT NOT NULL,
            first_seq INTEGER NOT NULL,
            last_seq INTEGER NOT NULL,
            body BYTEA NOT NULL,
            PRIMARY KEY (session_id, last_seq)
        )""",
        """CREATE TABLE generations (
            id TEXT PRIMARY KEY,
            root_id TEXT NOT NULL,
            owner_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            state TEXT NOT NULL,
            ended BOOLEAN NOT NULL DEFAULT false,
            seq BIGINT GENERATED ALWAYS AS IDENTITY,
            body BYTEA NOT NULL
        )""",
        "CREATE INDEX generations_root ON generations (root_id, ended)",
        "CREATE INDEX generations_owner ON generations (owner_id, ended)",
        "CREATE INDEX generations_session ON generations (session_id)",
        """CREATE TABLE inputs (
            seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            root_id TEXT NOT NULL,
            recipient_id TEXT NOT NULL,
            sender_id TEXT,
            kind TEXT NOT NULL,
            delivery TEXT NOT NULL,
            text TEXT NOT NULL,
            has_result BOOLEAN NOT NULL,
            status TEXT NOT NULL,
            result TEXT,
            read BOOLEAN NOT NULL DEFAULT false,
            aborted_by_owner BOOLEAN NOT NULL DEFAULT false,
            accepted BIGINT NOT NULL,
            ended BIGINT,
            delivered BOOLEAN NOT NULL DEFAULT true,
            rendered TEXT,
            taken_by TEXT
        )""",
        "CREATE INDEX inputs_mailbox ON inputs (recipient_id) WHERE NOT delivered",
        "CREATE INDEX inputs_recipient ON inputs (recipient_id, seq)",
        "CREATE INDEX inputs_open ON inputs (root_id) WHERE status = 'outstanding'",
        "CREATE INDEX inputs_sender ON inputs (sender_id)",
        "CREATE INDEX inputs_taken ON inputs (taken_by) WHERE taken_by IS NOT NULL",
        """CREATE TABLE search_docs (
            session_id TEXT NOT NULL,
            ts BIGINT NOT NULL,
            text TEXT NOT NULL
        )""",
        "CREATE INDEX search_docs_session ON search_docs (session_id, ts)",
        """CREATE TABLE programs (
            id TEXT PRIMARY KEY,
            caller_id TEXT NOT NULL,
            root_id TEXT NOT NULL,
            state TEXT NOT NULL,
            returned BOOLEAN NOT NULL DEFAULT false,
            body BYTEA NOT NULL
        )""",
        "CREATE INDEX programs_caller ON programs (caller_id, id)",
        "CREATE INDEX programs_running ON programs (caller_id) WHERE state = 'running'",
        """CREATE TABLE program_values (
            session_id TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            PRIMARY KEY (session_id, key)
        )""",
    ),
    # 2: a Program record is a script or an SDK scope; those before are scripts.
    ("ALTER TABLE programs ADD COLUMN kind TEXT NOT NULL DEFAULT 'script'",),
    # 3: leases are heartbeats of registered holders (runtimes and workers).
    (
        """CREATE TABLE holders (
            token TEXT PRIMARY KEY,
            host TEXT NOT NULL,
            pid INTEGER NOT NULL,
            started TEXT NOT NULL DEFAULT '',
            kind TEXT NOT NULL DEFAULT 'runtime',
            capacity INTEGER,
            load INTEGER NOT NULL DEFAULT 0,
            heartbeat TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
            opened TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
        )""",
        "CREATE INDEX sessions_lease ON sessions (lease_token) WHERE lease_token IS NOT NULL",
    ),
    # 4: a generation's live evidence, readable from any machine.
    (
        """CREATE TABLE generation_documents (
            generation_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            body TEXT NOT NULL,
            written BIGINT NOT NULL,
            PRIMARY KEY (generation_id, kind)
        )""",
    ),
]


def schema_version() -> int:
    """The version of the layout this pi-agents writes."""
    return len(STEPS)


def upgrade(db: Db, version: int) -> None:
    """Bring a store of `version` (0: an empty database) up to this layout, in place,
    inside the caller's transaction."""
    for number, step in enumerate(STEPS[version:], start=version + 1):
        for statement in step:
            db.execute(statement)
        db.execute(f"UPDATE {VERSION_TABLE} SET version = %s", (number,))


def pack_session(db: Db, session_id: str) -> None:
    """Pack the session's whole blocks of loose entries (its row locked meanwhile)."""
    row = db.execute(
        "SELECT next_seq, packed_seq FROM sessions WHERE id = %s FOR UPDATE", (session_id,)
    ).fetchone()
    if row is None or row[0] - row[1] < BLOCK:
        return  # gone, or packed by another connection meanwhile
    packed = pack(db, session_id, int(row[1]), int(row[0]))
    db.execute("UPDATE sessions SET packed_seq = %s WHERE id = %s", (packed, session_id))


def pack(db: Db, session_id: str, start: int, end: int) -> int:
    """Pack the whole blocks of entries in [start, end) into `entry_blocks`; the new start."""
    while end - start >= BLOCK:
        stop = start + BLOCK
        bodies = db.execute(
            "SELECT body FROM entries WHERE session_id = %s AND seq >= %s AND seq < %s "
            "ORDER BY seq",
            (session_id, start, stop),
        ).fetchall()
        if len(bodies) != BLOCK or any(not b[0] for b in bodies):
            return start  # a gap or an already packed row: leave these entries loose
        db.execute(
            "INSERT INTO entry_blocks (session_id, first_seq, last_seq, body) "
            "VALUES (%s, %s, %s, %s)",
            (session_id, start, stop - 1, entries_array([bytes(b[0]) for b in bodies])),
        )
        db.execute(
            "UPDATE entries SET body = ''::bytea "
            "WHERE session_id = %s AND seq >= %s AND seq < %s AND type != 'compaction'",
            (session_id, start, stop),
        )
        start = stop
    return start
