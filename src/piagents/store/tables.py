"""What the two stores share: the Store interface's methods, each handed to the table
that keeps its concern (sessions, entries, inputs, search, leases, generations,
Programs). `SQLiteStore` and `PostgresStore` make the tables of their database in
`__init__` and add what differs: opening, `batch()` and `close()`.

Each store's tables have the methods of the protocols below (mypy checks both
stores' against them), and one contract suite runs every method on both stores
(tests/store).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from piagents.ai.models import ThinkingLevel
from piagents.store.base import UNSET, LeaseHolder, Registration, WaitingRoot, WorkerRecord
from piagents.store.records import (
    ContextItem,
    Entry,
    GenerationDocumentKind,
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
from piagents.store.write_thread import LaterWrite


class _EntryLog(Protocol):
    def append(self, session_id: str, entries: Sequence[Entry]) -> None: ...
    def has_entries(self, session_id: str) -> bool: ...
    def entries(
        self, session_id: str, *, from_last_compaction: bool = False, after: str | None = None
    ) -> list[Entry]: ...
    def context_items(self, session_id: str) -> tuple[list[ContextItem], str | None]: ...


class _GenerationTable(Protocol):
    def add(self, generation: GenerationRecord) -> None: ...
    def update(
        self,
        generation: GenerationRecord,
        *,
        expect_state: GenerationState | None = None,
        end: bool = False,
        result: InputRecord | None = None,
    ) -> bool: ...
    def get(self, generation_id: str) -> GenerationRecord | None: ...
    def put_document(self, generation_id: str, kind: GenerationDocumentKind, body: str) -> None: ...
    def document(
        self, generation_id: str, kind: GenerationDocumentKind
    ) -> tuple[str, int] | None: ...
    def matching(
        self,
        *,
        root_id: str | None = None,
        owner_id: str | None = None,
        session_id: str | None = None,
        live: bool | None = None,
    ) -> list[GenerationRecord]: ...


class _InputTable(Protocol):
    def add(self, record: InputRecord) -> InputRecord: ...
    def end(
        self,
        ids: Sequence[str],
        status: InputStatus,
        result: str | None,
        *,
        aborted_by_owner: bool = False,
        ended: int | None = None,
    ) -> list[InputRecord]: ...
    def take_undelivered(self, recipient_ids: Sequence[str]) -> list[InputRecord]: ...
    def mark_read(self, ids: Sequence[str]) -> None: ...
    def matching(
        self,
        *,
        recipient_ids: Sequence[str] | None = None,
        root_id: str | None = None,
        outstanding: bool | None = None,
        has_result: bool | None = None,
        read: bool | None = None,
        delivered: bool | None = None,
    ) -> list[InputRecord]: ...


class _LeaseTable(Protocol):
    lapse: float

    def register(self, registration: Registration) -> None: ...
    def renew(self, registration: Registration) -> frozenset[str]: ...
    def unregister(self, token: str) -> None: ...
    def workers(self) -> list[WorkerRecord]: ...
    def waiting_roots(self, limit: int) -> list[WaitingRoot]: ...
    def acquire(self, session_id: str, holder: LeaseHolder) -> None: ...
    def release(self, session_id: str, holder: LeaseHolder) -> None: ...
    def holder(self, session_id: str) -> LeaseHolder | None: ...
    def set_state(self, session_id: str, state: str) -> None: ...
    def states(self, session_ids: Sequence[str]) -> dict[str, str]: ...


class _ProgramTable(Protocol):
    def add(self, program: ProgramRecord) -> None: ...
    def end(self, program: ProgramRecord, values: Mapping[str, str] | None = None) -> bool: ...
    def mark_returned(self, program_ids: Sequence[str]) -> None: ...
    def stop_running(self, caller_id: str, reason: str, ended: int) -> list[ProgramRecord]: ...
    def get(self, program_id: str) -> ProgramRecord | None: ...
    def matching(
        self,
        caller_id: str,
        *,
        kind: ProgramKind | None = None,
        state: ProgramState | None = None,
        returned: bool | None = None,
        id_prefix: str | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[ProgramRecord]: ...
    def count(
        self,
        caller_id: str,
        *,
        kind: ProgramKind | None = None,
        state: ProgramState | None = None,
        returned: bool | None = None,
    ) -> int: ...
    def values(self, session_id: str) -> dict[str, str]: ...


class _SearchIndex(Protocol):
    def search(
        self, root_id: str, include_roots: bool, groups: Sequence[Sequence[str]]
    ) -> list[SearchHit]: ...
    def request_times(self, root_id: str, include_roots: bool) -> dict[str, int]: ...
    def latest_requests(self, session_ids: Sequence[str]) -> dict[str, tuple[int, str]]: ...


class _SessionTable(Protocol):
    def create(self, record: SessionRecord) -> None: ...
    def discard(self, session_id: str) -> None: ...
    def get(self, session_id: str) -> SessionRecord | None: ...
    def matching(
        self,
        *,
        cwd: str | None = None,
        roots_only: bool = False,
        limit: int | None = None,
        owner_id: str | None = None,
        root_id: str | None = None,
    ) -> list[SessionRecord]: ...
    def named(self, owner_id: str, name: str) -> SessionRecord | None: ...
    def roots_mark(self) -> tuple[int, int]: ...
    def update(
        self,
        session_id: str,
        *,
        name: str | None = UNSET,
        model: str = UNSET,
        thinking: ThinkingLevel = UNSET,
        meta: dict[str, Any] = UNSET,
    ) -> SessionRecord: ...


class TableStore:
    """The Store methods over a store's tables (set by the subclass's `__init__`)."""

    _sessions: _SessionTable
    _entries: _EntryLog
    _inputs: _InputTable
    _search: _SearchIndex
    _leases: _LeaseTable
    _generations: _GenerationTable
    _programs: _ProgramTable

    @property
    def lease_lapse(self) -> float:
        """How old (seconds) a heartbeat may be before its holder's leases count as
        gone (the store was opened with it; a standby sets it once it knows better)."""
        return self._leases.lapse

    @lease_lapse.setter
    def lease_lapse(self, seconds: float) -> None:
        self._leases.lapse = seconds

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

    def append_later(self, session_id: str, entries: Sequence[Entry]) -> LaterWrite[Any] | None:
        return None  # commits are quick here: `append` on the caller's thread

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
        return None  # as `append_later`

    async def later_writes(self) -> None:
        return  # none: every write was made on its caller's thread

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

    def unread_results(self, recipient_ids: Sequence[str]) -> list[InputRecord]:
        return self._inputs.matching(
            recipient_ids=recipient_ids, has_result=True, read=False, outstanding=False
        )

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

    def waiting_roots(self, limit: int) -> list[WaitingRoot]:
        return self._leases.waiting_roots(limit)

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

    def put_generation_document(
        self, generation_id: str, kind: GenerationDocumentKind, body: str
    ) -> None:
        self._generations.put_document(generation_id, kind, body)

    def generation_document(
        self, generation_id: str, kind: GenerationDocumentKind
    ) -> tuple[str, int] | None:
        return self._generations.document(generation_id, kind)

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
