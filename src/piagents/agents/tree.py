"""Runtime state of one ownership tree: its slots, open inputs and waits."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from piagents.agents.scheduler import SlotScheduler


@dataclass(eq=False, slots=True)
class Waiter:
    """An Agent inside `wait`: done when none of `targets` has pending inputs, or interrupted."""

    caller_id: str
    targets: frozenset[str]
    done: asyncio.Event = field(default_factory=asyncio.Event)
    interrupted: bool = False
    gave_up_slot: bool = False
    # The place in line for the slot, taken the moment the wait ends, so the
    # waiter resumes ahead of inputs that have not started.
    resume: asyncio.Future[None] | None = None


@dataclass(slots=True)
class AgentMarks:
    """What the agents layer knows of one loaded Agent beyond its loop."""

    waiter: Waiter | None = None
    resuming: bool = False  # back from `wait`, waiting for a slot again
    # After its turn is stopped, messages from other Agents become writes until
    # its next input from its user or owner.
    stopped: bool = False
    aborting_by_owner: bool = False


class Tree:
    """One root and its owned Agents, as loaded in this runtime."""

    def __init__(
        self, root_id: str, max_concurrent: int, on_change: Callable[[], None] | None = None
    ) -> None:
        self.root_id = root_id
        self.slots = SlotScheduler(max_concurrent, on_change)
        # Outstanding inputs to owned Agents (the `maxOutstanding` count), by recipient.
        self.open_inputs: dict[str, set[str]] = {}
        # Outstanding inputs that will have results, by recipient (what `wait` waits for).
        self.pending_results: dict[str, set[str]] = {}

    @property
    def outstanding(self) -> int:
        return sum(len(ids) for ids in self.open_inputs.values())

    def open(self, recipient_id: str, input_id: str, *, counts: bool, has_result: bool) -> None:
        if counts:
            self.open_inputs.setdefault(recipient_id, set()).add(input_id)
        if has_result:
            self.pending_results.setdefault(recipient_id, set()).add(input_id)

    def close(self, recipient_id: str, input_id: str) -> None:
        for book in (self.open_inputs, self.pending_results):
            ids = book.get(recipient_id)
            if ids is not None:
                ids.discard(input_id)
                if not ids:
                    del book[recipient_id]

    def pending(self, agent_id: str) -> bool:
        return bool(self.pending_results.get(agent_id))

    def end_wait(self, waiter: Waiter, *, interrupted: bool = False) -> None:
        if waiter.done.is_set():
            return
        waiter.interrupted = interrupted
        if waiter.gave_up_slot and waiter.resume is None:
            waiter.resume = self.slots.claim(waiter.caller_id, resuming=True)
        waiter.done.set()
