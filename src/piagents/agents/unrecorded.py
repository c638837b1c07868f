"""Ends of inputs the store could not record when they happened (a full disk, a lock
another process holds): kept and retried until the store takes them, so that an
accepted input still ends with an outcome its sender can see."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from piagents.store.base import LeaseLost, StoreError
from piagents.store.records import InputStatus, SessionRecord

FIRST_RETRY_S, LAST_RETRY_S = 0.05, 2.0


@dataclass(frozen=True, slots=True)
class InputEnd:
    """Inputs of one recipient that ended, as the store is to record them."""

    recipient: SessionRecord
    ids: tuple[str, ...]
    status: InputStatus
    result: str | None
    aborted_by_owner: bool
    ended: int


class UnrecordedEnds:
    """Retries `record` for each end it was given, in order, until each succeeds or
    `closing()` (then the next load of the tree settles them)."""

    def __init__(
        self,
        record: Callable[[InputEnd], None],
        start: Callable[[Coroutine[Any, Any, None]], None],
        closing: Callable[[], bool],
    ) -> None:
        self._record = record
        self._start = start
        self._closing = closing
        self._ends: list[InputEnd] = []
        self._retrying = False

    def __len__(self) -> int:
        return len(self._ends)

    def add(self, end: InputEnd) -> None:
        self._ends.append(end)
        if not self._retrying:
            self._retrying = True
            self._start(self._retry())

    async def _retry(self) -> None:
        delay = FIRST_RETRY_S
        try:
            while self._ends and not self._closing():
                await asyncio.sleep(delay)  # nothing tells us when the store has room again
                delay = min(delay * 2, LAST_RETRY_S)
                while self._ends:
                    try:
                        self._record(self._ends[0])
                    except LeaseLost:
                        pass  # taken over meanwhile: its new holder ends these inputs
                    except StoreError:
                        break
                    self._ends.pop(0)
        finally:
            self._retrying = False
