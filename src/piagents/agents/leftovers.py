"""Inputs a runtime that stopped left open in a tree, settled when its root is loaded
again.

On one machine (the Pi Agents document's rule) they end `aborted`: the runtime
that had them was closed or killed, and whoever sent them is told. A
`pi-agents worker` that takes a tree over from a worker whose heartbeat lapsed
resumes them instead (`WakePolicy.resume`): each input goes back to its Agent in
the order it was accepted, an input that had started goes on from its last
committed step (the model call that had no answer is made again), and a tool call
that started and did not commit gets an error result saying it was interrupted:
it is never run again. Sessions a live holder has (a managed agent's worker) are
that holder's, not settled here; a managed agent's inputs end `aborted` in both
cases (supervision's recovery decides what became of its generation).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from piagents.agents.accepted import Accepted
from piagents.agents.ports import AgentsPorts
from piagents.harness.interrupted import interrupted_results, open_calls, started
from piagents.store.base import StoreError
from piagents.store.records import InputRecord, SessionRecord
from piagents.supervision.records import MANAGED  # a session made from a definition

if TYPE_CHECKING:
    from piagents.agent import Agent

log = logging.getLogger("piagents")

Submit = Callable[["Agent", InputRecord, bool], Accepted]
RESUME_FAILED = "The input could not be resumed after a takeover: {error}"


class Leftovers:
    """Settles the open inputs of a tree whose root was just loaded here."""

    def __init__(
        self,
        ports: AgentsPorts,
        tree_of: Callable[[str], Mapping[str, SessionRecord]],
        submit: Submit,
        drain: Callable[[], None],
        aborted_result: str,
    ) -> None:
        self.ports = ports
        self.tree_of = tree_of  # the owned sessions of a root, by ID (the directory's)
        self.submit = submit  # hands a stored input to a loaded Agent (the coordinator's)
        self.drain = drain  # takes what waits in the store for the Agents loaded here
        self.aborted_result = aborted_result

    def settle(self, root: Agent) -> None:
        """For a root just loaded: its own leftovers go back to it at once, ahead of
        what waits undelivered (taken next); its owned Agents' once they are loaded."""
        store = self.ports.store()
        tree = self.tree_of(root.id)
        owned = [sid for sid in tree if store.lease_of(sid) is None]
        left = store.inputs(recipient_ids=[root.id, *owned], outstanding=True, delivered=True)
        if not left:
            return
        # A managed agent's inputs end as on one machine: its generation follows the
        # supervision face's own recovery (`lost` or `unknown`, its owner told once).
        managed = {sid for sid in owned if MANAGED in tree[sid].meta}
        ended = [r for r in left if not self.ports.wake.resume or r.recipient_id in managed]
        if ended:
            store.end_inputs([r.id for r in ended], "aborted", self.aborted_result)
        gone = {r.id for r in ended}
        ordered = sorted((r for r in left if r.id not in gone), key=lambda r: r.seq)
        if not ordered:
            return
        mine = [r for r in ordered if r.recipient_id == root.id]
        for stored in mine:
            self._resume(root, stored, repair=stored is mine[0])
        rest = [r for r in ordered if r.recipient_id != root.id]
        if rest:
            self.ports.background(self._resume_owned(rest), "resuming work taken over")

    async def _resume_owned(self, left: Sequence[InputRecord]) -> None:
        repaired: set[str] = set()
        for stored in left:
            agent = self.ports.agents.get(stored.recipient_id)
            if agent is None:
                try:
                    record = self.ports.store().get_session(stored.recipient_id)
                    if record is None:
                        raise StoreError(f"No session {stored.recipient_id}")
                    agent = await self.ports.loader.wake(record)
                except Exception as exc:
                    self._failed(stored, exc)
                    continue
            self._resume(agent, stored, repair=agent.id not in repaired)
            repaired.add(agent.id)
        self.drain()  # what waited undelivered for the Agents loaded now

    def _resume(self, agent: Agent, stored: InputRecord, *, repair: bool) -> None:
        """Hand `stored` back to `agent`; first (`repair`) end its tool calls that have
        no result as interrupted."""
        try:
            session = agent.session
            if repair:
                results = interrupted_results(open_calls(session.entries))
                if results:
                    session.append(*results)
            rendered = stored.rendered if stored.rendered is not None else stored.text
            self.submit(agent, stored, started(session.entries, rendered, stored.accepted))
        except Exception as exc:  # that input ends, clearly; the others go on
            self._failed(stored, exc)

    def _failed(self, stored: InputRecord, exc: Exception) -> None:
        log.warning("Input %s could not be resumed: %s", stored.id, exc)
        try:
            self.ports.store().end_inputs([stored.id], "failed", RESUME_FAILED.format(error=exc))
        except StoreError as end_exc:
            log.warning("Input %s could not be ended: %s", stored.id, end_exc)
