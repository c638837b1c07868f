"""A store that announces what it committed: inputs accepted and ended, results for
owners, generations recorded or changed. Each event is published after its
transaction returned, so no subscriber hears of anything the store might still lose."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from types import TracebackType
from typing import Any, cast

from piagents.events.hub import EventHub
from piagents.events.records import GenerationChanged, InputAccepted, InputEnded, ResultDelivered
from piagents.store.base import Store
from piagents.store.records import GenerationRecord, GenerationState, InputRecord, InputStatus
from piagents.store.write_thread import LaterWrite


class PublishingStore:
    """Wraps a `Store`: the same calls, plus events for the commits front ends show."""

    def __init__(self, inner: Store, hub: EventHub) -> None:
        self.inner = inner
        self._hub = hub

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def batch(self, *, atomic: bool = False) -> AbstractContextManager[object]:
        """The inner store's batch; its events are delivered once it committed."""
        return _PublishedBatch(self._hub.held(), self.inner.batch(atomic=atomic))

    def add_input(self, record: InputRecord) -> InputRecord:
        stored = self.inner.add_input(record)
        self._hub.publish(
            InputAccepted(
                stored.id,
                stored.recipient_id,
                stored.sender_id,
                stored.kind,
                stored.delivery,
                stored.text,
                stored.has_result,
            )
        )
        return stored

    def end_inputs(
        self,
        ids: Sequence[str],
        status: InputStatus,
        result: str | None,
        *,
        aborted_by_owner: bool = False,
        ended: int | None = None,
    ) -> list[InputRecord]:
        records = self.inner.end_inputs(
            ids, status, result, aborted_by_owner=aborted_by_owner, ended=ended
        )
        self._ended(records)
        return records

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
        """The inner store's, its events delivered once the write is read (committed)."""
        write = self.inner.end_inputs_later(
            recipient_id, ids, status, result, aborted_by_owner=aborted_by_owner, ended=ended
        )
        return write.then(self._ended) if write is not None else None

    def _ended(self, records: Sequence[InputRecord]) -> None:
        for r in records:
            self._hub.publish(
                InputEnded(
                    r.id, r.recipient_id, r.sender_id, r.status, r.result, r.aborted_by_owner
                )
            )
            if r.has_result and r.sender_id is not None:
                self._hub.publish(ResultDelivered(r.sender_id, r.recipient_id, r.id, r.status))

    def add_generation(self, generation: GenerationRecord) -> None:
        self.inner.add_generation(generation)
        self._generation(generation)

    def update_generation(
        self,
        generation: GenerationRecord,
        *,
        expect_state: GenerationState | None = None,
        end: bool = False,
        result: InputRecord | None = None,
    ) -> bool:
        changed = self.inner.update_generation(
            generation, expect_state=expect_state, end=end, result=result
        )
        if changed:
            self._generation(generation)
            if result is not None:
                self._hub.publish(
                    ResultDelivered(
                        result.recipient_id,
                        generation.session_id,
                        result.id,
                        generation.outcome or generation.state,
                        generation.id,
                    )
                )
        return changed

    def _generation(self, g: GenerationRecord) -> None:
        self._hub.publish(
            GenerationChanged(
                g.id, g.label, g.root_id, g.owner_id, g.session_id, g.state, g.outcome
            )
        )


def publishing(inner: Store, hub: EventHub) -> Store:
    """`inner`, announcing its commits on `hub` (typed as the store it wraps)."""
    return cast(Store, PublishingStore(inner, hub))


class _PublishedBatch:
    """The events held while the store's batch runs, delivered once it committed (a
    class: a generator's context manager costs a microsecond more, and a spawn is one)."""

    __slots__ = ("_batch", "_held")

    def __init__(self, held: AbstractContextManager[object], batch: AbstractContextManager[object]):
        self._held = held
        self._batch = batch

    def __enter__(self) -> None:
        self._held.__enter__()
        try:
            self._batch.__enter__()
        except BaseException as exc:
            self._held.__exit__(type(exc), exc, exc.__traceback__)
            raise

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            self._batch.__exit__(kind, exc, tb)
        except BaseException as failed:  # the commit failed: its events are dropped
            self._held.__exit__(type(failed), failed, failed.__traceback__)
            raise
        self._held.__exit__(kind, exc, tb)
