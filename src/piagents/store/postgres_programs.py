"""Programs in the PostgreSQL store: added running, ended once by compare-and-set
(with the values their `store()` calls kept, in the same transaction), read newest
first, and stopped when the process that ran them is gone."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from piagents.store.postgres_connection import NOT_SAVED, Connection, Db
from piagents.store.postgres_values import record_body
from piagents.store.records import (
    ProgramKind,
    ProgramRecord,
    ProgramState,
    decode_program,
    encode_program,
)


class ProgramTable:
    """The `programs` and `program_values` tables."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def add(self, program: ProgramRecord) -> None:
        p = program
        if p.state != "running":
            raise ValueError("a Program is added running")
        body = encode_program(p)
        self.conn.write(
            lambda db: db.execute(
                "INSERT INTO programs (id, caller_id, root_id, state, returned, body, kind) "
                "VALUES (%s, %s, %s, %s, false, %s, %s)",
                (p.id, p.caller_id, p.root_id, p.state, body, p.kind),
            ),
            verify=lambda db: self._saved(db, p.id, body, None),
            single=True,
        )

    def end(self, program: ProgramRecord, values: Mapping[str, str] | None = None) -> bool:
        """Record that a running Program ended (`program.state` is its end); False when
        it had ended already. `values` (key: JSON text) are kept for its caller."""
        p = program
        if p.state == "running":
            raise ValueError("a Program ends completed, failed or stopped")
        body = encode_program(p)

        def end(db: Db) -> bool:
            changed = db.execute(
                "UPDATE programs SET state = %s, returned = %s, body = %s "
                "WHERE id = %s AND state = 'running'",
                (p.state, p.returned, body, p.id),
            ).rowcount
            if not changed:
                return False
            if values:
                with db.cursor() as c:
                    c.executemany(
                        "INSERT INTO program_values (session_id, key, value) VALUES (%s, %s, %s) "
                        "ON CONFLICT (session_id, key) DO UPDATE SET value = excluded.value",
                        [(p.caller_id, k, v) for k, v in values.items()],
                    )
            return True

        return self.conn.write(end, verify=lambda db: self._saved(db, p.id, body, True))

    @staticmethod
    def _saved(db: Db, program_id: str, body: bytes, value: object) -> object:
        row = db.execute("SELECT body FROM programs WHERE id = %s", (program_id,)).fetchone()
        return value if row is not None and bytes(row[0]) == body else NOT_SAVED

    def mark_returned(self, program_ids: Sequence[str]) -> None:
        """These ended Programs' results have been given to their callers."""
        if not program_ids:
            return

        def mark(db: Db) -> None:
            rows = db.execute(
                "SELECT body FROM programs WHERE id = ANY(%s) AND state != 'running' "
                "AND NOT returned FOR UPDATE",
                (list(program_ids),),
            ).fetchall()
            for (body,) in rows:
                p = msgspec.structs.replace(self._program(body), returned=True)
                db.execute(
                    "UPDATE programs SET returned = true, body = %s WHERE id = %s",
                    (encode_program(p), p.id),
                )

        self.conn.write(mark, idempotent=True)

    def stop_running(self, caller_id: str, reason: str, ended: int) -> list[ProgramRecord]:
        """Programs of `caller_id` left `running` by a process that is gone end `stopped`
        with `reason`; returns them as they are now."""

        def stop(db: Db) -> list[ProgramRecord]:
            stopped: list[ProgramRecord] = []
            rows = db.execute(
                "SELECT body FROM programs WHERE caller_id = %s AND state = 'running' "
                "ORDER BY id FOR UPDATE",
                (caller_id,),
            ).fetchall()
            for (body,) in rows:
                p = msgspec.structs.replace(
                    self._program(body), state="stopped", reason=reason, ended=ended
                )
                db.execute(
                    "UPDATE programs SET state = 'stopped', body = %s WHERE id = %s",
                    (encode_program(p), p.id),
                )
                stopped.append(p)
            return stopped

        def saved(db: Db) -> object:  # stopped by this call: its reason and time
            rows = db.execute(
                "SELECT body FROM programs WHERE caller_id = %s AND state = 'stopped' ORDER BY id",
                (caller_id,),
            ).fetchall()
            found = [
                p
                for p in (self._program(r[0]) for r in rows)
                if p.reason == reason and p.ended == ended
            ]
            return found or NOT_SAVED

        return self.conn.write(stop, verify=saved)

    def get(self, program_id: str) -> ProgramRecord | None:
        rows = self.conn.fetch("SELECT body FROM programs WHERE id = %s", (program_id,))
        return self._program(rows[0][0]) if rows else None

    def matching(
        self,
        caller_id: str,
        *,
        kind: ProgramKind | None = None,
        state: ProgramState | None = None,
        returned: bool | None = None,
        id_prefix: str | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[ProgramRecord]:
        """The caller's Programs (of one kind, if given), newest first."""
        where, args = self._where(caller_id, kind, state, returned, id_prefix)
        sql = f"SELECT body FROM programs WHERE {where} ORDER BY id DESC"
        if limit is not None:
            sql += " LIMIT %s"
            args.append(limit)
        if offset:
            sql += " OFFSET %s"
            args.append(offset)
        return [self._program(r[0]) for r in self.conn.fetch(sql, args)]

    def count(
        self,
        caller_id: str,
        *,
        kind: ProgramKind | None = None,
        state: ProgramState | None = None,
        returned: bool | None = None,
    ) -> int:
        where, args = self._where(caller_id, kind, state, returned, None)
        return int(self.conn.fetch(f"SELECT count(*) FROM programs WHERE {where}", args)[0][0])

    def values(self, session_id: str) -> dict[str, str]:
        rows = self.conn.fetch(
            "SELECT key, value FROM program_values WHERE session_id = %s ORDER BY key",
            (session_id,),
        )
        return {k: v for k, v in rows}

    @staticmethod
    def _where(
        caller_id: str,
        kind: ProgramKind | None,
        state: ProgramState | None,
        returned: bool | None,
        id_prefix: str | None,
    ) -> tuple[str, list[Any]]:
        where: list[str] = ["caller_id = %s"]
        args: list[Any] = [caller_id]
        if kind is not None:
            where.append("kind = %s")
            args.append(kind)
        if state is not None:
            where.append("state = %s")
            args.append(state)
        if returned is not None:
            where.append("returned = %s")
            args.append(returned)
        if id_prefix is not None:  # IDs are lowercase hex and dashes: no LIKE wildcards
            where.append("left(id, %s) = %s")
            args += [len(id_prefix), id_prefix.lower()]
        return " AND ".join(where), args

    def _program(self, body: bytes) -> ProgramRecord:
        return record_body(self.conn.location, decode_program, body, "Program")
