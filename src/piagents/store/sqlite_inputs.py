"""Inputs between Agents in the SQLite store: accepted, delivered, ended exactly
once, their results read once."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from piagents.ai.messages import now_ms
from piagents.store.records import InputRecord, InputStatus
from piagents.store.sqlite_connection import Connection
from piagents.store.sqlite_values import INPUT_DELIVERY, INPUT_KIND, INPUT_STATUS

COLUMNS = (
    "id, root_id, recipient_id, sender_id, kind, delivery, text, has_result, status, "
    "result, read, aborted_by_owner, accepted, ended, seq, delivered, rendered"
)


def input_record(path: Path, row: Sequence[Any]) -> InputRecord:
    """An input from a row of COLUMNS in the store at `path`, its values checked."""
    where = f"input {row[0]}"
    return InputRecord(
        id=row[0],
        root_id=row[1],
        recipient_id=row[2],
        sender_id=row[3],
        kind=INPUT_KIND.check(path, row[4], where),
        delivery=INPUT_DELIVERY.check(path, row[5], where),
        text=row[6],
        has_result=bool(row[7]),
        status=INPUT_STATUS.check(path, row[8], where),
        result=row[9],
        read=bool(row[10]),
        aborted_by_owner=bool(row[11]),
        accepted=row[12],
        ended=row[13],
        seq=row[14],
        delivered=bool(row[15]),
        rendered=row[16],
    )


def insert_input(db: sqlite3.Connection, record: InputRecord) -> int:
    """Add `record` inside the caller's transaction; its seq."""
    cur = db.execute(
        "INSERT INTO inputs (id, root_id, recipient_id, sender_id, kind, delivery, text, "
        "has_result, status, result, read, aborted_by_owner, accepted, ended, delivered, "
        "rendered) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            record.id,
            record.root_id,
            record.recipient_id,
            record.sender_id,
            record.kind,
            record.delivery,
            record.text,
            int(record.has_result),
            record.status,
            record.result,
            int(record.read),
            int(record.aborted_by_owner),
            record.accepted,
            record.ended,
            int(record.delivered),
            record.rendered,
        ),
    )
    return int(cur.lastrowid or 0)


class InputTable:
    """The `inputs` table."""

    def __init__(
        self,
        conn: Connection,
        fence: Callable[[sqlite3.Connection, Sequence[str]], None] | None = None,
        sender_fence: Callable[[sqlite3.Connection, str], None] | None = None,
    ) -> None:
        self.conn = conn
        self._fence = fence  # refuses ending inputs of a tree whose lease was taken over
        self._sender_fence = sender_fence  # refuses inputs sent from such a tree

    def add(self, record: InputRecord) -> InputRecord:
        with self.conn.tx(one_write=True) as db:
            if self._sender_fence is not None and record.sender_id is not None:
                self._sender_fence(db, record.sender_id)
            seq = insert_input(db, record)
        return replace(record, seq=seq)

    def end(
        self,
        ids: Sequence[str],
        status: InputStatus,
        result: str | None,
        *,
        aborted_by_owner: bool = False,
        ended: int | None = None,
    ) -> list[InputRecord]:
        if not ids:
            return []
        ended = ended if ended is not None else now_ms()
        marks = ",".join("?" * len(ids))
        with self.conn.tx() as db:
            if self._fence is not None:
                self._fence(db, ids)
            rows = db.execute(
                f"UPDATE inputs SET status = ?, result = ?, aborted_by_owner = ?, ended = ? "
                f"WHERE status = 'outstanding' AND id IN ({marks}) RETURNING {COLUMNS}",
                (status, result, int(aborted_by_owner), ended, *ids),
            ).fetchall()
            # Read in the transaction: an input that cannot be read ends nothing. Only
            # what this call ended: not one another call ended in the same millisecond.
            ended_now = [input_record(self.conn.path, r) for r in rows]
        return sorted(ended_now, key=lambda r: r.seq)

    def take_undelivered(self, recipient_ids: Sequence[str]) -> list[InputRecord]:
        """Inputs waiting in the store for these recipients, now marked delivered."""
        if not recipient_ids:
            return []
        marks = ",".join("?" * len(recipient_ids))
        with self.conn.tx() as db:
            rows = db.execute(
                f"SELECT {COLUMNS} FROM inputs WHERE delivered = 0 "
                f"AND recipient_id IN ({marks}) ORDER BY seq",
                tuple(recipient_ids),
            ).fetchall()
            # Read before they are marked: an input that cannot be read is not taken.
            taken = [replace(input_record(self.conn.path, r), delivered=True) for r in rows]
            if rows:
                db.execute(
                    f"UPDATE inputs SET delivered = 1 WHERE delivered = 0 "
                    f"AND recipient_id IN ({marks})",
                    tuple(recipient_ids),
                )
        return taken

    def mark_read(self, ids: Sequence[str]) -> None:
        if ids:
            marks = ",".join("?" * len(ids))
            with self.conn.tx() as db:
                db.execute(f"UPDATE inputs SET read = 1 WHERE id IN ({marks})", tuple(ids))

    def matching(
        self,
        *,
        recipient_ids: Sequence[str] | None = None,
        root_id: str | None = None,
        outstanding: bool | None = None,
        has_result: bool | None = None,
        read: bool | None = None,
        delivered: bool | None = None,
    ) -> list[InputRecord]:
        where: list[str] = []
        args: list[Any] = []
        if delivered is not None:
            where.append("delivered = ?")
            args.append(int(delivered))
        if recipient_ids is not None:
            if not recipient_ids:
                return []
            where.append(f"recipient_id IN ({','.join('?' * len(recipient_ids))})")
            args.extend(recipient_ids)
        if root_id is not None:
            where.append("root_id = ?")
            args.append(root_id)
        if outstanding is not None:
            where.append("status = 'outstanding'" if outstanding else "status != 'outstanding'")
        if has_result is not None:
            where.append("has_result = ?")
            args.append(int(has_result))
        if read is not None:
            where.append("read = ?")
            args.append(int(read))
        sql = f"SELECT {COLUMNS} FROM inputs"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY coalesce(ended, 9e18), seq"
        rows = self.conn.read(lambda db: db.execute(sql, args).fetchall())
        return [input_record(self.conn.path, r) for r in rows]
