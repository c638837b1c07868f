"""The default store: one SQLite database (WAL) in the runtime's home."""

from __future__ import annotations

import contextlib
import errno
import json
import sqlite3
import threading
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from piagents.ai.messages import UserMessage, now_ms
from piagents.store import lease, sqlite_errors
from piagents.store import sqlite_layout as layout
from piagents.store.base import (
    _UNSET,
    LeaseHolder,
    SessionInUse,
    SessionNotFound,
    StoreError,
    StoreIncompatible,
    StoreNotFound,
    StoreUnavailable,
)
from piagents.store.collector import collector_paused
from piagents.store.records import (
    CompactionEntry,
    ContextItem,
    Entry,
    GenerationRecord,
    InputRecord,
    MessageEntry,
    SearchHit,
    SessionRecord,
    decode_context_items,
    decode_entries,
    decode_entry,
    decode_generation,
    encode_entry,
    encode_generation,
    entries_array,
    split_entries,
)
from piagents.store.sqlite_layout import APPLICATION_ID, BLOCK, SCHEMA_VERSION

MMAP_SIZE = 1 << 30

T = TypeVar("T")
D = TypeVar("D")
SQLITE_MAGIC = b"SQLite format 3\x00"


class _NeedsUpgrade(Exception):
    """A store opened read-only has an earlier schema."""


