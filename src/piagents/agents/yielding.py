"""An owned Agent's slot given up while it waits on work it does not do itself (its
`wait` on its Agents, a Program it runs), and taken again before it continues.

The slot goes back to the tree at once; when the Agent's last such wait ends it lines
up for one again ahead of inputs that have not started (`Tree.end_wait`), and the
context is left only once it holds one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from piagents.agents.tree import AgentMarks, Waiter

if TYPE_CHECKING:
    from piagents.agents.coordinator import Coordinator
    from piagents.store.records import SessionRecord


@asynccontextmanager
async def slot_given_up(
    coordinator: Coordinator, agent: SessionRecord, waiter: Waiter
) -> AsyncIterator[Waiter]:
    """`waiter` is one wait of `agent`: a root keeps no slot, so it gives up nothing."""
    c = coordinator
    tree = c.tree(c.root_of(agent))
    marks = c.marks.setdefault(agent.id, AgentMarks())
    marks.waiters.append(waiter)
    if not agent.is_root and tree.slots.holds(agent.id):
        marks.gave_up_slot = True
        tree.slots.release(agent.id)
    c.changed()
    try:
        yield waiter
    finally:
        # On timeout or cancellation too; the last wait to end lines up for the slot.
        tree.end_wait(waiter, marks)
        marks.waiters.remove(waiter)
        resume = marks.resume if not marks.waiters else None
        if resume is not None:
            marks.resume, marks.gave_up_slot = None, False
            marks.resuming = True
            c.changed()
            try:
                await tree.slots.claimed(agent.id, resume)
            finally:
                marks.resuming = False
        c.changed()
