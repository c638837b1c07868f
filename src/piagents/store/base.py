"""The narrow interface every store implements (SQLite now, PostgreSQL later)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from piagents.ai.models import ThinkingLevel
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

DOOMED = "A change in this batch failed, so nothing of the batch was saved."
"""What an atomic batch (`Store.batch`) raises as it ends after one of its writes failed."""


class StoreError(Exception):
    """The store cannot be used, or cannot be written now. Nothing of the failed
    operation was changed; the message names the path and the cause."""


class StoreUnavailable(StoreError):
    """The store (or the home that holds it) cannot be opened: missing, not a file,
    or not reachable."""


class StoreNotFound(StoreUnavailable):
    """There is no store at the path yet (opening it read-only creates none)."""


class StoreIncompatible(StoreError):
    """The file is not a pi-agents store of a schema this version can use; it was
    left untouched."""


class StoreDamaged(StoreError):
    """The database file is corrupt (SQLite's `database disk image is malformed`)."""


class StoreFull(StoreError):
    """A write needed space the disk (or the store's size limit) does not have."""


class StoreBusy(StoreError):
    """Another process held the store's write lock for longer than the store waits."""


class StoreReadOnly(StoreError):
    """The store, or the directory that holds it, cannot be written."""


class SessionNotFound(StoreError):
    pass


class SessionInUse(StoreError):
    """Another live runtime holds the session's lease."""

    def __init__(self, session_id: str, holder: LeaseHolder) -> None:
        super().__init__(
            f"Session {session_id} is in use by another pi-agents runtime "
            f"(pid {holder.pid} on {holder.host})."
        )
        self.session_id = session_id
        self.holder = holder


class LeaseLost(StoreError):
    """A write by a runtime whose lease on the session (or its tree's root) was taken
    over by another one, after its heartbeat lapsed: refused, nothing written."""

    def __init__(self, location: str, session_id: str) -> None:
        super().__init__(
            f"{location}: session {session_id} was taken over by another pi-agents runtime "
            "after this one's lease lapsed; this runtime no longer writes to it."
        )
        self.session_id = session_id


@dataclass(frozen=True, slots=True)
class LeaseHolder:
    """A runtime that may hold session leases: a process plus a token per runtime."""

    pid: int
    host: str
    token: str
    started: str = ""  # process start time, to tell a reused pid from the holder


HolderKind = Literal["runtime", "worker"]


@dataclass(frozen=True, slots=True)
class Registration:
    """What a holder says of itself in the store's registry of holders (`workers`):
    a plain runtime, or a `pi-agents worker` with a capacity (Agents it takes at most)."""

    holder: LeaseHolder
    kind: HolderKind = "runtime"
    capacity: int | None = None
    load: int = 0  # Agents loaded now


@dataclass(frozen=True, slots=True)
class WorkerRecord:
    """One registered holder, as `pi-agents workers` lists it."""

    token: str
    host: str
    pid: int
    kind: HolderKind
    capacity: int | None
    load: int
    heartbeat_age: float  # seconds since its last heartbeat (by the store's clock)
    alive: bool  # its heartbeat has not lapsed
    opened: float  # when it registered, in seconds since the epoch


@dataclass(frozen=True, slots=True)
class WaitingRoot:
    """A root whose tree has open inputs (not supervision controls) while no live
    holder has the root, nor the Agent each input is for: work for a worker.
    `first_input` is its earliest such input; `lapsed` the token of the holder whose
    lease on the root lapsed (a takeover), None when the root was not held."""

    root_id: str
    first_input: str
    lapsed: str | None


# The channel on which runtimes tell `pi-agents worker`s that a root waits for one
# (`notify(PLACEMENT)`, heard by `mailbox(PLACEMENT, ...)`).
PLACEMENT = "placement"


class Mailbox(Protocol):
    """Where a runtime hears that other runtimes left inputs for it in the store."""

    async def start(self) -> None: ...

    async def close(self) -> None: ...


UNSET: Any = object()  # `update_session`: this field is left as it is


class Store(Protocol):
    """Sessions and their append-only entries, plus leases.

    Every mutating call is one transaction: nothing of it is visible before it
    commits, and a committed entry is never rewritten. Every failure is a
    StoreError (full, busy, read-only, damaged, ...) and changes nothing.
    """

    location: str

    def batch(self, *, atomic: bool = False) -> AbstractContextManager[object]:
        """The calls made inside, on this thread, as one transaction: all committed when
        it ends, or none when it raises. A call that fails inside undoes only itself
        and raises as usual. Nothing may await inside: another task's calls would
        join it.

        `atomic`: the caller gives up on the whole batch when a call fails (a spawn:
        the child, its first message and its input, or nothing), so the store need not
        make each call a part of its own; a batch in which a write failed then saves
        nothing and raises StoreError (DOOMED) as it ends, even if the caller went on.
        After a statement the server refused (PostgreSQL), its later calls raise DOOMED
        at once."""
        ...

    def create_session(self, record: SessionRecord) -> None: ...

    def discard_session(self, session_id: str) -> None:
        """Remove a session that never took part (no inputs to or from it, no Agents of
        its own), with its entries: what a spawn that failed half-way made. Raises
        StoreError, removing nothing, for any other session."""
        ...

    def get_session(self, session_id: str) -> SessionRecord | None: ...

    def list_sessions(
        self,
        *,
        cwd: str | None = None,
        roots_only: bool = False,
        limit: int | None = None,
        owner_id: str | None = None,
        root_id: str | None = None,
    ) -> list[SessionRecord]:
        """Newest first; `root_id` selects the owned sessions of one tree."""
        ...

    def session_named(self, owner_id: str, name: str) -> SessionRecord | None:
        """The session of `owner_id` named `name` (the newest, if several), found by
        index: its cost does not grow with the owner's other sessions."""
        ...

    def roots_mark(self) -> tuple[int, int]:
        """(count, latest creation time) of root sessions: changes when roots are added."""
        ...

    def update_session(
        self,
        session_id: str,
        *,
        name: str | None = UNSET,
        model: str = UNSET,
        thinking: ThinkingLevel = UNSET,
        meta: dict[str, Any] = UNSET,
    ) -> SessionRecord: ...

    def append(self, session_id: str, entries: Sequence[Entry]) -> None: ...

    def append_later(self, session_id: str, entries: Sequence[Entry]) -> LaterWrite[Any] | None:
        """`append`, handed to the store's write thread: the caller awaits (or waits for)
        the returned write, which commits in order after the session's writes handed
        over before it.
        None when this store commits on the caller's thread: call `append` instead."""
        ...

    def entries(
        self, session_id: str, *, from_last_compaction: bool = False, after: str | None = None
    ) -> list[Entry]:
        """In order: all, or from the latest compaction's first kept entry on; with
        `after`, only those after that entry (all, if the session has no such entry)."""
        ...

    def context_items(self, session_id: str) -> tuple[list[ContextItem], str | None]:
        """What the context is built from, and the id of the session's last entry.

        The messages and compactions of `entries(session_id, from_last_compaction=True)`,
        in order: the other entries, and the entries' own ids and times, are not read.
        """
        ...

    def has_entries(self, session_id: str) -> bool:
        """Whether the session has any entry (without reading them)."""
        ...

    # Inputs between Agents: accepted, then ended exactly once, results read once.

    def add_input(self, record: InputRecord) -> InputRecord: ...

    def end_inputs(
        self,
        ids: Sequence[str],
        status: InputStatus,
        result: str | None,
        *,
        aborted_by_owner: bool = False,
        ended: int | None = None,
    ) -> list[InputRecord]:
        """End those of `ids` still outstanding; returns the records it ended."""
        ...

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
        """`end_inputs` of inputs to `recipient_id`, handed to the store's write thread
        as `append_later` is, in order with that session's appends handed over before
        it (its value: the records it ended); None when this store commits on the
        caller's thread."""
        ...

    async def later_writes(self) -> None:
        """Once every write handed to the write threads has committed, and what its
        awaiters and callbacks do after it has run (at once when there are none)."""
        ...

    def take_undelivered(self, recipient_ids: Sequence[str]) -> list[InputRecord]:
        """Inputs left in the store for these recipients by other runtimes; marks them
        delivered in the same transaction."""
        ...

    def mark_read(self, ids: Sequence[str]) -> None: ...

    def unread_results(self, recipient_ids: Sequence[str]) -> list[InputRecord]:
        """The ended inputs of these recipients whose results are not read yet, in the
        order they ended: `inputs(recipient_ids=..., has_result=True, read=False,
        outstanding=False)`, which a store may remember between the pages of a wait."""
        ...

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
        """Matching inputs, ended ones first in the order they ended, then open ones."""
        ...

    # What `list` reads: searchable documents, latest requests, and root states.

    def search(
        self, root_id: str, include_roots: bool, groups: Sequence[Sequence[str]]
    ) -> list[SearchHit]:
        """Each session of a tree (and all roots) matching a query, with its latest
        matching document (None when its ID, name or cwd matched)."""
        ...

    def request_times(self, root_id: str, include_roots: bool) -> dict[str, int]: ...

    def latest_requests(self, session_ids: Sequence[str]) -> dict[str, tuple[int, str]]: ...

    def set_state(self, session_id: str, state: str) -> None: ...

    def states(self, session_ids: Sequence[str]) -> dict[str, str]:
        """Recorded states; `offline` for sessions no live runtime holds."""
        ...

    # Leases are heartbeats: a holder renews all of its leases at once (`renew`); a lease
    # whose holder's heartbeat is older than the store's lapse counts as gone (at once,
    # for a holder on this machine whose process is gone) and may be taken over.

    def register(self, registration: Registration) -> None:
        """Record (or record again) a holder in the registry, its heartbeat now. The
        store's writes are then its: a write to a session whose lease this holder
        took through this store, and which another holder has since taken over, is
        refused with LeaseLost (a compare-and-set on the lease token)."""
        ...

    def renew(self, registration: Registration) -> frozenset[str]:
        """Renew the holder's heartbeat (one statement for all its leases) and record its
        load; the sessions whose lease it holds now."""
        ...

    def unregister(self, token: str) -> None:
        """Remove a holder that closed from the registry (its leases were released)."""
        ...

    def workers(self) -> list[WorkerRecord]:
        """The registered holders, the most recently opened first."""
        ...

    def waiting_roots(self, limit: int) -> list[WaitingRoot]:
        """Up to `limit` roots waiting for a worker (`WaitingRoot`), the longest waiting
        first; judged by heartbeats alone (a lease is taken with its check)."""
        ...

    # Wake-ups: the store's own way for runtimes to nudge each other, if it has one.

    def mailbox(self, token: str, on_poke: Callable[[], None]) -> Mailbox | None:
        """A mailbox on which the holder `token` hears `notify(token)` (PostgreSQL:
        LISTEN on a connection of its own), or None: the store has none, and runtimes
        poke each other on this machine (`agents.mailbox`)."""
        ...

    def notify(self, token: str) -> bool:
        """Nudge the holder `token` (PostgreSQL: NOTIFY, sent once the transaction it is
        in commits); False when the store has no way of its own."""
        ...

    def acquire_lease(self, session_id: str, holder: LeaseHolder) -> None:
        """Take the session's lease for `holder` (registered as a runtime if it was not
        yet): SessionInUse while another holder's lease on it is alive."""
        ...

    def release_lease(self, session_id: str, holder: LeaseHolder) -> None: ...

    def lease_of(self, session_id: str) -> LeaseHolder | None:
        """The holder of the session's lease, while that lease is alive."""
        ...

    def add_generation(self, generation: GenerationRecord) -> None:
        """Record a new supervision generation."""
        ...

    def update_generation(
        self,
        generation: GenerationRecord,
        *,
        expect_state: GenerationState | None = None,
        end: bool = False,
        result: InputRecord | None = None,
    ) -> bool:
        """Change a generation that has not ended (and is in `expect_state`, if given),
        ending it when `end`, and add `result` for its owner, in one transaction.

        False, with nothing changed, when it had ended or was in another state:
        so a result is recorded, and delivered, exactly once.
        """
        ...

    def get_generation(self, generation_id: str) -> GenerationRecord | None: ...

    def put_generation_document(
        self, generation_id: str, kind: GenerationDocumentKind, body: str
    ) -> None:
        """Replace the generation's document of `kind` (JSON text) in one step: readers
        on any machine see the old one or the new one, never a part."""
        ...

    def generation_document(
        self, generation_id: str, kind: GenerationDocumentKind
    ) -> tuple[str, int] | None:
        """The generation's document of `kind` and when it was written (ms), if any."""
        ...

    def generations(
        self,
        *,
        root_id: str | None = None,
        owner_id: str | None = None,
        session_id: str | None = None,
        live: bool | None = None,
    ) -> list[GenerationRecord]:
        """Oldest first; `live` selects those not yet ended (True) or ended (False)."""
        ...

    # ---- Programs ----------------------------------------------------------------

    def add_program(self, program: ProgramRecord) -> None:
        """Record a new Program, `running`."""
        ...

    def end_program(self, program: ProgramRecord, values: Mapping[str, str] | None = None) -> bool:
        """Record that a running Program ended as `program` says (completed, failed or
        stopped, with its result), and keep `values` (key: JSON text) for its caller, in
        one transaction; False (and nothing written) when it had ended already."""
        ...

    def mark_programs_returned(self, program_ids: Sequence[str]) -> None:
        """These ended Programs' results were given to their callers."""
        ...

    def stop_running_programs(self, caller_id: str, reason: str, ended: int) -> list[ProgramRecord]:
        """End `stopped`, with `reason`, the caller's Programs still recorded `running`
        (their process is gone); returns them."""
        ...

    def get_program(self, program_id: str) -> ProgramRecord | None: ...

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
        """The caller's Programs, newest first; with `kind`, its scripts (what the
        `program` tool shows) or its SDK scopes only."""
        ...

    def count_programs(
        self,
        caller_id: str,
        *,
        kind: ProgramKind | None = None,
        state: ProgramState | None = None,
        returned: bool | None = None,
    ) -> int: ...

    def program_values(self, session_id: str) -> dict[str, str]:
        """What completed Programs of this caller kept with `store()` (key: JSON text)."""
        ...

    def close(self) -> None: ...
