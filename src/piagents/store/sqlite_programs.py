"""Programs in the SQLite store: added running, ended once (with the values their
`store()` calls kept, in the same transaction), read newest first (all of a caller's,
or its scripts or scopes only: the `kind` column), and stopped when the process that
ran them is gone."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from piagents.store.records import (
    ProgramKind,
    ProgramRecord,
    ProgramState,
    decode_program,
    encode_program,
)
from piagents.store.sqlite_connection import Connection
from piagents.store.sqlite_values import record_body


class ProgramTable:
    """The `programs` and `program_values` tables."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def add(self, program: ProgramRecord) -> None:
        p = program
        if p.state != "running":
            raise ValueError("a Program is added running")
        with self.conn.tx() as db:
            db.execute(
                "INSERT INTO programs (id, caller_id, root_id, kind, state, returned, body) "
                "VALUES (?,?,?,?,?,0,?)",
                (p.id, p.caller_id, p.root_id, p.kind, p.state, encode_program(p)),
            )

    def end(self, program: ProgramRecord, values: Mapping[str, str] | None = None) -> bool:
        """Record that a running Program ended (`program.state` is its end); False when
        it had ended already. `values` (key: JSON text) are kept for its caller."""
        p = program
        if p.state == "running":
            raise ValueError("a Program ends completed, failed or stopped")
        with self.conn.tx() as db:
            changed = db.execute(
                "UPDATE programs SET state = ?, returned = ?, body = ? "
                "WHERE id = ? AND state = 'running'",
                (p.state, int(p.returned), encode_program(p), p.id),
            ).rowcount
            if not changed:
                return False
            if values:
                db.executemany(
                    "INSERT INTO program_values (session_id, key, value) VALUES (?,?,?) "
                    "ON CONFLICT (session_id, key) DO UPDATE SET value = excluded.value",
                    [(p.caller_id, k, v) for k, v in values.items()],
                )
        return True

    def mark_returned(self, program_ids: Sequence[str]) -> None:
        """These ended Programs' results have been given to their callers."""
        if not program_ids:
            return
        with self.conn.tx() as db:
            for program_id in program_ids:
                row = db.execute(
                    "SELECT body FROM programs WHERE id = ? AND state != 'running' "
                    "AND returned = 0",
                    (program_id,),
                ).fetchone()
                if row is None:
                    continue
                p = msgspec.structs.replace(self._program(row[0]), returned=True)
                db.execute(
                    "UPDATE programs SET returned = 1, body = ? WHERE id = ?",
                    (encode_program(p), program_id),
                )

    def stop_running(self, caller_id: str, reason: str, ended: int) -> list[ProgramRecord]:
        """Programs of `caller_id` left `running` by a process that is gone end `stopped`
        with `reason`; returns them as they are now."""
        stopped: list[ProgramRecord] = []
        with self.conn.tx() as db:
            rows = db.execute(
                "SELECT body FROM programs WHERE caller_id = ? AND state = 'running'",
                (caller_id,),
            ).fetchall()
            for (body,) in rows:
                p = msgspec.structs.replace(
                    self._program(body), state="stopped", reason=reason, ended=ended
                )
                db.execute(
                    "UPDATE programs SET state = 'stopped', body = ? WHERE id = ?",
                    (encode_program(p), p.id),
                )
                stopped.append(p)
        return stopped

    def get(self, program_id: str) -> ProgramRecord | None:
        rows = self.conn.fetch("SELECT body FROM programs WHERE id = ?", (program_id,))
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
        """The caller's Programs (of `kind`, when given), newest first."""
        where, args = self._where(caller_id, kind, state, returned, id_prefix)
        sql = f"SELECT body FROM programs WHERE {where} ORDER BY id DESC"
        if limit is not None:
            sql += " LIMIT ? OFFSET ?"
            args += [limit, offset]
        elif offset:
            sql += " LIMIT -1 OFFSET ?"
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
            "SELECT key, value FROM program_values WHERE session_id = ? ORDER BY key",
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
        where: list[str] = ["caller_id = ?"]
        args: list[Any] = [caller_id]
        if kind is not None:
            where.append("kind = ?")
            args.append(kind)
        if state is not None:
            where.append("state = ?")
            args.append(state)
        if returned is not None:
            where.append("returned = ?")
            args.append(int(returned))
        if id_prefix is not None:  # IDs are lowercase hex and dashes: no LIKE wildcards
            where.append("substr(id, 1, ?) = ?")
            args += [len(id_prefix), id_prefix.lower()]
        return " AND ".join(where), args

    def _program(self, body: bytes | str) -> ProgramRecord:
        return record_body(self.conn.path, decode_program, body, "Program")
