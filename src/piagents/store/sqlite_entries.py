"""A session's append-only entries in the SQLite store: appended one row each,
packed into blocks, and read back (whole, from the context start, or after an
entry) with as little decoding as the reader needs."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import msgspec

from piagents.ai.messages import UserMessage
from piagents.store import sqlite_layout as layout
from piagents.store.base import SessionNotFound, StoreError
from piagents.store.collector import collector_paused
from piagents.store.records import (
    CompactionEntry,
    ContextItem,
    Entry,
    MessageEntry,
    decode_context_items,
    decode_entries,
    decode_entry,
    encode_entry,
    entries_array,
    split_entries,
)
from piagents.store.sqlite_connection import Connection
from piagents.store.sqlite_layout import BLOCK

D = TypeVar("D")


class EntryLog:
    """The `entries`, `entry_blocks` and `search_docs` rows of every session."""

    def __init__(
        self, conn: Connection, fence: Callable[[sqlite3.Connection, str], None] | None = None
    ) -> None:
        self.conn = conn
        self._fence = fence  # refuses an append by a holder whose lease was taken

    def append(self, session_id: str, entries: Sequence[Entry]) -> None:
        if not entries:
            return
        rows = [(e.id, e.type, encode_entry(e)) for e in entries]
        with self.conn.tx() as db:
            if self._fence is not None:
                self._fence(db, session_id)
            # Read in the transaction, never cached: another runtime may have appended to
            # this session since (it continued it while this one did not hold it). One
            # this transaction made has none yet (a spawn's child and its first message).
            if self.conn.take_made(session_id):
                seq, packed = 0, 0
            else:
                seq, packed = layout.positions(db, session_id)
            end = seq + len(rows)
            db.executemany(
                "INSERT INTO entries (session_id, seq, entry_id, type, body) VALUES (?,?,?,?,?)",
                [(session_id, seq + i, *row) for i, row in enumerate(rows)],
            )
            docs = search_docs(entries)
            requests = [(ts, text) for ts, text, is_request in docs if is_request]
            if requests:  # one statement either way: most appends are one message
                cur = db.execute(
                    "UPDATE sessions SET updated = ?, latest_request = ?, latest_request_at = ? "
                    "WHERE id = ?",
                    (entries[-1].timestamp, requests[-1][1], requests[-1][0], session_id),
                )
            else:
                cur = db.execute(
                    "UPDATE sessions SET updated = ? WHERE id = ?",
                    (entries[-1].timestamp, session_id),
                )
            if cur.rowcount == 0:
                raise SessionNotFound(f"No session {session_id}")
            if end - packed >= BLOCK:
                packed = layout.pack(db, session_id, packed, end)
            if docs:
                db.executemany(
                    "INSERT INTO search_docs (session_id, ts, text) VALUES (?,?,?)",
                    [(session_id, ts, text) for ts, text, _ in docs],
                )

    def has_entries(self, session_id: str) -> bool:
        rows = self.conn.fetch("SELECT 1 FROM entries WHERE session_id = ? LIMIT 1", (session_id,))
        return bool(rows)

    def entries(
        self, session_id: str, *, from_last_compaction: bool = False, after: str | None = None
    ) -> list[Entry]:
        return self._decoded(session_id, from_last_compaction, after, decode_entries)

    def context_items(self, session_id: str) -> tuple[list[ContextItem], str | None]:
        items = self._decoded(session_id, True, None, decode_context_items)
        last = self.conn.fetch(
            "SELECT entry_id FROM entries WHERE session_id = ? ORDER BY seq DESC LIMIT 1",
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
        """The session's entries (from the context start, or after an entry, if asked)
        decoded by `decode`, in order."""
        try:
            start, blocks, loose = self.conn.read(
                lambda db: entry_rows(db, session_id, from_last_compaction, after)
            )
            with collector_paused():
                out: list[D] = []
                for first, _, body in blocks:
                    body = layout.body_bytes(body)
                    if first < start:  # cut the block's list to its entries from `start` on
                        body = entries_array(split_entries(body)[start - first :])
                    out.extend(decode(body))
                if loose:
                    out.extend(decode(entries_array([layout.body_bytes(r[0]) for r in loose])))
                return out
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise StoreError(
                f"{self.conn.path}: session {session_id} has an unreadable entry ({exc})"
            ) from exc


def _seq_of(db: sqlite3.Connection, session_id: str, entry_id: str | None) -> int | None:
    if not entry_id:
        return None
    hit = db.execute(
        "SELECT seq FROM entries WHERE session_id = ? AND entry_id = ?", (session_id, entry_id)
    ).fetchone()
    return None if hit is None else int(hit[0])


def entry_rows(
    db: sqlite3.Connection, session_id: str, from_last_compaction: bool, after: str | None = None
) -> tuple[int, list[Any], list[Any]]:
    """(first seq wanted, block rows, loose rows) of a session.

    From the last compaction on, and from the first entry it keeps, when asked; only
    those after the entry `after`, when given (all of them when it is not there).
    """
    start = 0
    if from_last_compaction:
        row = db.execute(
            # The planner prefers the primary key (a scan of the whole session).
            "SELECT seq, body FROM entries INDEXED BY entries_compaction "
            "WHERE session_id = ? AND type = 'compaction' ORDER BY seq DESC LIMIT 1",
            (session_id,),
        ).fetchone()
        if row is not None:
            start = row[0]
            kept = _seq_of(
                db, session_id, getattr(decode_entry(row[1]), "first_kept_entry_id", None)
            )
            if kept is not None:
                start = min(start, kept)
    if after is not None:
        seen = _seq_of(db, session_id, after)
        if seen is not None:
            start = max(start, seen + 1)
    blocks = db.execute(
        "SELECT first_seq, last_seq, body FROM entry_blocks "
        "WHERE session_id = ? AND last_seq >= ? ORDER BY last_seq",
        (session_id, start),
    ).fetchall()
    loose_from = max(start, blocks[-1][1] + 1) if blocks else start
    loose = db.execute(
        "SELECT body FROM entries WHERE session_id = ? AND seq >= ? ORDER BY seq",
        (session_id, loose_from),
    ).fetchall()
    return start, blocks, loose


def search_docs(entries: Sequence[Entry]) -> list[tuple[int, str, bool]]:
    """(time, text, is a request) of the entries `list` searches."""
    docs: list[tuple[int, str, bool]] = []
    for e in entries:
        if isinstance(e, MessageEntry) and isinstance(e.message, UserMessage):
            text = e.message.text
            if text:
                docs.append((e.timestamp, text, True))
        elif isinstance(e, CompactionEntry):
            docs.append((e.timestamp, e.summary, False))
    return docs
