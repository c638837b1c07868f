"""Runtime state of one ownership tree: its slots, open inputs and waits."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from piagents.agents.scheduler import SlotScheduler


@dataclass(eq=False, slots=True)
class Waiter:
    """One `wait` call: done when none of `targets` has pending inputs, or interrupted."""

    caller_id: str
    targets: frozenset[str]
    done: asyncio.Event = field(default_factory=asyncio.Event)
    interrupted: bool = False
    # The targets that had pending inputs when last looked at. The end of a target's
    # input looks at that target alone, and at all of them once none is left here,
    # so a wait for N Agents costs O(N) in all, not O(N) at each of their ends.
    unsettled: set[str] = field(default_factory=set)

    def settled(self, target: str, pending: Callable[[str], bool]) -> bool:
        """A target's input ended: True when none of the targets has pending inputs."""
        if pending(target):
            return False
        self.unsettled.discard(target)
        return not self.unsettled and not any(pending(t) for t in self.targets)


@dataclass(slots=True)
class AgentMarks:
    """What the agents layer knows of one loaded Agent beyond its loop."""

    # Its `wait` calls in progress (a model may make several in one reply).
    waiters: list[Waiter] = field(default_factory=list)
    gave_up_slot: bool = False  # for its waits, until the last of them ends
    # The place in line for the slot, taken the moment its last wait ends, so
    # it resumes ahead of inputs that have not started.
    resume: asyncio.Future[None] | None = None
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
        self._outstanding = 0  # the sum of open_inputs' sizes, kept as they change

    @property
    def outstanding(self) -> int:
        return self._outstanding

    def open(self, recipient_id: str, input_id: str, *, counts: bool, has_result: bool) -> None:
        if counts:
            ids = self.open_inputs.setdefault(recipient_id, set())
            if input_id not in ids:
                ids.add(input_id)
                self._outstanding += 1
        if has_result:
            self.pending_results.setdefault(recipient_id, set()).add(input_id)

    def close(self, recipient_id: str, input_id: str) -> None:
        for book in (self.open_inputs, self.pending_results):
            ids = book.get(recipient_id)
            if ids is not None and input_id in ids:
                ids.discard(input_id)
                if book is self.open_inputs:
                    self._outstanding -= 1
                if not ids:
                    del book[recipient_id]

    def pending(self, agent_id: str) -> bool:
        return bool(self.pending_results.get(agent_id))

    def end_wait(self, waiter: Waiter, marks: AgentMarks, *, interrupted: bool = False) -> None:
        """End one wait of the Agent `marks` describe; the last to end claims its slot back."""
        if waiter.done.is_set():
            return
        waiter.interrupted = interrupted
        waiter.done.set()
        if (
            marks.gave_up_slot
            and marks.resume is None
            and all(w.done.is_set() for w in marks.waiters)
        ):
            marks.resume = self.slots.claim(waiter.caller_id, resuming=True)
