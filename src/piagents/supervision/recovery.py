"""Recovery: what became of generations whose runtime is not this one.

A generation not running here is `lost` once its runtime is proven gone (its process
gone on this machine, or its heartbeat lapsed in the store), and `unknown` when that
cannot be proven; the first runtime to prove it gone tells the
owner, once (the state change and the owner's result commit together).
"""

from __future__ import annotations

import msgspec

from piagents.ai.messages import now_ms
from piagents.store.base import LeaseHolder
from piagents.store.records import GenerationRecord
from piagents.supervision import placement, texts
from piagents.supervision.generations import Generations


def recovered(gens: Generations, g: GenerationRecord) -> GenerationRecord:
    """`g` as it is now: `lost` or `unknown` when its runtime is no longer alive."""
    if g.id in gens.live or g.state in ("lost", "unknown") or g.pid is None:
        return g
    holder = LeaseHolder(g.pid, g.host or "", g.token or "", g.started or "")
    presence = placement.presence_of(gens.ports.store(), holder)
    if presence == "alive":
        return g
    state = "lost" if presence == "gone" else "unknown"
    changed = msgspec.structs.replace(g, state=state, updated=now_ms())
    notice = None
    if state == "lost":
        notice = gens.ports.delivery.result_record(
            g.owner_id,
            g.session_id,
            g.root_id,
            texts.terminal_result(
                agent=g.label,
                definition=g.definition,
                session=g.session_id,
                request=g.id,
                status="lost",
                final_answer="",
            ),
        )
    store = gens.ports.store()
    if store.update_generation(changed, expect_state=g.state, result=notice):
        if notice is not None:
            gens.deliver(g.owner_id)
        return changed
    return store.get_generation(g.id) or changed


def recover(gens: Generations, root_id: str) -> None:
    """Check the generations of a lead that was just opened."""
    for g in gens.ports.store().generations(root_id=root_id, live=True):
        recovered(gens, g)
