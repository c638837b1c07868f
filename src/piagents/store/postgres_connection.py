"""The PostgreSQL store's one connection: its lock, its write transactions (a batch's
calls as savepoints of one), its reads, and what happens when the server drops it.

A dropped connection is made again and the operation retried when that cannot
apply it twice: a read; a write whose transaction never reached COMMIT (nothing of
it was saved); a write whose COMMIT got no answer only when it is idempotent, or
once a check on the new connection found it unsaved (found saved, its result is
what the check read). Every write of the store is one or the other; a batch is
neither, and fails saying it may have been saved.

A batch's own commands (BEGIN, and each call's SAVEPOINT and RELEASE) carry no
parameters, so the ones owed are sent together with the next one, as one string of
commands in one round trip: a batch of three calls is BEGIN+SAVEPOINT, call,
RELEASE+SAVEPOINT, call, RELEASE+SAVEPOINT, call, RELEASE+COMMIT (7 round trips, not
11). A RELEASE held back changes nothing: until it is sent, what follows runs inside
that savepoint, which a ROLLBACK TO an outer one undoes with the rest. An atomic batch
makes no savepoints (`_atomic_part`): BEGIN, call, call, call, COMMIT (5).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final, Generic, TypeVar

import psycopg

from piagents.store import postgres_errors as errors
from piagents.store.base import DOOMED, StoreError
from piagents.store.write_thread import RERUN

T = TypeVar("T")
Db = psycopg.Connection[Any]

ATTEMPTS = 3  # tries of an operation whose connection was lost
RECONNECT_WAITS = (0.0, 0.1, 0.5, 1.5)  # before each try of a new connection


class _NotSaved:
    pass


NOT_SAVED: Final = _NotSaved()
"""What a write's `verify` returns when the write is not in the store."""

Verify = Callable[[Db], Any]
V = TypeVar("V")


@dataclass(frozen=True, slots=True)
class Statement(Generic[V]):
    """A write that is one statement, its own transaction: `read` makes its value of
    the cursor that ran it; after a lost COMMIT, `verify` reads that value on a new
    connection, or NOT_SAVED. Statements of several writes can share a transaction
    and a round trip (`Connection.write_group`)."""

    sql: str
    args: Sequence[Any] | Mapping[str, Any]
    read: Callable[[psycopg.Cursor[Any]], V]
    verify: Verify

    def run(self, conn: Connection) -> V:
        """This statement alone (`Connection.write`, with its retries)."""
        return conn.write(
            lambda db: self.read(db.execute(self.sql, self.args)), verify=self.verify, single=True
        )


