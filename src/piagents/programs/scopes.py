"""The SDK Program scopes open in one runtime, as Program records of kind `scope`.

A scope is recorded `running` when it opens and ends once, with its Agents offline:
`completed`, `failed` (its body raised) or `stopped` (cancelled, its caller went
offline, the runtime closed), each start and end announced once committed, as a
script's are. A record a killed process left `running` is stopped when its caller is
loaded again, with the scripts' (`ProgramRunner.caller_loaded`). Scopes are never shown
to a model: the `program` tool reads only scripts.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Callable

import msgspec

from piagents.events.records import ProgramChanged
from piagents.programs.addressing import shown_ids
from piagents.programs.sdk import ProgramScopeSession, ScopeEnd
from piagents.store.base import Store, StoreError
from piagents.store.records import ProgramRecord

log = logging.getLogger("piagents")


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class RecordedScopes:
    """`ScopeRecords` over the runtime's store, and the scopes open now."""

    def __init__(
        self,
        store: Callable[[], Store],
        publish: Callable[[ProgramChanged], None],
        closing: Callable[[], bool],
    ) -> None:
        self.store = store
        self.publish = publish
        self.closing = closing
        self.open: dict[str, tuple[ProgramScopeSession, ProgramRecord]] = {}

    def opened(self, session: ProgramScopeSession) -> None:
        if self.closing():
            raise RuntimeError("the runtime is closing: no Program scope can open")
        caller = session.scope.caller.session.record
        record = ProgramRecord(
            id=session.id,
            caller_id=caller.id,
            root_id=caller.root_id or caller.id,
            code="",
            kind="scope",
            created=now_ms(),
        )
        self.store().add_program(record)
        # Shown (to its Agents, in the panel) by its short ID among the caller's Programs.
        short = shown_ids(self.store().programs(caller.id))[record.id]
        session.scope = dataclasses.replace(session.scope, short_id=short)
        self.open[record.id] = (session, record)
        self.publish(ProgramChanged.of(record))

    def ended(self, session: ProgramScopeSession, state: ScopeEnd, reason: str | None) -> None:
        entry = self.open.pop(session.id, None)
        if entry is None:
            return
        ended = msgspec.structs.replace(
            entry[1], state=state, reason=reason, returned=True, ended=now_ms()
        )
        try:
            changed = self.store().end_program(ended)
        except StoreError as exc:
            log.warning("Program scope %s could not be recorded as ended: %s", ended.id, exc)
            return
        if changed:
            self.publish(ProgramChanged.of(ended))

    def running(self, caller_id: str) -> bool:
        return any(r.caller_id == caller_id for _, r in self.open.values())

    async def stop_for(self, caller_id: str | None, reason: str) -> None:
        """Stop the scopes open for `caller_id` (every one: None), their Agents offline."""
        sessions = [s for s, r in self.open.values() if caller_id in (None, r.caller_id)]
        ends = await asyncio.gather(
            *(s.end("stopped", reason) for s in sessions), return_exceptions=True
        )
        for session, end in zip(sessions, ends, strict=True):
            if isinstance(end, Exception):  # recorded all the same (`end`'s own finally)
                log.warning(
                    "The Agents of Program scope %s could not be closed: %s", session.id, end
                )
