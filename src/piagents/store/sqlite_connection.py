"""The store's one SQLite connection: its lock, its write transactions and its
reads, every SQLite error turned into the store's own."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from piagents.store import sqlite_errors
from piagents.store.base import StoreError
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

    def error(self, exc: sqlite3.Error) -> StoreError:
        return sqlite_errors.translate(self.path, exc, waited=self.busy_timeout)

    def _roll_back(self) -> None:
        self.rolled_back += 1
        # SQLite may have rolled back itself (a full disk, an I/O error): nothing to undo.
        with contextlib.suppress(sqlite3.Error):
            self.db.execute("ROLLBACK")

    @contextmanager
    def tx(self, *, one_write: bool = False) -> Iterator[sqlite3.Connection]:
        """One write transaction; any SQLite error in it is the store's own, typed.

        Inside another one (on the same thread) it is a savepoint of that one: its
        failure undoes only itself, and it is committed when the outer one is. A body
        that makes `one_write` (a single statement that changes rows, besides reads)
        needs no savepoint for that: SQLite undoes a statement that fails by itself,
        and an error that undoes more undoes the whole transaction either way."""
        with self._lock:
            if self._depth:
                if one_write:
                    try:
                        yield self.db
                    except BaseException as exc:
                        self.rolled_back += 1  # as a savepoint's: what was read may differ
                        if isinstance(exc, sqlite3.Error):
                            raise self.error(exc) from exc
                        raise
                    return
                with self._savepoint():
                    yield self.db
                return
            try:
                self.db.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise self.error(exc) from exc
            self.begun += 1
            self._depth = 1
            try:
                yield self.db
                self.db.execute("COMMIT")
                self.commits += 1
            except sqlite3.Error as exc:
                self._roll_back()
                raise self.error(exc) from exc
            except BaseException:
                self._roll_back()
                raise
            finally:
                self._depth = 0
            if self.checkpointer is not None:
                with contextlib.suppress(sqlite3.Error):  # committed: a checkpoint can wait
                    self.checkpointer.committed()

    @contextmanager
    def _savepoint(self) -> Iterator[None]:
        name = f"inner{self._depth}"
        try:
            self.db.execute(f"SAVEPOINT {name}")
        except sqlite3.Error as exc:
            raise self.error(exc) from exc
        self._depth += 1
        try:
            yield
            self.db.execute(f"RELEASE {name}")
        except BaseException as exc:
            self.rolled_back += 1
            with contextlib.suppress(sqlite3.Error):
                self.db.execute(f"ROLLBACK TO {name}")
                self.db.execute(f"RELEASE {name}")
            if isinstance(exc, sqlite3.Error):
                raise self.error(exc) from exc
            raise
        finally:
            self._depth -= 1

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
