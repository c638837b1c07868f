"""Supervision generations in the SQLite store: added, changed while live (and
ended with their owner's result in the same transaction), read."""

from __future__ import annotations

from typing import Any

from piagents.ai.messages import now_ms
from piagents.store.records import (
    GenerationDocumentKind,
    GenerationRecord,
    GenerationState,
    InputRecord,
    decode_generation,
    encode_generation,
)
from piagents.store.sqlite_connection import Connection
from piagents.store.sqlite_inputs import insert_input
from piagents.store.sqlite_values import record_body


class GenerationTable:
    """The `generations` table."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def add(self, generation: GenerationRecord) -> None:
        g = generation
        with self.conn.tx() as db:
            seq = db.execute("SELECT coalesce(max(seq), 0) + 1 FROM generations").fetchone()[0]
            db.execute(
                "INSERT INTO generations (id, root_id, owner_id, session_id, state, ended, seq, "
                "body) VALUES (?,?,?,?,?,0,?,?)",
                (g.id, g.root_id, g.owner_id, g.session_id, g.state, seq, encode_generation(g)),
            )

    def update(
        self,
        generation: GenerationRecord,
        *,
        expect_state: GenerationState | None = None,
        end: bool = False,
        result: InputRecord | None = None,
    ) -> bool:
        g = generation
        sql = "UPDATE generations SET state = ?, ended = ?, body = ? WHERE id = ? AND ended = 0"
        args: list[Any] = [g.state, int(end), encode_generation(g), g.id]
        if expect_state is not None:
            sql += " AND state = ?"
            args.append(expect_state)
        with self.conn.tx() as db:
            if db.execute(sql, args).rowcount == 0:
                return False
            if result is not None:
                insert_input(db, result)
        return True

    def get(self, generation_id: str) -> GenerationRecord | None:
        rows = self.conn.fetch("SELECT body FROM generations WHERE id = ?", (generation_id,))
        return self._generation(rows[0][0]) if rows else None

    def put_document(self, generation_id: str, kind: GenerationDocumentKind, body: str) -> None:
        with self.conn.tx() as db:
            db.execute(
                "INSERT INTO generation_documents (generation_id, kind, body, written) "
                "VALUES (?,?,?,?) ON CONFLICT (generation_id, kind) "
                "DO UPDATE SET body = excluded.body, written = excluded.written",
                (generation_id, kind, body, now_ms()),
            )

    def document(self, generation_id: str, kind: GenerationDocumentKind) -> tuple[str, int] | None:
        rows = self.conn.fetch(
            "SELECT body, written FROM generation_documents WHERE generation_id = ? AND kind = ?",
            (generation_id, kind),
        )
        return (str(rows[0][0]), int(rows[0][1])) if rows else None

    def matching(
        self,
        *,
        root_id: str | None = None,
        owner_id: str | None = None,
        session_id: str | None = None,
        live: bool | None = None,
    ) -> list[GenerationRecord]:
        where: list[str] = []
        args: list[Any] = []
        for column, value in (
            ("root_id", root_id),
            ("owner_id", owner_id),
            ("session_id", session_id),
        ):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        if live is not None:
            where.append("ended = ?")
            args.append(0 if live else 1)
        sql = "SELECT body FROM generations"
        if where:
            sql += " WHERE " + " AND ".join(where)
        return [self._generation(r[0]) for r in self.conn.fetch(sql + " ORDER BY seq", args)]

    def _generation(self, body: bytes | str) -> GenerationRecord:
        return record_body(self.conn.path, decode_generation, body, "generation")
