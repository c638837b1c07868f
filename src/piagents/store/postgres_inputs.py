"""Inputs between Agents in the PostgreSQL store: accepted, delivered, ended exactly
once (a compare-and-set on the outstanding status), their results read once."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from piagents.ai.messages import now_ms
from piagents.store.base import LeaseLost, StoreError
from piagents.store.postgres_connection import NOT_SAVED, Connection, Db, Statement
from piagents.store.postgres_leases import LeaseTable
from piagents.store.postgres_values import TextArray, check, text
from piagents.store.records import InputRecord, InputStatus
from piagents.store.sqlite_values import INPUT_DELIVERY, INPUT_KIND, INPUT_STATUS
from piagents.store.write_thread import RERUN, Write

COLUMNS = (
    "id, root_id, recipient_id, sender_id, kind, delivery, text, has_result, status, "
    "result, read, aborted_by_owner, accepted, ended, seq, delivered, rendered"
)


def input_record(location: str, row: Sequence[Any]) -> InputRecord:
    """An input from a row of COLUMNS, its values checked."""
    where = f"input {row[0]}"
    return InputRecord(
        id=row[0],
        root_id=row[1],
        recipient_id=row[2],
        sender_id=row[3],
        kind=check(INPUT_KIND, location, row[4], where),
        delivery=check(INPUT_DELIVERY, location, row[5], where),
        text=row[6],
        has_result=bool(row[7]),
        status=check(INPUT_STATUS, location, row[8], where),
        result=row[9],
        read=bool(row[10]),
        aborted_by_owner=bool(row[11]),
        accepted=int(row[12]),
        ended=None if row[13] is None else int(row[13]),
        seq=int(row[14]),
        delivered=bool(row[15]),
        rendered=row[16],
    )


INSERT = (
    "INSERT INTO inputs (id, root_id, recipient_id, sender_id, kind, delivery, text, "
    "has_result, status, result, read, aborted_by_owner, accepted, ended, delivered, rendered) "
)
# The same values as a SELECT (typed: a SELECT list does not take its columns' types).
FENCED_VALUES = (
    "SELECT %s::text, %s::text, %s::text, %s::text, %s::text, %s::text, %s::text, %s::bool, "
    "%s::text, %s::text, %s::bool, %s::bool, %s::bigint, %s::bigint, %s::bool, %s::text "
    "WHERE NOT EXISTS (SELECT 1 FROM sessions s JOIN sessions f ON f.id IN (s.id, s.root_id) "
    "WHERE s.id = %s AND f.id = ANY(%s) AND f.lease_token IS DISTINCT FROM %s) RETURNING seq"
)


# The values a row may hold, written into the statements that check them (they are
# this module's own constants, not arguments: nothing to adapt at every call).
KINDS = ", ".join(f"'{v}'" for v in INPUT_KIND.values)
DELIVERIES = ", ".join(f"'{v}'" for v in INPUT_DELIVERY.values)


def insert_input(
    db: Db, record: InputRecord, fence: tuple[Sequence[str], str] | None = None, location: str = ""
) -> int:
    """Add `record` inside the caller's transaction; its seq. With `fence` (the sessions
    this holder took, its token), from a sender whose tree was taken over: LeaseLost."""
    extra: tuple[object, ...] = ()
    if fence is not None and record.sender_id is not None:
        statement, extra = INSERT + FENCED_VALUES, (record.sender_id, *fence)
    else:
        statement = INSERT + "VALUES (" + ", ".join(["%s"] * 16) + ") RETURNING seq"
    row = db.execute(
        statement,
        (
            record.id,
            record.root_id,
            record.recipient_id,
            record.sender_id,
            record.kind,
            record.delivery,
            text(record.text),
            record.has_result,
            record.status,
            text(record.result),
            record.read,
            record.aborted_by_owner,
            record.accepted,
            record.ended,
            record.delivered,
            text(record.rendered),
            *extra,
        ),
    ).fetchone()
    if row is None:  # the fence refused it
        raise LeaseLost(location, record.sender_id or "")
    return int(row[0])


def input_seq(db: Db, input_id: str) -> object:
    """The seq of the input `input_id`, or NOT_SAVED: whether a keyed insert was saved."""
    row = db.execute("SELECT seq FROM inputs WHERE id = %s", (input_id,)).fetchone()
    return NOT_SAVED if row is None else int(row[0])


class InputTable:
    """The `inputs` table."""

    def __init__(self, conn: Connection, leases: LeaseTable | None = None) -> None:
        self.conn = conn
        self._leases = leases  # refuses ending inputs of a tree whose lease was taken over

    def add(self, record: InputRecord) -> InputRecord:
        fence = self._leases.sender_fence() if self._leases is not None else None
        seq = self.conn.write(
            lambda db: insert_input(db, record, fence, self.conn.location),
            verify=lambda db: input_seq(db, record.id),
            single=True,
        )
        return replace(record, seq=int(seq))

    def end(
        self,
        ids: Sequence[str],
        status: InputStatus,
        result: str | None,
        *,
        aborted_by_owner: bool = False,
        ended: int | None = None,
    ) -> list[InputRecord]:
        write = self.end_write(ids, status, result, aborted_by_owner=aborted_by_owner, ended=ended)
        return write.alone(self.conn) if write is not None else []

    def end_write(
        self,
        ids: Sequence[str],
        status: InputStatus,
        result: str | None,
        *,
        aborted_by_owner: bool = False,
        ended: int | None = None,
    ) -> Write[Connection, list[InputRecord]] | None:
        """`end` as a write to run on a connection (this one, or the store's write
        thread's, alone or in a group), its statement made here; None for no inputs."""
        if not ids:
            return None
        at = ended if ended is not None else now_ms()
        location = self.conn.location
        # One statement, its own transaction (one round trip where BEGIN and COMMIT
        # made three): an input that cannot be read ends nothing, so the update
        # applies only if none of them has a value no pi-agents writes.
        args = {
            "status": status,
            "result": text(result),
            "aborted": aborted_by_owner,
            "at": at,
            "ids": TextArray(ids),
        }
        fence, fenced = self._leases.input_fence() if self._leases else ("", {})

        sql = (
            "WITH unreadable AS (SELECT 1 FROM inputs WHERE status = 'outstanding' "
            f"AND id = ANY(%(ids)s) AND NOT (kind IN ({KINDS}) AND delivery IN ({DELIVERIES}))) "
            "UPDATE inputs SET status = %(status)s, result = %(result)s, "
            "aborted_by_owner = %(aborted)s, ended = %(at)s "
            "WHERE status = 'outstanding' AND id = ANY(%(ids)s) "
            f"AND NOT EXISTS (SELECT 1 FROM unreadable){fence} RETURNING {COLUMNS}"
        )
        args |= fenced

        def records(rows: list[Any]) -> list[InputRecord]:
            return sorted((input_record(location, r) for r in rows), key=lambda r: r.seq)

        def end(db: Db) -> list[InputRecord]:
            for _ in range(2):
                rows = db.execute(sql, args).fetchall()
                if rows:
                    return records(rows)
                # None outstanding, or one unreadable (reading it says so).
                left = db.execute(
                    f"SELECT {COLUMNS} FROM inputs WHERE status = 'outstanding' AND id = ANY(%s)",
                    (list(ids),),
                ).fetchall()
                for row in left:
                    input_record(location, row)
                if not left:
                    return []
                if self._leases is not None:  # refused by the fence: another holder's now
                    self._leases.check_lost_inputs(db, ids)
                # Readable now: it was repaired meanwhile; end them again.
            raise StoreError(f"{location}: inputs {list(ids)} kept changing while ended")

        def saved_rows(db: Db) -> object:  # ended by this call: the status and time it gave
            rows = db.execute(
                f"SELECT {COLUMNS} FROM inputs WHERE id = ANY(%s) AND status = %s AND ended = %s "
                "ORDER BY seq",
                (list(ids), status, at),
            ).fetchall()
            return rows or NOT_SAVED

        def saved(db: Db) -> object:
            rows = saved_rows(db)
            return records(rows) if isinstance(rows, list) else rows

        def finish(_: Connection, rows: list[Any]) -> object:
            # None ended: why (not outstanding, unreadable, fenced) is read alone.
            return records(rows) if rows else RERUN

        return Write(
            lambda conn: conn.write(end, verify=saved, single=True),
            Statement(sql, args, lambda cursor: cursor.fetchall(), saved_rows),
            finish,
        )

    def take_undelivered(self, recipient_ids: Sequence[str]) -> list[InputRecord]:
        """Inputs waiting in the store for these recipients, now marked delivered."""
        if not recipient_ids:
            return []
        # Marks what this call took: a take whose COMMIT went unanswered is found by it,
        # so its inputs are handed over once, neither lost nor taken twice.
        token = uuid.uuid4().hex

        def take(db: Db) -> list[InputRecord]:
            # Locked: another runtime taking them at once waits, then finds them taken.
            rows = db.execute(
                f"SELECT {COLUMNS} FROM inputs WHERE NOT delivered AND recipient_id = ANY(%s) "
                "ORDER BY seq FOR UPDATE",
                (list(recipient_ids),),
            ).fetchall()
            # Read before they are marked: an input that cannot be read is not taken.
            taken = [replace(input_record(self.conn.location, r), delivered=True) for r in rows]
            if taken:
                db.execute(
                    "UPDATE inputs SET delivered = true, taken_by = %s WHERE seq = ANY(%s)",
                    (token, [r.seq for r in taken]),
                )
            return taken

        def saved(db: Db) -> object:
            rows = db.execute(
                f"SELECT {COLUMNS} FROM inputs WHERE taken_by = %s ORDER BY seq", (token,)
            ).fetchall()
            return [input_record(self.conn.location, r) for r in rows] if rows else NOT_SAVED

        return self.conn.write(take, verify=saved)

    def mark_read(self, ids: Sequence[str]) -> None:
        if ids:
            self.conn.write(
                lambda db: db.execute(
                    "UPDATE inputs SET read = true WHERE id = ANY(%s)", (list(ids),)
                ),
                idempotent=True,
                single=True,
            )

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
            where.append("delivered = %s")
            args.append(delivered)
        if recipient_ids is not None:
            if not recipient_ids:
                return []
            where.append("recipient_id = ANY(%s)")
            args.append(list(recipient_ids))
        if root_id is not None:
            where.append("root_id = %s")
            args.append(root_id)
        if outstanding is not None:
            where.append("status = 'outstanding'" if outstanding else "status != 'outstanding'")
        if has_result is not None:
            where.append("has_result = %s")
            args.append(has_result)
        if read is not None:
            where.append("read = %s")
            args.append(read)
        sql = f"SELECT {COLUMNS} FROM inputs"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY ended ASC NULLS LAST, seq"
        return [input_record(self.conn.location, r) for r in self.conn.fetch(sql, args)]
