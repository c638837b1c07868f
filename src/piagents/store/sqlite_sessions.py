"""Session records in the SQLite store: created, read, listed, changed, discarded."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from piagents.ai.models import ThinkingLevel
from piagents.store.base import UNSET, SessionNotFound, StoreError
from piagents.store.records import SessionRecord
from piagents.store.sqlite_connection import Connection
from piagents.store.sqlite_values import THINKING

COLUMNS = "id, cwd, name, model, thinking, owner_id, root_id, created, updated, meta"


def session_record(path: Path, row: Sequence[Any]) -> SessionRecord:
    """A session from a row of COLUMNS in the store at `path`, its values checked."""
    return SessionRecord(
        id=row[0],
        cwd=row[1],
        name=row[2],
        model=row[3],
        thinking=THINKING.check(path, row[4], f"session {row[0]}"),
        owner_id=row[5],
        root_id=row[6],
        created=row[7],
        updated=row[8],
        meta=json.loads(row[9]) if row[9] != "{}" else {},
    )


class SessionTable:
    """The `sessions` table's records (leases, states and latest requests aside)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def create(self, record: SessionRecord) -> None:
        with self.conn.tx(one_write=True) as db:
            db.execute(
                "INSERT INTO sessions (id, cwd, name, model, thinking, owner_id, root_id, "
                "created, updated, meta) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    record.id,
                    record.cwd,
                    record.name,
                    record.model,
                    record.thinking,
                    record.owner_id,
                    record.root_id,
                    record.created,
                    record.updated,
                    json.dumps(record.meta),
                ),
            )
            self.conn.made(record.id)

    def discard(self, session_id: str) -> None:
        with self.conn.tx() as db:
            if (
                db.execute(
                    "SELECT 1 FROM inputs WHERE recipient_id = ? OR sender_id = ? LIMIT 1",
                    (session_id, session_id),
                ).fetchone()
                or db.execute(
                    "SELECT 1 FROM sessions WHERE owner_id = ? LIMIT 1", (session_id,)
                ).fetchone()
            ):
                raise StoreError(f"Session {session_id} has inputs or Agents: it is kept.")
            for table, column in (
                ("entries", "session_id"),
                ("entry_blocks", "session_id"),
                ("search_docs", "session_id"),
                ("sessions", "id"),
            ):
                db.execute(f"DELETE FROM {table} WHERE {column} = ?", (session_id,))

    def get(self, session_id: str) -> SessionRecord | None:
        row = self.conn.read(
            lambda db: db.execute(
                f"SELECT {COLUMNS} FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
        )
        return session_record(self.conn.path, row) if row else None

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
        if owner_id is not None:
            where.append("owner_id = ?")
            args.append(owner_id)
        if root_id is not None:
            where.append("root_id = ?")
            args.append(root_id)
        if cwd is not None:
            where.append("cwd = ?")
            args.append(cwd)
        if roots_only:
            where.append("owner_id IS NULL")
        if where:
            sql += " WHERE " + " AND ".join(where)
        # rowid breaks ties: two sessions made in the same millisecond come newest first.
        sql += " ORDER BY updated DESC, created DESC, rowid DESC"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        rows = self.conn.read(lambda db: db.execute(sql, args).fetchall())
        return [session_record(self.conn.path, r) for r in rows]

    def named(self, owner_id: str, name: str) -> SessionRecord | None:
        # The newest, as the first of `matching(owner_id=...)` with that name would be.
        row = self.conn.read(
            lambda db: db.execute(
                f"SELECT {COLUMNS} FROM sessions "
                "WHERE owner_id = ? AND name = ? "
                "ORDER BY updated DESC, created DESC, rowid DESC LIMIT 1",
                (owner_id, name),
            ).fetchone()
        )
        return session_record(self.conn.path, row) if row else None

    def roots_mark(self) -> tuple[int, int]:
        row = self.conn.fetch(
            "SELECT count(*), coalesce(max(created), 0) FROM sessions WHERE owner_id IS NULL", ()
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
                sets.append(f"{col} = ?")
                args.append(value)
        if meta is not UNSET:
            sets.append("meta = ?")
            args.append(json.dumps(meta))
        with self.conn.tx() as db:
            if sets:
                db.execute(
                    f"UPDATE sessions SET {', '.join(sets)} WHERE id = ?", (*args, session_id)
                )
            row = db.execute(
                f"SELECT {COLUMNS} FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
            # Read in the transaction: a session that cannot be read is not changed.
            record = session_record(self.conn.path, row) if row is not None else None
        if record is None:
            raise SessionNotFound(f"No session {session_id}")
        return record
