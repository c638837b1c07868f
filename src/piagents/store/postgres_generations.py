"""Supervision generations in the PostgreSQL store: added, changed while live by
compare-and-set (and ended with their owner's result in the same transaction), read."""

from __future__ import annotations

from typing import Any

from piagents.ai.messages import now_ms
from piagents.store.postgres_connection import NOT_SAVED, Connection, Db
from piagents.store.postgres_inputs import input_seq, insert_input
from piagents.store.postgres_values import record_body
from piagents.store.records import (
    GenerationDocumentKind,
    GenerationRecord,
    GenerationState,
    InputRecord,
    decode_generation,
    encode_generation,
)


class GenerationTable:
    """The `generations` table."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def add(self, generation: GenerationRecord) -> None:
        g = generation
        body = encode_generation(g)

        def saved(db: Db) -> object:
            row = db.execute("SELECT body FROM generations WHERE id = %s", (g.id,)).fetchone()
            return None if row is not None and bytes(row[0]) == body else NOT_SAVED

        self.conn.write(
            lambda db: db.execute(
                "INSERT INTO generations (id, root_id, owner_id, session_id, state, body) "
                "VALUES (%s, %s, %s, %s, %s, %s)",
                (g.id, g.root_id, g.owner_id, g.session_id, g.state, body),
            ),
            verify=saved,
            single=True,
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
        body = encode_generation(g)
        sql = "UPDATE generations SET state = %s, ended = %s, body = %s WHERE id = %s AND NOT ended"
        args: list[Any] = [g.state, end, body, g.id]
        if expect_state is not None:
            sql += " AND state = %s"
            args.append(expect_state)

        def update(db: Db) -> bool:
            if db.execute(sql, args).rowcount == 0:
                return False
            if result is not None:
                insert_input(db, result)
            return True

        def saved(db: Db) -> object:  # this change is there (and its result with it)
            row = db.execute(
                "SELECT body, ended FROM generations WHERE id = %s", (g.id,)
            ).fetchone()
            if row is None or bytes(row[0]) != body or bool(row[1]) != end:
                return NOT_SAVED
            if result is not None and input_seq(db, result.id) is NOT_SAVED:
                return NOT_SAVED
            return True

        return self.conn.write(update, verify=saved)

    def get(self, generation_id: str) -> GenerationRecord | None:
        rows = self.conn.fetch("SELECT body FROM generations WHERE id = %s", (generation_id,))
        return self._generation(rows[0][0]) if rows else None

    def put_document(self, generation_id: str, kind: GenerationDocumentKind, body: str) -> None:
        args = (generation_id, kind, body, now_ms())
        self.conn.write(  # replacing with the same text twice changes nothing
            lambda db: db.execute(
                "INSERT INTO generation_documents (generation_id, kind, body, written) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (generation_id, kind) "
                "DO UPDATE SET body = excluded.body, written = excluded.written",
                args,
            ),
            idempotent=True,
            single=True,
        )

    def document(self, generation_id: str, kind: GenerationDocumentKind) -> tuple[str, int] | None:
        rows = self.conn.fetch(
            "SELECT body, written FROM generation_documents WHERE generation_id = %s AND kind = %s",
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
                where.append(f"{column} = %s")
                args.append(value)
        if live is not None:
            where.append("ended = %s")
            args.append(not live)
        sql = "SELECT body FROM generations"
        if where:
            sql += " WHERE " + " AND ".join(where)
        return [self._generation(r[0]) for r in self.conn.fetch(sql + " ORDER BY seq", args)]

    def _generation(self, body: bytes) -> GenerationRecord:
        return record_body(self.conn.location, decode_generation, body, "generation")
