"""Waiting for a lead's delegations to come back, for one-shot runs (`pi-agents -p`).

A lead's `delegate` returns at once; each result arrives later as a message and
starts another turn of the lead. A one-shot run is over when the lead is idle,
none of its generations is still running, and no message waits in the store for
it or its agents here: its last answer is then final. (A worker commits its
outcome and the lead's result together, then pokes the lead; the poke may come
later than the commit, or never.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Protocol

from piagents.harness.events import LoopEvent, RunEnded
from piagents.store.base import Store
from piagents.supervision.ports import AgentHandle


class Announcing(Protocol):
    """What settling uses of the coordinator: its change listeners."""

    @property
    def listeners(self) -> list[Callable[[], None]]: ...


class Draining(Protocol):
    """What settling uses of the delivery path: taking what waits in the store."""

    def drain(self) -> None: ...


class Settling(Protocol):
    """What settling uses of the runtime that runs the lead."""

    @property
    def store(self) -> Store: ...

    @property
    def agents(self) -> Mapping[str, AgentHandle]: ...

    @property
    def coordinator(self) -> Announcing: ...

    @property
    def delivery(self) -> Draining: ...


def running_generations(rt: Settling, lead: AgentHandle) -> int:
    """The lead's generations still running (lost or unknown ones never report back)."""
    return sum(1 for g in rt.store.generations(root_id=lead.id, live=True) if g.live)


def undelivered(rt: Settling, lead: AgentHandle) -> bool:
    """Messages wait in the store for the lead or an agent of its tree loaded here."""
    ids = [a.id for a in list(rt.agents.values()) if (a.session.record.root_id or a.id) == lead.id]
    return bool(rt.store.inputs(recipient_ids=ids, delivered=False))


async def settled_answer(rt: Settling, lead: AgentHandle, answer: str) -> str:
    """The lead's last answer once it is idle, with no generation running and nothing
    waiting in the store for it."""
    changed = asyncio.Event()
    last = answer

    def on_event(event: LoopEvent) -> None:
        nonlocal last
        if isinstance(event, RunEnded) and event.outcome.status == "completed":
            last = event.outcome.answer
        changed.set()

    lead.loop.listeners.append(on_event)
    rt.coordinator.listeners.append(changed.set)
    try:
        while True:
            changed.clear()  # before looking, so no change after the look is missed
            waiting = undelivered(rt, lead)
            if waiting:  # committed before its poke came, or with none: take it now
                rt.delivery.drain()
            busy = lead.loop.busy or lead.loop.phase != "idle"
            if not (busy or waiting or running_generations(rt, lead)):
                break
            # Changes are announced; the timeout only bounds a missed announcement.
            try:
                async with asyncio.timeout(1.0):
                    await changed.wait()
            except TimeoutError:
                pass
        return last
    finally:
        lead.loop.listeners.remove(on_event)
        rt.coordinator.listeners.remove(changed.set)
