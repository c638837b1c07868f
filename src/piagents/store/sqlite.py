"""The default store: one SQLite database (WAL) in the runtime's home.

`SQLiteStore` is the Store interface over one connection, each concern in a
module of its own: opening and upgrading (`sqlite_open`, `sqlite_layout`),
sessions, entries, inputs, search, leases and generations (`sqlite_*`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path

from piagents.store import lease
from piagents.store.base import Mailbox
from piagents.store.records import InputRecord
from piagents.store.sqlite_checkpoint import Checkpointer
from piagents.store.sqlite_connection import Connection
from piagents.store.sqlite_entries import EntryLog
from piagents.store.sqlite_entries import entry_rows as _entry_rows
from piagents.store.sqlite_generations import GenerationTable
from piagents.store.sqlite_inputs import InputTable
from piagents.store.sqlite_layout import BLOCK
from piagents.store.sqlite_leases import LeaseTable
from piagents.store.sqlite_open import MMAP_SIZE, open_database
from piagents.store.sqlite_programs import ProgramTable
from piagents.store.sqlite_search import SearchIndex
from piagents.store.sqlite_sessions import SessionTable
from piagents.store.sqlite_unread import UnreadResults
from piagents.store.tables import TableStore

__all__ = ["BLOCK", "MMAP_SIZE", "SQLiteStore", "_entry_rows"]


class SQLiteStore(TableStore):
    """Sessions and entries in `<home>/store.db`."""

    def __init__(
        self,
        path: str | Path,
        *,
        synchronous: str = "NORMAL",
        busy_timeout: float = 10.0,
        max_bytes: int | None = None,
        read_only: bool = False,
        lease_lapse: float = lease.LAPSE_S,
    ) -> None:
        """Open (or create) the store at `path`.

        `busy_timeout`: how long a write waits for another process's write lock
        before it fails with StoreBusy. `max_bytes`: a size limit; writes that need
        more fail with StoreFull, as on a full disk. `read_only`: for reading only
        (what read-only commands use): it works in a read-only home and on a full
        disk, and writes nothing, except that a store of an earlier schema is first
        upgraded in place as any opening does. Every failure is a StoreError naming
        the path and the cause. `lease_lapse`: how old (in seconds) a holder's
        heartbeat may be before its leases count as gone.
        """
        self.path = Path(path)
        self.location = str(self.path)
        self.busy_timeout = busy_timeout
        self.read_only = read_only
        db = open_database(
            self.path,
            synchronous=synchronous,
            busy_timeout=busy_timeout,
            max_bytes=max_bytes,
            read_only=read_only,
        )
        checkpoints = None if read_only else Checkpointer(self.path, db)  # off the commit path
        self._conn = conn = Connection(
            self.path, db, busy_timeout=busy_timeout, checkpointer=checkpoints
        )
        self._leases = LeaseTable(conn, lease_lapse)
        self._sessions = SessionTable(conn)
        self._entries = EntryLog(conn, self._leases.fence)
        self._inputs = InputTable(conn, self._leases.fence_inputs, self._leases.fence)
        self._search = SearchIndex(conn)
        self._generations = GenerationTable(conn)
        self._programs = ProgramTable(conn)
        self._unread = UnreadResults(
            conn,
            lambda ids: self._inputs.matching(
                recipient_ids=ids, has_result=True, read=False, outstanding=False
            ),
            self._inputs.mark_read,
        )

    @property
    def _db(self) -> sqlite3.Connection:
        """The connection itself, for tests and benchmarks that look inside."""
        return self._conn.db

    def unread_results(self, recipient_ids: Sequence[str]) -> list[InputRecord]:
        return self._unread.of(recipient_ids)

    def mark_read(self, ids: Sequence[str]) -> None:
        self._unread.mark_read(ids)

    def batch(self, *, atomic: bool = False) -> AbstractContextManager[object]:
        return self._conn.tx(atomic=atomic)

    def mailbox(self, token: str, on_poke: Callable[[], None]) -> Mailbox | None:
        return None  # one machine: runtimes poke each other's Unix sockets

    def notify(self, token: str) -> bool:
        return False

    def close(self) -> None:
        self._conn.close()
