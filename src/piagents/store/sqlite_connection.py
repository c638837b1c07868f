"""The store's one SQLite connection: its lock, its write transactions and its
reads, every SQLite error turned into the store's own."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from piagents.store import sqlite_errors
from piagents.store.base import DOOMED, StoreError
from piagents.store.sqlite_checkpoint import Checkpointer

T = TypeVar("T")


class Connection:
    """An open database at `path`, used by one thread at a time."""

    def __init__(
        self,
        path: Path,
        db: sqlite3.Connection,
        *,
        busy_timeout: float,
        checkpointer: Checkpointer | None = None,
    ) -> None:
        self.path = path
        self.db = db
        self.busy_timeout = busy_timeout
        self.checkpointer = checkpointer
        self._lock = threading.RLock()
        self._depth = 0  # transactions open on the thread holding the lock
        self.commits = 0  # transactions this connection committed (any thread)
        self.begun = 0  # transactions it began: names the one open now
        self.rolled_back = 0  # transactions (or savepoints) it undid
        self._version: tuple[int, int] = (0, -1)  # (transaction, PRAGMA data_version in it)
        self._made: tuple[int, set[str]] = (0, set())  # (transaction, sessions it made)
        self._atomic = False  # the open transaction's calls are no savepoints
        self._doomed = False  # ... and one of them failed: it commits nothing

    def error(self, exc: sqlite3.Error) -> StoreError:
        return sqlite_errors.translate(self.path, exc, waited=self.busy_timeout)

    def _roll_back(self) -> None:
        self.rolled_back += 1
        # SQLite may have rolled back itself (a full disk, an I/O error): nothing to undo.
        with contextlib.suppress(sqlite3.Error):
            self.db.execute("ROLLBACK")

    def tx(self, *, one_write: bool = False, atomic: bool = False) -> _Transaction:
        """One write transaction; any SQLite error in it is the store's own, typed.

        Inside another one (on the same thread) it is a savepoint of that one: its
        failure undoes only itself, and it is committed when the outer one is. A body
        that makes `one_write` (a single statement that changes rows, besides reads)
        needs no savepoint for that: SQLite undoes a statement that fails by itself,
        and an error that undoes more undoes the whole transaction either way.

        `atomic` (an outermost transaction, a store batch's): the calls inside are no
        savepoints; one that fails dooms the transaction, which then commits nothing
        and raises as it ends."""
        return _Transaction(self, one_write, atomic)

    def outside_version(self) -> int:
        """Inside a write transaction: what other connections had committed when it
        began (PRAGMA data_version, read once a transaction; no one else commits while
        it holds the write lock)."""
        begun, version = self._version
        if begun != self.begun:
            version = int(self.db.execute("PRAGMA data_version").fetchone()[0])
            self._version = (self.begun, version)
        return version

    def made(self, session_id: str) -> None:
        """Inside a write transaction: it made this session (it has no entries yet)."""
        begun, made = self._made
        if begun != self.begun:
            made = set()
            self._made = (self.begun, made)
        made.add(session_id)

    def take_made(self, session_id: str) -> bool:
        """Inside a write transaction: whether it made this session and nothing has been
        appended to it since (asked by the first append, which starts it at seq 0)."""
        begun, made = self._made
        if begun != self.begun or session_id not in made:
            return False
        made.discard(session_id)
        return True

    def stamp(self) -> tuple[int, int]:
        """(what other connections committed, what this one committed), as counts that
        change with every commit: two equal stamps mean the database did not change."""
        with self._lock:
            try:
                version = int(self.db.execute("PRAGMA data_version").fetchone()[0])
            except sqlite3.Error as exc:
                raise self.error(exc) from exc
            return version, self.commits

    def fetch(self, sql: str, args: Sequence[Any]) -> list[Any]:
        return self.read(lambda db: db.execute(sql, args).fetchall())

    def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            try:
                return fn(self.db)
            except sqlite3.Error as exc:
                raise self.error(exc) from exc

    def close(self) -> None:
        if self.checkpointer is not None:
            self.checkpointer.close()
        with self._lock, contextlib.suppress(sqlite3.Error):
            self.db.close()


_OUTER, _SAVEPOINT, _ONE_WRITE = 0, 1, 2


class _Transaction:
    """`Connection.tx()`: a class rather than a generator's context manager, which costs
    a microsecond more each time (a spawn enters four)."""

    __slots__ = ("_atomic", "_conn", "_kind", "_name", "_one_write")

    def __init__(self, conn: Connection, one_write: bool, atomic: bool) -> None:
        self._conn = conn
        self._one_write = one_write
        self._atomic = atomic
        self._kind = _OUTER
        self._name = ""

    def __enter__(self) -> sqlite3.Connection:
        conn = self._conn
        conn._lock.acquire()
        try:
            if conn._depth:
                if self._one_write or conn._atomic:
                    self._kind = _ONE_WRITE
                    return conn.db
                name = f"inner{conn._depth}"
                try:
                    conn.db.execute(f"SAVEPOINT {name}")
                except sqlite3.Error as exc:
                    raise conn.error(exc) from exc
                conn._depth += 1
                self._kind, self._name = _SAVEPOINT, name
                return conn.db
            try:
                conn.db.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise conn.error(exc) from exc
            conn.begun += 1
            conn._depth = 1
            conn._atomic, conn._doomed = self._atomic, False
            self._kind = _OUTER
            return conn.db
        except BaseException:
            conn._lock.release()
            raise

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        conn = self._conn
        try:
            if self._kind == _ONE_WRITE:
                if exc is not None:
                    conn.rolled_back += 1  # as a savepoint's: what was read may differ
                    if conn._atomic:  # what it did before it failed is not undone
                        conn._doomed = True
                    if isinstance(exc, sqlite3.Error):
                        raise conn.error(exc) from exc
            elif self._kind == _SAVEPOINT:
                self._end_savepoint(conn, exc)
            else:
                self._end(conn, exc)
        finally:
            conn._lock.release()

    def _end_savepoint(self, conn: Connection, exc: BaseException | None) -> None:
        name = self._name
        try:
            if exc is None:
                try:
                    conn.db.execute(f"RELEASE {name}")
                    return
                except sqlite3.Error as failed:
                    exc = failed
            conn.rolled_back += 1
            with contextlib.suppress(sqlite3.Error):
                conn.db.execute(f"ROLLBACK TO {name}")
                conn.db.execute(f"RELEASE {name}")
            if isinstance(exc, sqlite3.Error):
                raise conn.error(exc) from exc
        finally:
            conn._depth -= 1

    def _end(self, conn: Connection, exc: BaseException | None) -> None:
        try:
            if exc is not None:
                conn._roll_back()
                if isinstance(exc, sqlite3.Error):
                    raise conn.error(exc) from exc
                return
            if conn._doomed:
                conn._roll_back()
                raise StoreError(DOOMED)
            try:
                conn.db.execute("COMMIT")
                conn.commits += 1
            except sqlite3.Error as failed:
                conn._roll_back()
                raise conn.error(failed) from failed
            except BaseException:
                conn._roll_back()
                raise
        finally:
            conn._depth = 0
            conn._atomic = conn._doomed = False
        if conn.checkpointer is not None:
            with contextlib.suppress(sqlite3.Error):  # committed: a checkpoint can wait
                conn.checkpointer.committed()
