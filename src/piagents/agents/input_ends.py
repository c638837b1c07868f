"""Recording that inputs ended: at once, or, for a completed run on a store that
commits on a write thread of its own (PostgreSQL), on that thread while the Agent
goes on; what the store refuses is kept and retried (`UnrecordedEnds`).

Either way what follows the record (the inputs closed in their tree, the owner
told, the events) runs once the store has committed it, by `recorded`."""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from piagents.agents.unrecorded import InputEnd, UnrecordedEnds
from piagents.ai.messages import now_ms
from piagents.store.base import LeaseLost, Store, StoreError
from piagents.store.records import InputRecord, InputStatus, SessionRecord

log = logging.getLogger("piagents")

Recorded = Callable[[InputEnd, list[InputRecord]], None]


class InputEnds:
    """The ends of inputs, as the store is to record them."""

    def __init__(
        self,
        store: Callable[[], Store],
        recorded: Recorded,
        background: Callable[[Coroutine[Any, Any, None]], None],
        closing: Callable[[], bool],
    ) -> None:
        self._store = store
        self._recorded = recorded
        self._unrecorded = UnrecordedEnds(self.record, background, closing)

    def end(
        self,
        recipient: SessionRecord,
        ids: Sequence[str],
        status: InputStatus,
        result: str | None,
        aborted_by_owner: bool,
    ) -> None:
        """Record that these inputs ended, then what follows. When the store cannot be
        written, they stay open and are recorded as soon as it can (StoreError)."""
        if not ids:
            return
        end = InputEnd(recipient, tuple(ids), status, result, aborted_by_owner, now_ms())
        try:
            self.record(end)
        except LeaseLost:
            raise  # the tree was taken over: its new holder ends these inputs
        except StoreError:
            self._unrecorded.add(end)
            raise

    def end_later(self, recipient: SessionRecord, ids: Sequence[str], result: str | None) -> bool:
        """A completed run's inputs, ended on the store's write thread: False when the
        store has none (then `end` them). A failure is retried as `end`'s are."""
        if not ids:
            return False
        end = InputEnd(recipient, tuple(ids), "completed", result, False, now_ms())
        write = self._store().end_inputs_later(
            recipient.id, list(end.ids), end.status, end.result, ended=end.ended
        )
        if write is None:
            return False

        def done(_: object) -> None:
            try:
                ended = write.result()
            except LeaseLost:
                return  # taken over meanwhile: its new holder ends these inputs
            except StoreError as exc:
                log.warning("The end of inputs %s is not recorded yet: %s", list(end.ids), exc)
                self._unrecorded.add(end)
                return
            self._recorded(end, ended)

        write.done_here().add_done_callback(done)
        return True

    def record(self, end: InputEnd) -> None:
        ended = self._store().end_inputs(
            list(end.ids),
            end.status,
            end.result,
            aborted_by_owner=end.aborted_by_owner,
            ended=end.ended,
        )
        self._recorded(end, ended)