class Connection:
    """A connection to the store's database, made again when the server drops it."""

    def __init__(self, location: str, connect: Callable[[], Db]) -> None:
        self.location = location
        self._connect = connect
        self.db: Db = connect()
        self._lock = threading.RLock()
        self._depth = 0  # transactions open on the thread holding the lock
        self._batch_lost = False
        self._doomed: bool | None = None  # in an atomic batch: whether a call failed
        self._refused = False  # in an atomic batch: the server refused a statement
        self._owed = ""  # a batch's commands not sent yet (BEGIN, RELEASEs)
        self._begun = False  # the batch's BEGIN has reached the server
        self._closed = False

    def error(self, exc: psycopg.Error) -> StoreError:
        return errors.translate(self.location, exc)

    # ---- the connection itself ---------------------------------------------------

    def _ensure(self) -> None:
        """A working connection: the one there is, or a new one if it was lost."""
        if not (self.db.broken or self.db.closed):
            return
        if self._closed:
            raise StoreError(f"{self.location}: the store was closed.")
        with contextlib.suppress(psycopg.Error):
            self.db.close()
        last: StoreError | None = None
        for wait in RECONNECT_WAITS:
            time.sleep(wait)  # the server may be restarting
            try:
                self.db = self._connect()
                return
            except StoreError as exc:
                last = exc
        assert last is not None
        raise last

    def _roll_back(self) -> None:
        with contextlib.suppress(psycopg.Error):
            self.db.execute("ROLLBACK")

    # ---- writes ------------------------------------------------------------------

    def write(
        self,
        fn: Callable[[Db], T],
        *,
        idempotent: bool = False,
        verify: Verify | None = None,
        single: bool = False,
    ) -> T:
        """`fn` in one transaction (a savepoint, inside a batch); its result.

        When the connection is lost before COMMIT, nothing was saved: `fn` runs
        again on a new connection. When COMMIT gets no answer, `fn` runs again only if
        it is `idempotent`, or `verify` (on the new connection) finds it unsaved
        (it returns NOT_SAVED; else its value is the write's result); otherwise the
        operation fails with StoreUnavailable saying it may have been saved.

        `single`: `fn` runs one statement, its own transaction (one round trip to
        the server instead of three); its answer lost is a COMMIT's answer lost.
        """
        with self._lock:
            if self._depth:
                with self._savepoint():
                    return fn(self.db)
            for _ in range(ATTEMPTS):
                self._ensure()
                committing = single
                try:
                    if single:
                        return fn(self.db)
                    self.db.execute("BEGIN")
                    self._depth = 1
                    try:
                        value = fn(self.db)
                        committing = True
                        self.db.execute("COMMIT")
                    finally:
                        self._depth = 0
                    return value
                except psycopg.Error as exc:
                    if not errors.is_lost(self.db, exc):
                        if not single:
                            self._roll_back()
                        raise self.error(exc) from exc
                    if not committing or idempotent:
                        continue  # nothing saved (or saving twice changes nothing)
                    if verify is None:
                        raise errors.lost(
                            self.location,
                            "while it committed: this change may or may not have been "
                            "saved. Check before doing it again",
                        ) from exc
                    self._ensure()
                    found = self.read(verify)
                    if found is not NOT_SAVED:
                        return found  # type: ignore[no-any-return]
                except BaseException:
                    if not single:
                        self._roll_back()
                    raise
            raise errors.lost(self.location, f"{ATTEMPTS} times; nothing of this change was saved")

    def write_group(self, statements: Sequence[Statement[Any]]) -> list[Any]:
        """The statements in one transaction, sent together in one round trip
        (pipeline mode); the value of each (`write_thread.Group`). When the transaction
        fails, nothing of it was saved: every value is RERUN (each is then written
        alone). When the connection is lost, whether it committed is read by each one's
        `verify` on a new connection (RERUN where not saved); that failing too raises
        StoreUnavailable."""
        with self._lock:
            assert not self._depth, "a group is its own transaction"
            self._ensure()
            try:
                with self.db.pipeline():
                    self.db.execute("BEGIN")
                    cursors = [self.db.execute(s.sql, s.args) for s in statements]
                    self.db.execute("COMMIT")
                return [s.read(c) for s, c in zip(statements, cursors, strict=True)]
            except psycopg.Error as exc:
                if not errors.is_lost(self.db, exc):
                    self._roll_back()
                    return [RERUN] * len(statements)
                try:
                    self._ensure()
                    found = [self.read(s.verify) for s in statements]
                    return [RERUN if f is NOT_SAVED else f for f in found]
                except StoreError as again:
                    raise errors.lost(
                        self.location,
                        "while a group of writes committed: they may or may not have been "
                        "saved. Check before doing them again",
                    ) from again

    @contextmanager
    def batch(self, *, atomic: bool = False) -> Iterator[None]:
        """The calls made inside as one transaction, each a savepoint of it. `atomic`:
        one write failing dooms the batch (`Store.batch`), and its calls are no
        savepoints (two round trips fewer for a spawn's three calls); after the server
        refused one of its statements, the calls after it fail at once (DOOMED)."""
        with self._lock:
            if self._depth:
                with self._savepoint():
                    yield
                return
            self._ensure()
            # BEGIN goes with the first call's SAVEPOINT (see the module docstring).
            self._depth, self._batch_lost, self._owed, self._begun = 1, False, "BEGIN", False
            self._doomed = False if atomic else None
            self._refused = False
            try:
                yield
                if self._batch_lost:
                    raise errors.lost(self.location, "during a batch: nothing of it was saved")
                if self._doomed:
                    raise StoreError(DOOMED)
                if self._begun:
                    self._send("COMMIT")
            except psycopg.Error as exc:
                self._roll_back()
                if errors.is_lost(self.db, exc):
                    raise errors.lost(
                        self.location,
                        "while a batch committed: it may or may not have been saved",
                    ) from exc
                raise self.error(exc) from exc
            except BaseException:
                if self._begun:
                    self._roll_back()
                raise
            finally:
                self._depth, self._batch_lost, self._owed, self._begun = 0, False, "", False
                self._doomed = None

    def _send(self, command: str) -> None:
        """`command` after the commands owed, in one round trip."""
        owed, self._owed = self._owed, ""
        self.db.execute(f"{owed}; {command}" if owed and command else owed or command)
        self._begun = True

    def _open_savepoint(self, name: str | None) -> None:
        """SAVEPOINT `name` (with what is owed; None: what is owed alone). When the
        batch's BEGIN was in it and the connection was lost, nothing of the batch had
        reached the server: on a new connection, it is begun again."""
        for attempt in range(ATTEMPTS):
            first = not self._begun
            owed = self._owed
            try:
                self._send(f"SAVEPOINT {name}" if name is not None else "")
                return
            except psycopg.Error as exc:
                if not (first and errors.is_lost(self.db, exc)) or attempt == ATTEMPTS - 1:
                    raise
                self._owed, self._begun = owed, False
                self._ensure()

    @contextmanager
    def _savepoint(self, *, writes: bool = True) -> Iterator[None]:
        """A part of the open transaction: its failure undoes only itself (and dooms an
        atomic batch, when it `writes`)."""
        if self._batch_lost:
            raise errors.lost(self.location, "during a batch: nothing of it was saved")
        if self._doomed is not None:
            with self._atomic_part(writes=writes):
                yield
            return
        name = f"inner{self._depth}"
        try:
            self._open_savepoint(name)
        except psycopg.Error as exc:
            raise self._in_batch(exc) from exc
        self._depth += 1
        try:
            yield
            self._owed = f"{self._owed}; RELEASE SAVEPOINT {name}".lstrip("; ")
        except BaseException as exc:
            if writes and self._doomed is not None:
                self._doomed = True
            if isinstance(exc, psycopg.Error) and errors.is_lost(self.db, exc):
                raise self._in_batch(exc) from exc
            # The RELEASEs owed are of savepoints inside this one: the ROLLBACK TO
            # undoes them (and after an error, the server would refuse them).
            self._owed = ""
            with contextlib.suppress(psycopg.Error):
                self.db.execute(f"ROLLBACK TO SAVEPOINT {name}; RELEASE SAVEPOINT {name}")
            if isinstance(exc, psycopg.Error):
                raise self.error(exc) from exc
            raise
        finally:
            self._depth -= 1

    @contextmanager
    def _atomic_part(self, *, writes: bool) -> Iterator[None]:
        """A call inside an atomic batch, without a savepoint: a write failing dooms the
        batch; a statement the server refused (a read's too) leaves its transaction
        able only to roll back, so the calls after it fail here at once."""
        if self._refused:
            raise StoreError(DOOMED)
        if not self._begun:
            try:
                self._open_savepoint(None)  # the batch's BEGIN
            except psycopg.Error as exc:
                raise self._in_batch(exc) from exc
        self._depth += 1
        try:
            yield
        except BaseException as exc:
            if writes:
                self._doomed = True
            if isinstance(exc, psycopg.Error):
                if errors.is_lost(self.db, exc):
                    raise self._in_batch(exc) from exc
                self._doomed = self._refused = True
                raise self.error(exc) from exc
            raise
        finally:
            self._depth -= 1

    def _in_batch(self, exc: psycopg.Error) -> StoreError:
        if errors.is_lost(self.db, exc):
            self._batch_lost = True
            return errors.lost(self.location, "during a batch: nothing of it was saved")
        return self.error(exc)

    # ---- reads -------------------------------------------------------------------

    def fetch(self, sql: str, args: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        return self.read(lambda db: db.execute(sql, args).fetchall())

    def read(self, fn: Callable[[Db], T], *, snapshot: bool = False) -> T:
        """`fn`'s reads; on a lost connection, read again on a new one (inside a
        batch, the batch is lost instead). `snapshot`: its statements all see the
        store as it was when the first one ran (a read-only transaction)."""
        with self._lock:
            if self._depth:
                with self._savepoint(writes=False):
                    return fn(self.db)
            for attempt in range(ATTEMPTS):
                self._ensure()
                try:
                    if not snapshot:
                        return fn(self.db)
                    self.db.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                    try:
                        value = fn(self.db)
                    finally:
                        self._roll_back()  # read only: nothing to commit
                    return value
                except psycopg.Error as exc:
                    if errors.is_lost(self.db, exc) and attempt < ATTEMPTS - 1:
                        continue
                    raise self.error(exc) from exc
            raise AssertionError("unreachable")

    def close(self) -> None:
        with self._lock, contextlib.suppress(psycopg.Error):
            self._closed = True
            self.db.close()
