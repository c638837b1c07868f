"""Opening the SQLite store: what the file is, checked before SQLite writes to it;
the connection; and a new store laid out, or an earlier schema upgraded in place."""

from __future__ import annotations

import contextlib
import errno
import sqlite3
import urllib.parse
from pathlib import Path

from piagents.store import sqlite_errors
from piagents.store import sqlite_layout as layout
from piagents.store.base import StoreIncompatible, StoreNotFound, StoreUnavailable
from piagents.store.sqlite_layout import APPLICATION_ID, SCHEMA_VERSION

MMAP_SIZE = 1 << 30
SQLITE_MAGIC = b"SQLite format 3\x00"


class _NeedsUpgrade(Exception):
    """A store opened read-only has an earlier schema."""


def open_database(
    path: Path,
    *,
    synchronous: str,
    busy_timeout: float,
    max_bytes: int | None,
    read_only: bool,
) -> sqlite3.Connection:
    """The store at `path`, checked, laid out or upgraded; every failure a StoreError."""
    check_file(path, read_only=read_only)
    try:
        return _open(path, synchronous, busy_timeout, max_bytes, read_only)
    except sqlite3.Error as exc:
        raise sqlite_errors.translate(path, exc, waited=busy_timeout) from exc


def check_file(path: Path, *, read_only: bool) -> None:
    """Refuse what is not a store before SQLite touches it; create the home."""
    try:
        if path.is_dir():
            raise sqlite_errors.cannot_open(path, "a directory")
        if not path.exists() or path.stat().st_size == 0:
            if path.parent.exists() and not path.parent.is_dir():
                raise FileExistsError(errno.EEXIST, "not a directory", str(path.parent))
            if read_only:
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
    check_identity(path, int.from_bytes(head[68:72], "big"), int.from_bytes(head[60:64], "big"), 0)


def check_identity(path: Path, app_id: int, version: int, tables: int) -> None:
    if app_id != APPLICATION_ID and (app_id != 0 or tables):
        raise StoreIncompatible(
            f"{path} is an SQLite database of another program; it was left untouched. "
            "Move it away or choose another home."
        )
    if version > SCHEMA_VERSION:
        raise StoreIncompatible(
            f"{path} was written by a newer pi-agents (schema {version}); it was left "
            "untouched. Upgrade pi-agents to use it."
        )


def _open(
    path: Path, synchronous: str, busy_timeout: float, max_bytes: int | None, read_only: bool
) -> sqlite3.Connection:
    db = _connect(path, busy_timeout, read_only)
    try:
        _init_schema(db, path, synchronous, max_bytes, read_only)
        return db
    except _NeedsUpgrade:
        db.close()
    except BaseException:
        db.close()
        raise
    # An earlier schema opened read-only is upgraded in place first, as any opening is.
    _open(path, synchronous, busy_timeout, max_bytes, False).close()
    return _open(path, synchronous, busy_timeout, max_bytes, True)


def _connect(path: Path, busy_timeout: float, read_only: bool) -> sqlite3.Connection:
    if read_only:
        db = _connect_read_only(path)
    else:
        db = sqlite3.connect(
            path, isolation_level=None, check_same_thread=False, timeout=busy_timeout
        )
    db.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
    # Read through a memory map: a long session's blocks are many overflow pages,
    # read three times faster mapped than copied by read(2).
    db.execute(f"PRAGMA mmap_size = {MMAP_SIZE}")
    return db


def _connect_read_only(path: Path) -> sqlite3.Connection:
    uri = "file:" + urllib.parse.quote(str(path.absolute()))
    db = sqlite3.connect(uri + "?mode=ro", uri=True, isolation_level=None, check_same_thread=False)
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


def _init_schema(
    db: sqlite3.Connection, path: Path, synchronous: str, max_bytes: int | None, read_only: bool
) -> None:
    """Check what the file is (reading only), then lay it out or upgrade it."""
    app_id = db.execute("PRAGMA application_id").fetchone()[0]
    tables = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    version = db.execute("PRAGMA user_version").fetchone()[0]
    check_identity(path, app_id, version, tables)
    if read_only:
        if app_id == 0:
            raise StoreNotFound(f"{path}: there is no pi-agents store here yet.")
        if version < SCHEMA_VERSION:
            raise _NeedsUpgrade
        return
    if db.execute("PRAGMA journal_mode=WAL").fetchone()[0].lower() != "wal":
        raise StoreUnavailable(f"{path}: cannot switch the database to WAL mode")
    db.execute(f"PRAGMA synchronous={synchronous}")
    if max_bytes is not None:
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
        db.execute(f"PRAGMA max_page_count = {max(1, max_bytes // page_size)}")
    if app_id == 0:
        layout.create(db)
    else:
        _upgrade(db)


def _upgrade(db: sqlite3.Connection) -> None:
    """Bring a store written by an earlier pi-agents up to this schema, in place."""
    db.execute("BEGIN IMMEDIATE")
    try:
        layout.upgrade(db)
        db.execute("COMMIT")
    except BaseException:
        # SQLite may have rolled back itself (a full disk, an I/O error): nothing to undo.
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")
        raise