class SQLiteStore:
    """Sessions and entries in `<home>/store.db`."""

    def __init__(
        self,
        path: str | Path,
        *,
        synchronous: str = "NORMAL",
        busy_timeout: float = 10.0,
        max_bytes: int | None = None,
        read_only: bool = False,
    ) -> None:
        """Open (or create) the store at `path`.

        `busy_timeout`: how long a write waits for another process's write lock
        before it fails with StoreBusy. `max_bytes`: a size limit; writes that need
        more fail with StoreFull, as on a full disk. `read_only`: for reading only
        (what read-only commands use): it works in a read-only home and on a full
        disk, and writes nothing, except that a store of an earlier schema is first
        upgraded in place as any opening does. Every failure is a StoreError naming
        the path and the cause.
        """
        self.path = Path(path)
        self.location = str(self.path)
        self.busy_timeout = busy_timeout
        self.read_only = read_only
        self._lock = threading.RLock()
        self._check_file()
        try:
            self._db = self._open(synchronous, max_bytes)
        except sqlite3.Error as exc:
            raise self._error(exc) from exc

    # ---- opening -------------------------------------------------------------

    def _check_file(self) -> None:
        """Refuse what is not a store before SQLite touches it; create the home."""
        path = self.path
        try:
            if path.is_dir():
                raise sqlite_errors.cannot_open(path, "a directory")
            if not path.exists() or path.stat().st_size == 0:
                if path.parent.exists() and not path.parent.is_dir():
                    raise FileExistsError(errno.EEXIST, "not a directory", str(path.parent))
                if self.read_only:
                    raise StoreNotFound(f"{path}: there is no pi-agents store here yet.")
                path.parent.mkdir(parents=True, exist_ok=True)
                return
            with open(path, "rb") as f:
                head = f.read(100)
        except OSError as exc:
            if exc.filename is not None and Path(exc.filename) == path:
                raise sqlite_errors.cannot_open(path, exc.strerror or str(exc)) from exc
            raise sqlite_errors.home_error(path.parent, exc) from exc
        if head[:16] != SQLITE_MAGIC:
            raise StoreIncompatible(
                f"{path} is not a pi-agents store (not an SQLite database); "
                "it was left untouched. Move it away or choose another home."
            )
        if len(head) < 100 or head[21:24] != b"\x40\x20\x20":  # fixed in every valid header
            raise sqlite_errors.damaged(path, "its header is not a valid SQLite header")
        # The header as last checkpointed: refuse what is not ours before SQLite opens
        # it at all (opening a WAL database makes its -shm and -wal files).
        self._check_identity(
            int.from_bytes(head[68:72], "big"), int.from_bytes(head[60:64], "big"), 0
        )

    def _check_identity(self, app_id: int, version: int, tables: int) -> None:
        if app_id != APPLICATION_ID and (app_id != 0 or tables):
            raise StoreIncompatible(
                f"{self.path} is an SQLite database of another program; it was left untouched. "
                "Move it away or choose another home."
            )
        if version > SCHEMA_VERSION:
            raise StoreIncompatible(
                f"{self.path} was written by a newer pi-agents (schema {version}); it was left "
                "untouched. Upgrade pi-agents to use it."
            )

    def _open(self, synchronous: str, max_bytes: int | None) -> sqlite3.Connection:
        db = self._db = self._connect()
        try:
            self._init_schema(synchronous, max_bytes)
            return db
        except _NeedsUpgrade:
            db.close()
        except BaseException:
            db.close()
            raise
        # An earlier schema opened read-only is upgraded in place first, as any opening is.
        self.read_only = False
        try:
            self._open(synchronous, max_bytes).close()
        finally:
            self.read_only = True
        return self._open(synchronous, max_bytes)

    def _connect(self) -> sqlite3.Connection:
        if self.read_only:
            db = self._connect_read_only()
        else:
            db = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=self.busy_timeout
            )
        db.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
        # Read through a memory map: a long session's blocks are many overflow pages,
        # read three times faster mapped than copied by read(2).
        db.execute(f"PRAGMA mmap_size = {MMAP_SIZE}")
        return db

    def _connect_read_only(self) -> sqlite3.Connection:
        uri = "file:" + urllib.parse.quote(str(self.path.absolute()))
        db = sqlite3.connect(
            uri + "?mode=ro", uri=True, isolation_level=None, check_same_thread=False
        )
        try:
            db.execute("PRAGMA application_id").fetchone()
            return db
        except sqlite3.OperationalError as exc:
            db.close()
            if not getattr(exc, "sqlite_errorname", "").startswith(
                ("SQLITE_CANTOPEN", "SQLITE_IOERR", "SQLITE_FULL")
            ):
                raise
        # A read-only home or a full disk: the WAL index cannot be made. Nothing can be
        # written to the store there either, so it is read as it is on disk.
        return sqlite3.connect(
            uri + "?mode=ro&immutable=1", uri=True, isolation_level=None, check_same_thread=False
        )

    def _init_schema(self, synchronous: str, max_bytes: int | None) -> None:
        """Check what the file is (reading only), then lay it out or upgrade it."""
        db = self._db
        app_id = db.execute("PRAGMA application_id").fetchone()[0]
        tables = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        version = db.execute("PRAGMA user_version").fetchone()[0]
        self._check_identity(app_id, version, tables)
        if self.read_only:
            if app_id == 0:
                raise StoreNotFound(f"{self.path}: there is no pi-agents store here yet.")
            if version < SCHEMA_VERSION:
                raise _NeedsUpgrade
            return
        if db.execute("PRAGMA journal_mode=WAL").fetchone()[0].lower() != "wal":
            raise StoreUnavailable(f"{self.path}: cannot switch the database to WAL mode")
        db.execute(f"PRAGMA synchronous={synchronous}")
        if max_bytes is not None:
            page_size = db.execute("PRAGMA page_size").fetchone()[0]
            db.execute(f"PRAGMA max_page_count = {max(1, max_bytes // page_size)}")
        if app_id == 0:
            layout.create(db)
        else:
            self._upgrade()

    def _upgrade(self) -> None:
        """Bring a store written by an earlier pi-agents up to this schema, in place."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            layout.upgrade(db)
            db.execute("COMMIT")
        except BaseException:
            self._roll_back()
            raise

    # ---- helpers ---------------------------------------------------------------

    def _error(self, exc: sqlite3.Error) -> StoreError:
        return sqlite_errors.translate(self.path, exc, waited=self.busy_timeout)

    def _roll_back(self) -> None:
        # SQLite may have rolled back itself (a full disk, an I/O error): nothing to undo.
        with contextlib.suppress(sqlite3.Error):
            self._db.execute("ROLLBACK")

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; any SQLite error in it is the store's own, typed."""
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise self._error(exc) from exc
            try:
                yield self._db
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                self._roll_back()
                raise self._error(exc) from exc
            except BaseException:
                self._roll_back()
                raise

    def _fetch(self, sql: str, args: Sequence[Any]) -> list[Any]:
        return self._read(lambda db: db.execute(sql, args).fetchall())

    def _read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            try:
                return fn(self._db)
            except sqlite3.Error as exc:
                raise self._error(exc) from exc

    # ---- sessions ----------------------------------------------------------

    def create_session(self, record: SessionRecord) -> None:
        with self._tx() as db:
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

    def discard_session(self, session_id: str) -> None:
        with self._tx() as db:
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

    _COLS = "id, cwd, name, model, thinking, owner_id, root_id, created, updated, meta"

    @staticmethod
    def _record(row: Sequence[Any]) -> SessionRecord:
        return SessionRecord(
            id=row[0],
            cwd=row[1],
            name=row[2],
            model=row[3],
            thinking=row[4],
            owner_id=row[5],
            root_id=row[6],
            created=row[7],
            updated=row[8],
            meta=json.loads(row[9]) if row[9] != "{}" else {},
        )

    def get_session(self, session_id: str) -> SessionRecord | None:
        row = self._read(
            lambda db: db.execute(
                f"SELECT {self._COLS} FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
        )
        return self._record(row) if row else None

    def list_sessions(
        self,
        *,
        cwd: str | None = None,
        roots_only: bool = False,
        limit: int | None = None,
        owner_id: str | None = None,
        root_id: str | None = None,
    ) -> list[SessionRecord]:
        sql = f"SELECT {self._COLS} FROM sessions"
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
        rows = self._read(lambda db: db.execute(sql, args).fetchall())
        return [self._record(r) for r in rows]

    def roots_mark(self) -> tuple[int, int]:
        row = self._fetch(
            "SELECT count(*), coalesce(max(created), 0) FROM sessions WHERE owner_id IS NULL", ()
        )[0]
        return int(row[0]), int(row[1])

    def update_session(
        self,
        session_id: str,
        *,
        name: str | None = _UNSET,
        model: str = _UNSET,
        thinking: str = _UNSET,
        meta: dict[str, Any] = _UNSET,
    ) -> SessionRecord:
        sets: list[str] = []
        args: list[Any] = []
        for col, value in (("name", name), ("model", model), ("thinking", thinking)):
            if value is not _UNSET:
                sets.append(f"{col} = ?")
                args.append(value)
        if meta is not _UNSET:
            sets.append("meta = ?")
            args.append(json.dumps(meta))
        with self._tx() as db:
            if sets:
                db.execute(
                    f"UPDATE sessions SET {', '.join(sets)} WHERE id = ?", (*args, session_id)
                )
            row = db.execute(
                f"SELECT {self._COLS} FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
        if row is None:
            raise SessionNotFound(f"No session {session_id}")
        return self._record(row)

    # ---- entries ------------------------------------------------------------

    def append(self, session_id: str, entries: Sequence[Entry]) -> None:
        if not entries:
            return
        rows = [(e.id, e.type, encode_entry(e)) for e in entries]
        with self._tx() as db:
            # Read in the transaction, never cached: another runtime may have appended to
            # this session since (it continued it while this one did not hold it).
            seq, packed = layout.positions(db, session_id)
            end = seq + len(rows)
            db.executemany(
                "INSERT INTO entries (session_id, seq, entry_id, type, body) VALUES (?,?,?,?,?)",
                [(session_id, seq + i, *row) for i, row in enumerate(rows)],
            )
            cur = db.execute(
                "UPDATE sessions SET updated = ? WHERE id = ?",
                (entries[-1].timestamp, session_id),
            )
            if cur.rowcount == 0:
                raise SessionNotFound(f"No session {session_id}")
            if end - packed >= BLOCK:
                packed = layout.pack(db, session_id, packed, end)
            docs = _search_docs(entries)
            if docs:
                db.executemany(
                    "INSERT INTO search_docs (session_id, ts, text) VALUES (?,?,?)",
                    [(session_id, ts, text) for ts, text, _ in docs],
                )
                requests = [(ts, text) for ts, text, is_request in docs if is_request]
                if requests:
                    db.execute(
                        "UPDATE sessions SET latest_request = ?, latest_request_at = ? "
                        "WHERE id = ?",
                        (requests[-1][1], requests[-1][0], session_id),
                    )

    def has_entries(self, session_id: str) -> bool:
        rows = self._fetch("SELECT 1 FROM entries WHERE session_id = ? LIMIT 1", (session_id,))
        return bool(rows)

    def entries(
        self, session_id: str, *, from_last_compaction: bool = False, after: str | None = None
    ) -> list[Entry]:
        return self._decoded(session_id, from_last_compaction, after, decode_entries)

    def context_items(self, session_id: str) -> tuple[list[ContextItem], str | None]:
        items = self._decoded(session_id, True, None, decode_context_items)
        last = self._fetch(
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
            start, blocks, loose = self._read(
                lambda db: _entry_rows(db, session_id, from_last_compaction, after)
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
                f"{self.path}: session {session_id} has an unreadable entry ({exc})"
            ) from exc

    # ---- inputs ---------------------------------------------------------------

    _INPUT_COLS = (
        "id, root_id, recipient_id, sender_id, kind, delivery, text, has_result, status, "
        "result, read, aborted_by_owner, accepted, ended, seq, delivered, rendered"
    )

    @staticmethod
    def _input(row: Sequence[Any]) -> InputRecord:
        return InputRecord(
            id=row[0],
            root_id=row[1],
            recipient_id=row[2],
            sender_id=row[3],
            kind=row[4],
            delivery=row[5],
            text=row[6],
            has_result=bool(row[7]),
            status=row[8],
            result=row[9],
            read=bool(row[10]),
            aborted_by_owner=bool(row[11]),
            accepted=row[12],
            ended=row[13],
            seq=row[14],
            delivered=bool(row[15]),
            rendered=row[16],
        )

    def add_input(self, record: InputRecord) -> InputRecord:
        with self._tx() as db:
            seq = self._insert_input(db, record)
        return replace(record, seq=seq)

    @staticmethod
    def _insert_input(db: sqlite3.Connection, record: InputRecord) -> int:
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

    def end_inputs(
        self,
        ids: Sequence[str],
        status: str,
        result: str | None,
        *,
        aborted_by_owner: bool = False,
        ended: int | None = None,
    ) -> list[InputRecord]:
        if not ids:
            return []
        ended = ended if ended is not None else now_ms()
        marks = ",".join("?" * len(ids))
        with self._tx() as db:
            db.execute(
                f"UPDATE inputs SET status = ?, result = ?, aborted_by_owner = ?, ended = ? "
                f"WHERE status = 'outstanding' AND id IN ({marks})",
                (status, result, int(aborted_by_owner), ended, *ids),
            )
            rows = db.execute(
                f"SELECT {self._INPUT_COLS} FROM inputs WHERE id IN ({marks}) AND ended = ? "
                "ORDER BY seq",
                (*ids, ended),
            ).fetchall()
        return [self._input(r) for r in rows]

    def take_undelivered(self, recipient_ids: Sequence[str]) -> list[InputRecord]:
        """Inputs waiting in the store for these recipients, now marked delivered."""
        if not recipient_ids:
            return []
        marks = ",".join("?" * len(recipient_ids))
        with self._tx() as db:
            rows = db.execute(
                f"SELECT {self._INPUT_COLS} FROM inputs WHERE delivered = 0 "
                f"AND recipient_id IN ({marks}) ORDER BY seq",
                tuple(recipient_ids),
            ).fetchall()
            if rows:
                db.execute(
                    f"UPDATE inputs SET delivered = 1 WHERE delivered = 0 "
                    f"AND recipient_id IN ({marks})",
                    tuple(recipient_ids),
                )
        return [replace(self._input(r), delivered=True) for r in rows]

    def mark_read(self, ids: Sequence[str]) -> None:
        if ids:
            marks = ",".join("?" * len(ids))
            with self._tx() as db:
                db.execute(f"UPDATE inputs SET read = 1 WHERE id IN ({marks})", tuple(ids))

    def inputs(
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
        sql = f"SELECT {self._INPUT_COLS} FROM inputs"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY coalesce(ended, 9e18), seq"
        rows = self._read(lambda db: db.execute(sql, args).fetchall())
        return [self._input(r) for r in rows]

    # ---- search -----------------------------------------------------------------

    _SCOPE = "(s.root_id = ? OR s.id = ? OR (? AND s.owner_id IS NULL))"

    def search(
        self, root_id: str, include_roots: bool, groups: Sequence[Sequence[str]]
    ) -> list[SearchHit]:
        """Latest match per session of a tree (and of all roots): every term of some
        group found, case-insensitively, in one document together with the session's
        ID, name and cwd, or in those alone."""
        if not groups:
            return []
        # Terms hold no spaces, so a term found in "ID name cwd text" is found in one
        # of those fields: one LIKE per field, no string building per row.
        fields = ("s.id", "s.name", "s.cwd")
        meta_term = "(" + " OR ".join(f"{f} LIKE ?1 ESCAPE '\\'" for f in fields) + ")"
        doc_term = "(d.text LIKE ?1 ESCAPE '\\' OR " + meta_term[1:]

        def condition(term_sql: str) -> tuple[str, list[str]]:
            parts: list[str] = []
            args: list[str] = []
            for g in groups:
                ands = []
                for t in g:
                    ands.append(term_sql.replace("?1", f"?{len(args) + 4}"))
                    args.append(_like(t))
                parts.append("(" + " AND ".join(ands) + ")")
            return " OR ".join(parts), args

        doc_cond, patterns = condition(doc_term)
        meta_cond, _ = condition(meta_term)
        scope = (root_id, root_id, int(include_roots))
        scope_sql = "(s.root_id = ?1 OR s.id = ?2 OR (?3 AND s.owner_id IS NULL))"
        rows = self._fetch(
            f"SELECT d.session_id, d.text, max(d.ts) FROM search_docs d "
            f"JOIN sessions s ON s.id = d.session_id "
            f"WHERE {scope_sql} AND ({doc_cond}) GROUP BY d.session_id",
            (*scope, *patterns),
        ) + self._fetch(
            f"SELECT s.id, NULL, coalesce(s.latest_request_at, s.created) FROM sessions s "
            f"WHERE {scope_sql} AND ({meta_cond})",
            (*scope, *patterns),
        )
        hits: dict[str, SearchHit] = {}
        for sid, text, ts in rows:
            current = hits.get(sid)
            if (
                current is None
                or ts > current.timestamp
                or (ts == current.timestamp and text is not None)
            ):
                hits[sid] = SearchHit(sid, text, int(ts))
        return list(hits.values())

    def request_times(self, root_id: str, include_roots: bool) -> dict[str, int]:
        """When each session of a tree (and of all roots) last got a request, or was created."""
        rows = self._fetch(
            f"SELECT s.id, coalesce(s.latest_request_at, s.created) FROM sessions s "
            f"WHERE {self._SCOPE}",
            (root_id, root_id, int(include_roots)),
        )
        return {sid: int(ts) for sid, ts in rows}

    def latest_requests(self, session_ids: Sequence[str]) -> dict[str, tuple[int, str]]:
        out: dict[str, tuple[int, str]] = {}
        for chunk in _chunks(list(session_ids), 500):
            marks = ",".join("?" * len(chunk))
            sql = (
                f"SELECT id, latest_request_at, latest_request FROM sessions "
                f"WHERE id IN ({marks}) AND latest_request IS NOT NULL"
            )
            rows = self._fetch(sql, chunk)
            for sid, ts, text in rows:
                out[sid] = (int(ts), text)
        return out

    def set_state(self, session_id: str, state: str) -> None:
        with self._tx() as db:
            db.execute("UPDATE sessions SET state = ? WHERE id = ?", (state, session_id))

    def states(self, session_ids: Sequence[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for chunk in _chunks(list(session_ids), 500):
            marks = ",".join("?" * len(chunk))
            sql = (
                f"SELECT id, state, lease_pid, lease_host, lease_token, lease_started "
                f"FROM sessions WHERE id IN ({marks})"
            )
            rows = self._fetch(sql, chunk)
            for sid, state, pid, host, token, started in rows:
                held = pid is not None and lease.is_alive(
                    LeaseHolder(pid, host, token, started or "")
                )
                out[sid] = state if held else "offline"
        return out

    # ---- leases -------------------------------------------------------------

    def acquire_lease(self, session_id: str, holder: LeaseHolder) -> None:
        with self._tx() as db:
            row = db.execute(
                "SELECT lease_pid, lease_host, lease_token, lease_started FROM sessions "
                "WHERE id = ?",
                (session_id,),
            ).fetchone()
            if row is None:
                raise SessionNotFound(f"No session {session_id}")
            if row[0] is not None:
                current = LeaseHolder(row[0], row[1], row[2], row[3] or "")
                if current.token != holder.token and lease.is_alive(current):
                    raise SessionInUse(session_id, current)
            db.execute(
                "UPDATE sessions SET lease_pid=?, lease_host=?, lease_token=?, lease_started=? "
                "WHERE id = ?",
                (holder.pid, holder.host, holder.token, holder.started, session_id),
            )

    def release_lease(self, session_id: str, holder: LeaseHolder) -> None:
        with self._tx() as db:
            db.execute(
                "UPDATE sessions SET lease_pid=NULL, lease_host=NULL, lease_token=NULL, "
                "lease_started=NULL WHERE id = ? AND lease_token = ?",
                (session_id, holder.token),
            )

    def lease_of(self, session_id: str) -> LeaseHolder | None:
        row = self._read(
            lambda db: db.execute(
                "SELECT lease_pid, lease_host, lease_token, lease_started FROM sessions "
                "WHERE id = ?",
                (session_id,),
            ).fetchone()
        )
        if row is None or row[0] is None:
            return None
        holder = LeaseHolder(row[0], row[1], row[2], row[3] or "")
        return holder if lease.is_alive(holder) else None

    # ---- supervision generations --------------------------------------------------

    def add_generation(self, generation: GenerationRecord) -> None:
        g = generation
        with self._tx() as db:
            seq = db.execute("SELECT coalesce(max(seq), 0) + 1 FROM generations").fetchone()[0]
            db.execute(
                "INSERT INTO generations (id, root_id, owner_id, session_id, state, ended, seq, "
                "body) VALUES (?,?,?,?,?,0,?,?)",
                (g.id, g.root_id, g.owner_id, g.session_id, g.state, seq, encode_generation(g)),
            )

    def update_generation(
        self,
        generation: GenerationRecord,
        *,
        expect_state: str | None = None,
        end: bool = False,
        result: InputRecord | None = None,
    ) -> bool:
        g = generation
        sql = "UPDATE generations SET state = ?, ended = ?, body = ? WHERE id = ? AND ended = 0"
        args: list[Any] = [g.state, int(end), encode_generation(g), g.id]
        if expect_state is not None:
            sql += " AND state = ?"
            args.append(expect_state)
        with self._tx() as db:
            if db.execute(sql, args).rowcount == 0:
                return False
            if result is not None:
                self._insert_input(db, result)
        return True

    def get_generation(self, generation_id: str) -> GenerationRecord | None:
        rows = self._fetch("SELECT body FROM generations WHERE id = ?", (generation_id,))
        return self._generation(rows[0][0]) if rows else None

    def generations(
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
        return [self._generation(r[0]) for r in self._fetch(sql + " ORDER BY seq", args)]

    def _generation(self, body: bytes | str) -> GenerationRecord:
        try:
            return decode_generation(body)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise StoreError(f"{self.path}: an unreadable generation record ({exc})") from exc

    def close(self) -> None:
        with self._lock, contextlib.suppress(sqlite3.Error):
            self._db.close()


def _seq_of(db: sqlite3.Connection, session_id: str, entry_id: str | None) -> int | None:
    if not entry_id:
        return None
    hit = db.execute(
        "SELECT seq FROM entries WHERE session_id = ? AND entry_id = ?", (session_id, entry_id)
    ).fetchone()
    return None if hit is None else int(hit[0])


def _entry_rows(
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


def _search_docs(entries: Sequence[Entry]) -> list[tuple[int, str, bool]]:
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


def _like(term: str) -> str:
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
