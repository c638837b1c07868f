"""The store beyond one machine: one PostgreSQL database (psycopg 3).

`PostgresStore` is the Store interface over one connection, with the SQLite
store's guarantees, each concern in a module of its own: opening and upgrading
(`postgres_open`, `postgres_layout`), the connection and its retries
(`postgres_connection`), sessions, entries, inputs, search, leases, generations
and Programs (`postgres_*`). It is imported only when a `postgresql://` store is
chosen, so psycopg is needed only then.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from piagents.store import lease, postgres_open
from piagents.store.base import Mailbox
from piagents.store.postgres_connection import Connection
from piagents.store.postgres_entries import EntryLog
from piagents.store.postgres_generations import GenerationTable
from piagents.store.postgres_inputs import InputTable
from piagents.store.postgres_leases import LeaseTable
from piagents.store.postgres_notify import NotifyMailbox, notify_sql
from piagents.store.postgres_programs import ProgramTable
from piagents.store.postgres_search import SearchIndex
from piagents.store.postgres_sessions import SessionTable
from piagents.store.records import Entry, InputRecord, InputStatus
from piagents.store.tables import TableStore
from piagents.store.url import location_of
from piagents.store.write_thread import LaterWrite, WriteThread

WRITE_THREADS = 4  # each with a connection of its own, made by its first write


class PostgresStore(TableStore):
    """Sessions and entries in the PostgreSQL database at `url`."""

    _entries: EntryLog
    _inputs: InputTable

    def __init__(
        self, url: str, *, read_only: bool = False, lease_lapse: float = lease.LAPSE_S
    ) -> None:
        """Open the store in the database at `url` (`postgresql://user:password@host:port/db`),
        laying it out in an empty database or upgrading an earlier layout in place.

        `read_only`: for reading only (what read-only commands use): nothing is
        written, except that a store of an earlier layout is first upgraded as any
        opening does. Every failure is a StoreError naming the database (without
        its password) and the cause: StoreUnavailable when the server cannot be
        reached or refuses the credentials, StoreIncompatible for a database of
        another program or of a newer pi-agents (both left untouched).
        `lease_lapse`: how old (in seconds, by the server's clock) a holder's
        heartbeat may be before its leases count as gone.
        """
        self.url = url
        self.location = location_of(url)
        self.read_only = read_only
        if read_only:
            try:
                self._conn = self._open(read_only=True)
            except postgres_open.NeedsUpgrade:
                self._open(read_only=False).close()
                self._conn = self._open(read_only=True)
        else:
            self._conn = self._open(read_only=False)
        self._leases = LeaseTable(self._conn, lease_lapse)
        self._sessions = SessionTable(self._conn)
        self._entries = EntryLog(self._conn, self._leases)
        self._inputs = InputTable(self._conn, self._leases)
        self._search = SearchIndex(self._conn)
        self._generations = GenerationTable(self._conn)
        self._programs = ProgramTable(self._conn)
        self._later: WriteThread[Connection] | None = None  # made by the first later write

    def _connection(self, *, read_only: bool) -> Connection:
        """A connection to the store's database (made again when the server drops it:
        only connecting, as the layout was checked when the store opened)."""
        return Connection(
            self.location,
            lambda: postgres_open.connect(self.url, self.location, read_only=read_only),
        )

    def _open(self, *, read_only: bool) -> Connection:
        """The store's own connection, the database's layout checked (or made) first."""
        conn = self._connection(read_only=read_only)
        try:
            postgres_open.prepare(conn.db, self.location, read_only=read_only)
        except BaseException:
            conn.close()
            raise
        return conn

    @property
    def backend_pid(self) -> int:
        """The server process serving this store's connection now (tests end it)."""
        return int(self._conn.db.info.backend_pid)

    @contextmanager
    def batch(self, *, atomic: bool = False) -> Iterator[None]:
        with self._conn.batch(atomic=atomic):
            yield

    def append_later(
        self, session_id: str, entries: Sequence[Entry]
    ) -> LaterWrite[int | None] | None:
        """`append` on the store's write thread (see `write_thread`)."""
        write = None if self.read_only else self._entries.append_write(session_id, entries)
        if write is None:
            return None
        return self._writes().submit(
            session_id, write, lambda base: self._entries.settle_append(session_id, base)
        )

    def end_inputs_later(
        self,
        recipient_id: str,
        ids: Sequence[str],
        status: InputStatus,
        result: str | None,
        *,
        aborted_by_owner: bool = False,
        ended: int | None = None,
    ) -> LaterWrite[list[InputRecord]] | None:
        """`end_inputs` on the store's write thread (see `write_thread`)."""
        if self.read_only:
            return None  # refused where it is made: `end_inputs`
        write = self._inputs.end_write(
            ids, status, result, aborted_by_owner=aborted_by_owner, ended=ended
        )
        if write is None:
            return None
        return self._writes().submit(recipient_id, write, lambda records: records)

    async def later_writes(self) -> None:
        """Once every write handed to the write threads has committed (and what follows
        it ran): before a lease is given up, which the writes' fence checks."""
        if self._later is not None:
            await self._later.drained()

    def prepare_writes(self) -> None:
        """Start the write threads and make one connection for them now, not at the
        first write (what a standby process does before it has work)."""
        if not self.read_only:
            self._writes().make_spare()

    def _writes(self) -> WriteThread[Connection]:
        """The write threads, each over a connection of its own made by its first write."""
        if self._later is None:
            self._later = WriteThread(
                lambda: self._connection(read_only=False),  # the layout checked at opening
                Connection.close,
                "piagents-store-writes",
                threads=WRITE_THREADS,
                group=Connection.write_group,
            )
        return self._later

    def mailbox(self, token: str, on_poke: Callable[[], None]) -> Mailbox | None:
        return NotifyMailbox(self.url, self.location, token, on_poke)

    def notify(self, token: str) -> bool:
        statement, args = notify_sql(token)
        self._conn.write(lambda db: db.execute(statement, args), idempotent=True, single=True)
        return True

    def close(self) -> None:
        if self._later is not None:  # its writes given first
            self._later.close()
        self._conn.close()
