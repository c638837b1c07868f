"""Which Agents' states changed, computed only for the Agents said to have changed.

The coordinator says which Agents a change touched (`touch`); at its next flush
only those, their roots, and (for a change it cannot place) the Agents not idle
are asked for their state. An idle Agent only leaves idle through an input or
its loop, both of which name it, so nothing else needs asking.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator

from piagents.events.hub import EventHub
from piagents.events.records import AgentLoaded, AgentState, AgentStateChanged, AgentUnloaded
from piagents.store.records import SessionRecord


class StateTracker:
    """The loaded Agents by tree (in load order) and the state last published of each."""

    def __init__(self, hub: EventHub) -> None:
        self._hub = hub
        self._root_of: dict[str, str] = {}
        self._members: dict[str, dict[str, None]] = {}  # root id -> its loaded Agents, in order
        self._states: dict[str, AgentState] = {}
        self._active: set[str] = set()  # not idle when last published
        self._dirty: set[str] = set()
        self._unplaced = False

    def loaded(self, record: SessionRecord) -> None:
        root_id = record.root_id or record.id
        self._root_of[record.id] = root_id
        self._members.setdefault(root_id, {})[record.id] = None
        self._dirty.add(record.id)
        self._hub.publish(AgentLoaded(record.id, root_id, record.owner_id, record.name))

    def unloaded(self, agent_id: str) -> None:
        root_id = self._root_of.pop(agent_id, None)
        if root_id is None:
            return
        members = self._members.get(root_id)
        if members is not None:
            members.pop(agent_id, None)
            if not members:
                del self._members[root_id]
        self._states.pop(agent_id, None)
        self._active.discard(agent_id)
        self._dirty.discard(agent_id)
        if root_id in self._root_of:
            self._dirty.add(root_id)
        self._hub.publish(AgentUnloaded(agent_id, root_id))

    def members(self, root_id: str) -> list[str]:
        """The Agents of a tree loaded here, root included, in the order they were loaded."""
        return list(self._members.get(root_id, ()))

    def maybe_active(self, root_id: str) -> Iterator[str]:
        """The tree's loaded Agents that may not be idle now: those not idle when last
        published and those changed since (some may be named twice). Every other one is
        idle: it could leave idle only through a change that names it."""
        if self._unplaced:  # a change no one placed: any of them
            yield from self.members(root_id)
            return
        root_of = self._root_of
        for agent_id in itertools.chain(self._active, self._dirty):  # lazily: any() stops early
            if root_of.get(agent_id) == root_id:
                yield agent_id

    def last_state(self, agent_id: str) -> AgentState | None:
        return self._states.get(agent_id)

    def touch(self, agent_ids: Iterable[str]) -> None:
        """These Agents' states may have changed; none named: some loaded Agent's may."""
        named = False
        for agent_id in agent_ids:
            named = True
            self._dirty.add(agent_id)
            root_id = self._root_of.get(agent_id)
            if root_id is not None:
                self._dirty.add(root_id)
        if not named:
            self._unplaced = True

    def flush(self, state_of: Callable[[str], AgentState]) -> list[AgentStateChanged]:
        """Publish the states that changed since the last flush, and return them."""
        dirty = self._dirty
        self._dirty = set()
        if self._unplaced:
            self._unplaced = False
            dirty |= self._active
            dirty.update(root for root in self._members if root in self._root_of)
        changes: list[AgentStateChanged] = []
        for agent_id in sorted(dirty, key=self._order):
            root_id = self._root_of.get(agent_id)
            if root_id is None:
                continue  # not loaded (any more)
            state = state_of(agent_id)
            previous = self._states.get(agent_id)
            if state == previous:
                continue
            self._states[agent_id] = state
            if state == "idle":
                self._active.discard(agent_id)
            else:
                self._active.add(agent_id)
            change = AgentStateChanged(agent_id, root_id, state, previous)
            changes.append(change)
            self._hub.publish(change)
        return changes

    def _order(self, agent_id: str) -> tuple[int, str]:
        # Owned Agents before their roots: a root's state follows from its tree's.
        return (1 if self._root_of.get(agent_id) == agent_id else 0, agent_id)
