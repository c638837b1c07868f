"""The store beyond one machine: one PostgreSQL database (psycopg 3).

`PostgresStore` is the Store interface over one connection, with the SQLite
store's guarantees, each concern in a module of its own: opening and upgrading
(`postgres_open`, `postgres_layout`), the connection and its retries
(`postgres_connection`), sessions, entries, inputs, search, leases, generations
and Programs (`postgres_*`). It is imported only when a `postgresql://` store is
chosen, so psycopg is needed only then.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from piagents.ai.models import ThinkingLevel
from piagents.store import lease, postgres_open
from piagents.store.base import UNSET, LeaseHolder, Mailbox, Registration, WorkerRecord
from piagents.store.postgres_connection import Connection
from piagents.store.postgres_entries import EntryLog
from piagents.store.postgres_generations import GenerationTable
from piagents.store.postgres_inputs import InputTable
from piagents.store.postgres_leases import LeaseTable
from piagents.store.postgres_notify import NotifyMailbox, notify_sql
from piagents.store.postgres_programs import ProgramTable
from piagents.store.postgres_search import SearchIndex
from piagents.store.postgres_sessions import SessionTable
from piagents.store.records import (
    ContextItem,
    Entry,
    GenerationRecord,
    GenerationState,
    InputRecord,
    InputStatus,
    ProgramKind,
    ProgramRecord,
    ProgramState,
    SearchHit,
    SessionRecord,
)
from piagents.store.url import location_of


class PostgresStore:
    """Sessions and entries in the PostgreSQL database at `url`."""

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
        self._inputs = InputTable(self._conn)
        self._search = SearchIndex(self._conn)
        self._generations = GenerationTable(self._conn)
        self._programs = ProgramTable(self._conn)

    def _open(self, *, read_only: bool) -> Connection:
        conn = Connection(
            self.location,
            lambda: postgres_open.connect(self.url, self.location, read_only=read_only),
        )
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
    def batch(self) -> Iterator[None]:
        with self._conn.batch():
            yield

    # ---- sessions ----------------------------------------------------------

    def create_session(self, record: SessionRecord) -> None:
        self._sessions.create(record)

    def discard_session(self, session_id: str) -> None:
        self._sessions.discard(session_id)

    def get_session(self, session_id: str) -> SessionRecord | None:
        return self._sessions.get(session_id)

    def list_sessions(
        self,
        *,
        cwd: str | None = None,
        roots_only: bool = False,
        limit: int | None = None,
        owner_id: str | None = None,
        root_id: str | None = None,
    ) -> list[SessionRecord]:
        return self._sessions.matching(
            cwd=cwd, roots_only=roots_only, limit=limit, owner_id=owner_id, root_id=root_id
        )

    def session_named(self, owner_id: str, name: str) -> SessionRecord | None:
        return self._sessions.named(owner_id, name)

    def roots_mark(self) -> tuple[int, int]:
        return self._sessions.roots_mark()

    def update_session(
        self,
        session_id: str,
        *,
        name: str | None = UNSET,
        model: str = UNSET,
        thinking: ThinkingLevel = UNSET,
        meta: dict[str, Any] = UNSET,
    ) -> SessionRecord:
        return self._sessions.update(
            session_id, name=name, model=model, thinking=thinking, meta=meta
        )

    # ---- entries ------------------------------------------------------------

    def append(self, session_id: str, entries: Sequence[Entry]) -> None:
        self._entries.append(session_id, entries)

    def has_entries(self, session_id: str) -> bool:
        return self._entries.has_entries(session_id)

    def entries(
        self, session_id: str, *, from_last_compaction: bool = False, after: str | None = None
    ) -> list[Entry]:
        return self._entries.entries(
            session_id, from_last_compaction=from_last_compaction, after=after
        )

    def context_items(self, session_id: str) -> tuple[list[ContextItem], str | None]:
        return self._entries.context_items(session_id)

    # ---- inputs ---------------------------------------------------------------

    def add_input(self, record: InputRecord) -> InputRecord:
        return self._inputs.add(record)

    def end_inputs(
        self,
        ids: Sequence[str],
        status: InputStatus,
        result: str | None,
        *,
        aborted_by_owner: bool = False,
        ended: int | None = None,
    ) -> list[InputRecord]:
        return self._inputs.end(ids, status, result, aborted_by_owner=aborted_by_owner, ended=ended)

    def take_undelivered(self, recipient_ids: Sequence[str]) -> list[InputRecord]:
        """Inputs waiting in the store for these recipients, now marked delivered."""
        return self._inputs.take_undelivered(recipient_ids)

    def mark_read(self, ids: Sequence[str]) -> None:
        self._inputs.mark_read(ids)

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
        return self._inputs.matching(
            recipient_ids=recipient_ids,
            root_id=root_id,
            outstanding=outstanding,
            has_result=has_result,
            read=read,
            delivered=delivered,
        )

    # ---- search -----------------------------------------------------------------

    def search(
        self, root_id: str, include_roots: bool, groups: Sequence[Sequence[str]]
    ) -> list[SearchHit]:
        return self._search.search(root_id, include_roots, groups)

    def request_times(self, root_id: str, include_roots: bool) -> dict[str, int]:
        return self._search.request_times(root_id, include_roots)

    def latest_requests(self, session_ids: Sequence[str]) -> dict[str, tuple[int, str]]:
        return self._search.latest_requests(session_ids)

    # ---- states and leases -----------------------------------------------------

    def set_state(self, session_id: str, state: str) -> None:
        self._leases.set_state(session_id, state)

    def states(self, session_ids: Sequence[str]) -> dict[str, str]:
        return self._leases.states(session_ids)

    def register(self, registration: Registration) -> None:
        self._leases.register(registration)

    def renew(self, registration: Registration) -> frozenset[str]:
        return self._leases.renew(registration)

    def unregister(self, token: str) -> None:
        self._leases.unregister(token)

    def workers(self) -> list[WorkerRecord]:
        return self._leases.workers()

    def mailbox(self, token: str, on_poke: Callable[[], None]) -> Mailbox | None:
        return NotifyMailbox(self.url, self.location, token, on_poke)

    def notify(self, token: str) -> bool:
        statement, args = notify_sql(token)
        self._conn.write(lambda db: db.execute(statement, args), idempotent=True, single=True)
        return True

    def acquire_lease(self, session_id: str, holder: LeaseHolder) -> None:
        self._leases.acquire(session_id, holder)

    def release_lease(self, session_id: str, holder: LeaseHolder) -> None:
        self._leases.release(session_id, holder)

    def lease_of(self, session_id: str) -> LeaseHolder | None:
        return self._leases.holder(session_id)

    # ---- supervision generations --------------------------------------------------

    def add_generation(self, generation: GenerationRecord) -> None:
        self._generations.add(generation)

    def update_generation(
        self,
        generation: GenerationRecord,
        *,
        expect_state: GenerationState | None = None,
        end: bool = False,
        result: InputRecord | None = None,
    ) -> bool:
        return self._generations.update(
            generation, expect_state=expect_state, end=end, result=result
        )

    def get_generation(self, generation_id: str) -> GenerationRecord | None:
        return self._generations.get(generation_id)

    def generations(
        self,
        *,
        root_id: str | None = None,
        owner_id: str | None = None,
        session_id: str | None = None,
        live: bool | None = None,
    ) -> list[GenerationRecord]:
        return self._generations.matching(
            root_id=root_id, owner_id=owner_id, session_id=session_id, live=live
        )

    # ---- Programs ----------------------------------------------------------------

    def add_program(self, program: ProgramRecord) -> None:
        self._programs.add(program)

    def end_program(self, program: ProgramRecord, values: Mapping[str, str] | None = None) -> bool:
        return self._programs.end(program, values)

    def mark_programs_returned(self, program_ids: Sequence[str]) -> None:
        self._programs.mark_returned(program_ids)

    def stop_running_programs(self, caller_id: str, reason: str, ended: int) -> list[ProgramRecord]:
        return self._programs.stop_running(caller_id, reason, ended)

    def get_program(self, program_id: str) -> ProgramRecord | None:
        return self._programs.get(program_id)

    def programs(
        self,
        caller_id: str,
        *,
        kind: ProgramKind | None = None,
        state: ProgramState | None = None,
        returned: bool | None = None,
        id_prefix: str | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[ProgramRecord]:
        return self._programs.matching(
            caller_id,
            kind=kind,
            state=state,
            returned=returned,
            id_prefix=id_prefix,
            limit=limit,
            offset=offset,
        )

    def count_programs(
        self,
        caller_id: str,
        *,
        kind: ProgramKind | None = None,
        state: ProgramState | None = None,
        returned: bool | None = None,
    ) -> int:
        return self._programs.count(caller_id, kind=kind, state=state, returned=returned)

    def program_values(self, session_id: str) -> dict[str, str]:
        return self._programs.values(session_id)

    def close(self) -> None:
        self._conn.close()
