"""Session records in the PostgreSQL store: created, read, listed, changed, discarded."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from piagents.ai.models import ThinkingLevel
from piagents.store.base import UNSET, SessionNotFound, StoreError
from piagents.store.postgres_connection import NOT_SAVED, Connection, Db
from piagents.store.postgres_values import check, text
from piagents.store.records import SessionRecord
from piagents.store.sqlite_values import THINKING

COLUMNS = "id, cwd, name, model, thinking, owner_id, root_id, created, updated, meta"
# Sessions made in the same millisecond: the later row first.
NEWEST_FIRST = "ORDER BY updated DESC, created DESC, seq DESC"


def session_record(location: str, row: Sequence[Any]) -> SessionRecord:
    """A session from a row of COLUMNS, its values checked."""
    return SessionRecord(
        id=row[0],
        cwd=row[1],
        name=row[2],
        model=row[3],
        thinking=check(THINKING, location, row[4], f"session {row[0]}"),
        owner_id=row[5],
        root_id=row[6],
        created=int(row[7]),
        updated=int(row[8]),
        meta=json.loads(row[9]) if row[9] != "{}" else {},
    )


class SessionTable:
    """The `sessions` table's records (leases, states and latest requests aside)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def create(self, record: SessionRecord) -> None:
        def insert(db: Db) -> None:
            db.execute(
                "INSERT INTO sessions (id, cwd, name, model, thinking, owner_id, root_id, "
                "created, updated, meta) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (
                    record.id,
                    record.cwd,
                    text(record.name),
                    record.model,
                    record.thinking,
                    record.owner_id,
                    record.root_id,
                    record.created,
                    record.updated,
                    json.dumps(record.meta),
                ),
            )

        def saved(db: Db) -> object:  # a keyed insert: saved if the row is there
            row = db.execute(
                "SELECT 1 FROM sessions WHERE id = %s AND created = %s", (record.id, record.created)
            ).fetchone()
            return None if row else NOT_SAVED

        self.conn.write(insert, verify=saved, single=True)

    def discard(self, session_id: str) -> None:
        def discard(db: Db) -> None:
            if (
                db.execute(
                    "SELECT 1 FROM inputs WHERE recipient_id = %(s)s OR sender_id = %(s)s LIMIT 1",
                    {"s": session_id},
                ).fetchone()
                or db.execute(
                    "SELECT 1 FROM sessions WHERE owner_id = %s LIMIT 1", (session_id,)
                ).fetchone()
            ):
                raise StoreError(f"Session {session_id} has inputs or Agents: it is kept.")
            for table, column in (
                ("entries", "session_id"),
                ("entry_blocks", "session_id"),
                ("search_docs", "session_id"),
                ("sessions", "id"),
            ):
                db.execute(f"DELETE FROM {table} WHERE {column} = %s", (session_id,))

        self.conn.write(discard, idempotent=True)

    def get(self, session_id: str) -> SessionRecord | None:
        rows = self.conn.fetch(f"SELECT {COLUMNS} FROM sessions WHERE id = %s", (session_id,))
        return session_record(self.conn.location, rows[0]) if rows else None

    def matching(
        self,
        *,
        cwd: str | None = None,
        roots_only: bool = False,
        limit: int | None = None,
        owner_id: str | None = None,
        root_id: str | None = None,
    ) -> list[SessionRecord]:
        sql = f"SELECT {COLUMNS} FROM sessions"
        where: list[str] = []
        args: list[Any] = []
        for column, value in (("owner_id", owner_id), ("root_id", root_id), ("cwd", cwd)):
            if value is not None:
                where.append(f"{column} = %s")
                args.append(value)
        if roots_only:
            where.append("owner_id IS NULL")
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " " + NEWEST_FIRST
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [session_record(self.conn.location, r) for r in self.conn.fetch(sql, args)]

    def named(self, owner_id: str, name: str) -> SessionRecord | None:
        rows = self.conn.fetch(
            f"SELECT {COLUMNS} FROM sessions WHERE owner_id = %s AND name = %s "
            f"{NEWEST_FIRST} LIMIT 1",
            (owner_id, name),
        )
        return session_record(self.conn.location, rows[0]) if rows else None

    def roots_mark(self) -> tuple[int, int]:
        row = self.conn.fetch(
            "SELECT count(*), coalesce(max(created), 0) FROM sessions WHERE owner_id IS NULL"
        )[0]
        return int(row[0]), int(row[1])

    def update(
        self,
        session_id: str,
        *,
        name: str | None = UNSET,
        model: str = UNSET,
        thinking: ThinkingLevel = UNSET,
        meta: dict[str, Any] = UNSET,
    ) -> SessionRecord:
        sets: list[str] = []
        args: list[Any] = []
        for col, value in (("name", name), ("model", model), ("thinking", thinking)):
            if value is not UNSET:
                sets.append(f"{col} = %s")
                args.append(text(value) if col == "name" else value)
        if meta is not UNSET:
            sets.append("meta = %s")
            args.append(json.dumps(meta))

        def update(db: Db) -> SessionRecord | None:
            if sets:
                db.execute(
                    f"UPDATE sessions SET {', '.join(sets)} WHERE id = %s", (*args, session_id)
                )
            row = db.execute(
                f"SELECT {COLUMNS} FROM sessions WHERE id = %s", (session_id,)
            ).fetchone()
            # Read in the transaction: a session that cannot be read is not changed.
            return session_record(self.conn.location, row) if row is not None else None

        record = self.conn.write(update, idempotent=True)
        if record is None:
            raise SessionNotFound(f"No session {session_id}")
        return record
