"""A session's append-only entries in the PostgreSQL store: appended one row each,
packed into blocks, and read back (whole, from the context start, or after an
entry) as the SQLite store does (`sqlite_entries`)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import msgspec

from piagents.store import postgres_layout as layout
from piagents.store.base import SessionNotFound, StoreError
from piagents.store.collector import collector_paused
from piagents.store.postgres_connection import NOT_SAVED, Connection, Db, Statement
from piagents.store.postgres_leases import LeaseTable
from piagents.store.postgres_values import text
from piagents.store.records import (
    ContextItem,
    Entry,
    decode_context_items,
    decode_entries,
    decode_entry,
    encode_entry,
    entries_array,
    split_entries,
)
from piagents.store.sqlite_entries import search_docs
from piagents.store.sqlite_layout import BLOCK
from piagents.store.write_thread import RERUN, Write

D = TypeVar("D")


class EntryLog:
    """The `entries`, `entry_blocks` and `search_docs` rows of every session."""

    def __init__(self, conn: Connection, leases: LeaseTable | None = None) -> None:
        self.conn = conn
        self._leases = leases  # refuses an append by a holder whose lease was taken

    def append(self, session_id: str, entries: Sequence[Entry]) -> None:
        write = self.append_write(session_id, entries)
        if write is not None:
            self.settle_append(session_id, write.alone(self.conn))

    def append_write(
        self, session_id: str, entries: Sequence[Entry]
    ) -> Write[Connection, int | None] | None:
        """The append as a write to run on a connection (this one, or the store's write
        thread's, alone or in a group), its statement made here; None for no entries.
        What it returns goes to `settle_append`."""
        if not entries:
            return None
        docs = search_docs(entries)
        # The fence (the session's lease still ours) rides on the same statement, which
        # waits for a takeover of the lease and then sees it.
        fence = self._leases.fence() if self._leases is not None else ("", "", {})
        sql, args = _append_statement(session_id, entries, docs, fence)
        last_id, count = entries[-1].id, len(entries)

        def saved(db: Db) -> object:  # entry ids are the session's own: saved if there
            row = db.execute(
                "SELECT 1 FROM entries WHERE session_id = %s AND entry_id = %s",
                (session_id, last_id),
            ).fetchone()
            return (None, None) if row else NOT_SAVED

        statement = Statement(sql, args, lambda cursor: cursor.fetchone() or (-1, -1), saved)

        def finish(conn: Connection, row: tuple[int | None, int | None]) -> object:
            base, packed = row
            if base == -1:
                return RERUN  # it changed nothing: why is read when it runs alone
            if base is not None and packed is not None and base + count - packed >= BLOCK:
                # Packing only re-lays out what is committed: left for a later append if
                # it cannot be done now.
                with contextlib.suppress(StoreError):
                    conn.write(lambda db: layout.pack_session(db, session_id), idempotent=True)
            return base

        def alone(conn: Connection) -> int | None:
            value = finish(conn, statement.run(conn))
            return -1 if value is RERUN else value  # type: ignore[return-value]

        return Write(alone, statement, finish)

    def settle_append(self, session_id: str, base: int | None) -> None:
        """An append that changed nothing: its lease was taken (LeaseLost), or there is
        no such session."""
        if base == -1:
            if self._leases is not None:
                self._leases.check_lost(session_id)
            raise SessionNotFound(f"No session {session_id}")

    def has_entries(self, session_id: str) -> bool:
        return bool(
            self.conn.fetch("SELECT 1 FROM entries WHERE session_id = %s LIMIT 1", (session_id,))
        )

    def entries(
        self, session_id: str, *, from_last_compaction: bool = False, after: str | None = None
    ) -> list[Entry]:
        return self._decoded(session_id, from_last_compaction, after, decode_entries)

    def context_items(self, session_id: str) -> tuple[list[ContextItem], str | None]:
        items = self._decoded(session_id, True, None, decode_context_items)
        last = self.conn.fetch(
            "SELECT entry_id FROM entries WHERE session_id = %s ORDER BY seq DESC LIMIT 1",
            (session_id,),
        )
        return items, str(last[0][0]) if last else None

    def _decoded(
        self,
        session_id: str,
        from_last_compaction: bool,
        after: str | None,
        decode: Callable[[bytes], list[D]],
    ) -> list[D]:
        try:
            # One snapshot: a block packed between its statements is not read twice.
            start, blocks, loose = self.conn.read(
                lambda db: entry_rows(db, session_id, from_last_compaction, after), snapshot=True
            )
            with collector_paused():
                out: list[D] = []
                for first, _, body in blocks:
                    body = bytes(body)
                    if first < start:  # cut the block's list to its entries from `start` on
                        body = entries_array(split_entries(body)[start - first :])
                    out.extend(decode(body))
                if loose:
                    out.extend(decode(entries_array([bytes(r[0]) for r in loose])))
                return out
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise StoreError(
                f"{self.conn.location}: session {session_id} has an unreadable entry ({exc})"
            ) from exc


def _append_statement(
    session_id: str,
    entries: Sequence[Entry],
    docs: list[tuple[int, str, bool]],
    fence: tuple[str, str, dict[str, Any]],
) -> tuple[str, dict[str, Any]]:
    """The one statement (its own transaction) that appends `entries` and their
    search docs: the session's row, updated (and so locked), gives the entries their
    seqs, so appends to one session, from any runtime, take their turn. One entry
    with at most one doc (what a turn appends) is sent as plain values: arrays cost
    ~50 us more a call to adapt and unnest (bench_postgres.py)."""
    requests = [(ts, t) for ts, t, is_request in docs if is_request]
    args: dict[str, Any] = {"id": session_id, "n": len(entries), "updated": entries[-1].timestamp}
    prefix, fenced, fence_args = fence
    args |= fence_args
    latest = ""
    if requests:
        latest = ", latest_request = %(request)s, latest_request_at = %(request_at)s"
        args |= {"request": text(requests[-1][1]), "request_at": requests[-1][0]}
    session = (
        f"WITH {prefix}s AS (UPDATE sessions SET updated = %(updated)s, "
        f"next_seq = next_seq + %(n)s{latest} WHERE id = %(id)s{fenced} "
        "RETURNING next_seq - %(n)s AS base, packed_seq), "
    )
    if len(entries) == 1 and len(docs) <= 1:
        (entry,) = entries
        args |= {"entry_id": entry.id, "type": entry.type, "body": encode_entry(entry)}
        doc = ""
        if docs:
            doc = (
                "d AS (INSERT INTO search_docs (session_id, ts, text) "
                "SELECT %(id)s, %(ts)s, %(text)s FROM s), "
            )
            args |= {"ts": docs[0][0], "text": text(docs[0][1])}
        return (
            f"{session}{doc}e AS (INSERT INTO entries (session_id, seq, entry_id, type, body) "
            "SELECT %(id)s, s.base, %(entry_id)s, %(type)s, %(body)b FROM s) "
            "SELECT base, packed_seq FROM s"
        ), args
    args |= {
        "ids": [e.id for e in entries],
        "types": [e.type for e in entries],
        "bodies": [encode_entry(e) for e in entries],
        "ts": [ts for ts, _, _ in docs],
        "texts": [text(t) for _, t, _ in docs],
    }
    return (
        f"{session}d AS (INSERT INTO search_docs (session_id, ts, text) "
        "SELECT %(id)s, u.ts, u.text FROM s, "
        "unnest(%(ts)s::bigint[], %(texts)s::text[]) AS u (ts, text)), "
        "e AS (INSERT INTO entries (session_id, seq, entry_id, type, body) "
        "SELECT %(id)s, s.base + u.i - 1, u.entry_id, u.type, u.body FROM s, "
        "unnest(%(ids)s::text[], %(types)s::text[], %(bodies)b::bytea[]) "
        "WITH ORDINALITY AS u (entry_id, type, body, i)) "
        "SELECT base, packed_seq FROM s"
    ), args


def _seq_of(db: Db, session_id: str, entry_id: str | None) -> int | None:
    if not entry_id:
        return None
    hit = db.execute(
        "SELECT seq FROM entries WHERE session_id = %s AND entry_id = %s", (session_id, entry_id)
    ).fetchone()
    return None if hit is None else int(hit[0])


def entry_rows(
    db: Db, session_id: str, from_last_compaction: bool, after: str | None = None
) -> tuple[int, list[Any], list[Any]]:
    """(first seq wanted, block rows, loose rows) of a session, as `sqlite_entries`'s."""
    start = 0
    if from_last_compaction:
        row = db.execute(
            "SELECT seq, body FROM entries WHERE session_id = %s AND type = 'compaction' "
            "ORDER BY seq DESC LIMIT 1",
            (session_id,),
        ).fetchone()
        if row is not None:
            start = row[0]
            kept = _seq_of(
                db, session_id, getattr(decode_entry(bytes(row[1])), "first_kept_entry_id", None)
            )
            if kept is not None:
                start = min(start, kept)
    if after is not None:
        seen = _seq_of(db, session_id, after)
        if seen is not None:
            start = max(start, seen + 1)
    blocks = db.execute(
        "SELECT first_seq, last_seq, body FROM entry_blocks "
        "WHERE session_id = %s AND last_seq >= %s ORDER BY last_seq",
        (session_id, start),
    ).fetchall()
    loose_from = max(start, blocks[-1][1] + 1) if blocks else start
    loose = db.execute(
        "SELECT body FROM entries WHERE session_id = %s AND seq >= %s ORDER BY seq",
        (session_id, loose_from),
    ).fetchall()
    return start, blocks, loose
