"""Pi Agents semantics: delivery, slots, results, notifications, waits and states.

The `agent` tool calls the operations here; the harness calls the hooks. All
durable facts (sessions, inputs, results) go through the store first.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from piagents.agents import texts
from piagents.agents.accepted import Accepted
from piagents.agents.addressing import short_ids
from piagents.agents.delivery import Delivery
from piagents.agents.directory import Directory
from piagents.agents.errors import AgentCallError, error
from piagents.agents.input_ends import InputEnds
from piagents.agents.leftovers import Leftovers
from piagents.agents.ports import AgentsPorts
from piagents.agents.texts import Shown
from piagents.agents.tree import AgentMarks, Tree
from piagents.agents.unrecorded import InputEnd
from piagents.events.records import AgentState
from piagents.events.states import StateTracker
from piagents.harness.events import (
    Input,
    InputQueued,
    LoopEvent,
    PhaseChanged,
    RunEnded,
    RunOutcome,
    RunStarted,
)
from piagents.harness.loop import AgentLoop
from piagents.store.base import StoreError
from piagents.store.records import (
    InputDelivery,
    InputKind,
    InputRecord,
    SessionRecord,
    new_id,
)

if TYPE_CHECKING:
    from piagents.agent import Agent

__all__ = ["ABORTED_RESULT", "STATES", "Accepted", "AgentCallError", "Coordinator", "error"]

log = logging.getLogger("piagents")

ABORTED_RESULT = "The input was aborted."
STATES = ("running", "waiting", "queued", "idle")


class Coordinator:
    """One per runtime: the trees loaded here and the Agents in them."""

    def __init__(self, ports: AgentsPorts, states: StateTracker) -> None:
        self.ports = ports
        self.states = states  # events: which Agents' states changed, and the last published
        self.delivery = Delivery(ports, self)  # every message to an Agent goes through it
        self.trees: dict[str, Tree] = {}
        self.marks: dict[str, AgentMarks] = {}
        self._directory: Directory | None = None
        self.listeners: list[Callable[[], None]] = []  # told when any state may have changed
        self._change_pending = False
        # What a stopped runtime left open in a tree, settled when its root loads here.
        self._leftovers = Leftovers(
            ports,
            lambda root_id: self.directory.tree(root_id),
            self._submit,
            self.delivery.drain,
            ABORTED_RESULT,
        )
        # Ends of inputs: recorded at once or on the store's write thread, and those
        # the store refused (full, locked) retried until it takes them.
        self.ends = InputEnds(
            ports.store,
            self._recorded,
            lambda retry: ports.background(retry, "recording the end of inputs"),
            ports.closing,
        )

    # ---- settings & basics ---------------------------------------------------

    @property
    def max_concurrent(self) -> int:
        return self.ports.settings().agents.max_concurrent

    @property
    def max_outstanding(self) -> int:
        return self.ports.settings().agents.max_outstanding

    @property
    def abort_timeout(self) -> float:
        return self.ports.settings().agents.abort_timeout_ms / 1000

    def changed(self, *agent_ids: str) -> None:
        """Something may have changed state (of these Agents, when named); listeners
        hear once per loop iteration."""
        self.states.touch(agent_ids)  # events: only these are asked their state
        if self._change_pending:
            return
        self._change_pending = True
        try:
            asyncio.get_running_loop().call_soon(self._flush_changes)
        except RuntimeError:  # no loop running (closing): tell at once
            self._flush_changes()

    def _flush_changes(self) -> None:
        self._change_pending = False
        self._publish_root_states()
        for listener in list(self.listeners):
            listener()

    def _publish_root_states(self) -> None:
        """Publish the states that changed (events), and record root states so runtimes
        in other processes can list them."""
        for change in self.states.flush(self.state_of):
            if change.agent_id == change.root_id:
                with contextlib.suppress(Exception):
                    self.ports.store().set_state(change.agent_id, change.state)

    def root_of(self, record: SessionRecord) -> str:
        return record.root_id or record.id

    def tree(self, root_id: str) -> Tree:
        tree = self.trees.get(root_id)
        if tree is None:
            tree = Tree(root_id, self.max_concurrent, lambda: self.changed(root_id))
            self.trees[root_id] = tree
        return tree

    @property
    def directory(self) -> Directory:
        if self._directory is None:
            self._directory = Directory(self.ports.store())
        return self._directory

    def program_of(self, record: SessionRecord) -> str | None:
        return self.directory.program_of(record)

    def sessions_changed(self, record: SessionRecord) -> None:
        """A session was created or renamed here."""
        self.directory.add(record)

    def session_discarded(self, record: SessionRecord) -> None:
        """An owned session made here was taken back: its spawn failed."""
        self.directory.remove(record)
        self.changed(record.id)

    # ---- attaching loaded Agents ------------------------------------------------

    def attach(self, agent: Agent) -> None:
        """Called when the runtime loads an Agent; recovers what a crash left open."""
        self.marks.setdefault(agent.id, AgentMarks())
        record = agent.session.record
        self.tree(self.root_of(record))
        loop = agent.loop
        loop.hooks.before_run = self._before_run
        loop.hooks.after_run = self._after_run
        loop.hooks.on_withdrawn = self._on_withdrawn
        loop.listeners.append(functools.partial(self._on_loop_event, agent.id))
        self.sessions_changed(record)
        if record.is_root:
            self._leftovers.settle(agent)

    def detach(self, agent: Agent) -> None:
        self.marks.pop(agent.id, None)
        record = agent.session.record
        if record.is_root:
            self.trees.pop(record.id, None)
            self.directory.forget(record.id)  # another runtime may load it next
        self.changed(agent.id)

    def _on_loop_event(self, agent_id: str, event: LoopEvent) -> None:
        if isinstance(event, PhaseChanged | RunStarted | RunEnded | InputQueued):
            self.changed(agent_id)

    # ---- states -----------------------------------------------------------------

    def state_of(self, agent_id: str) -> AgentState:
        """running, waiting, queued or idle (an Agent not loaded here is idle)."""
        agent = self.ports.agents.get(agent_id)
        if agent is None:
            return "idle"
        marks = self.marks.get(agent_id)
        if marks is not None and marks.waiters:
            return "waiting"
        if marks is not None and marks.resuming:
            return "queued"
        loop = agent.loop
        record = agent.session.record
        if record.is_root:
            if loop.phase != "idle" or loop.busy or self.tree_has_live_work(record.id):
                return "running"
            return "idle"
        if loop.phase == "queued":
            return "queued"
        if loop.phase == "running":
            return "running"
        if loop.busy:
            return "queued"
        return "idle"

    def tree_has_live_work(self, root_id: str) -> bool:
        tree = self.trees.get(root_id)
        if tree is None:
            return False
        if tree.open_inputs:
            return True
        # Only the members that may not be idle are asked, not the whole tree: closing a
        # runtime with thousands of idle Agents asked each of them at every unload.
        agents = self.ports.agents
        return any(
            i != root_id and i in agents and self.state_of(i) != "idle"
            for i in self.states.maybe_active(root_id)
        )

    # ---- visibility and naming ---------------------------------------------------

    def visible(self, reader: SessionRecord) -> list[SessionRecord]:
        """The reader's tree, plus other roots when the reader is a root; not the reader."""
        return self.directory.visible(reader)

    def short_map(self, reader: SessionRecord) -> Mapping[str, str]:
        """Short IDs as the reader sees them."""
        return self.directory.short_map(reader)

    def shown(self, record: SessionRecord, reader: SessionRecord) -> Shown:
        return self.shown_to(reader)(record)

    def shown_to(self, reader: SessionRecord) -> Callable[[SessionRecord], Shown]:
        """How the reader is shown each of many records (its short IDs looked up once)."""
        shorts = self.short_map(reader)

        def shown(record: SessionRecord) -> Shown:
            short = shorts.get(record.id) or short_ids([record.id], reader.id)[record.id]
            return Shown(record.name, short)

        return shown

    def address(self, reader: SessionRecord, target: str) -> SessionRecord:
        matches = self.directory.resolve(reader, target)
        if not matches:
            raise AgentCallError(texts.no_match(target))
        if len(matches) > 1:
            rows = [
                texts.list_entry(self.shown(s, reader), self.state_of(s.id), s.cwd) for s in matches
            ]
            raise AgentCallError(texts.ambiguous(target, rows))
        return matches[0]

    # ---- delivery -------------------------------------------------------------------

    def submit_stored(
        self, recipient: Agent, stored: InputRecord, *, committed: bool = False
    ) -> Accepted:
        """Hand an input already recorded in the store to an Agent loaded here
        (`committed`: its message is in the Agent's session already)."""
        return self._submit(recipient, stored, committed)

    def rendered(
        self, sender: SessionRecord | None, recipient: SessionRecord, text: str, kind: InputKind
    ) -> str:
        """The text the recipient's model reads for a message from `sender`."""
        if sender is None:
            return text
        from_owner = recipient.owner_id == sender.id
        return texts.agent_message(
            self.shown(sender, recipient), text, reply_note=kind == "input" and not from_owner
        )

    def accept(
        self,
        sender: Agent | None,
        recipient: Agent,
        text: str,
        delivery: InputDelivery,
        *,
        notification: bool = False,
        has_result: bool | None = None,
        plain: bool = False,
        rendered: str | None = None,
    ) -> Accepted:
        """Accept a message for an Agent loaded here: record it, then hand it to its loop.

        `has_result=False` keeps an owner's input from giving a Pi Agents result (the
        supervision face reports its generations' results itself); `plain` delivers the
        text as it is, without the sender header; `rendered` is the text read, if made."""
        stored = self.record(
            sender,
            recipient,
            text,
            delivery,
            notification=notification,
            has_result=has_result,
            plain=plain,
            rendered=rendered,
        )
        return self._submit(recipient, stored)

    def record(
        self,
        sender: Agent | None,
        recipient: Agent,
        text: str,
        delivery: InputDelivery,
        *,
        notification: bool = False,
        has_result: bool | None = None,
        plain: bool = False,
        rendered: str | None = None,
    ) -> InputRecord:
        """The first half of `accept`: check and record the message; `submit_stored`
        hands it to the loop once it is committed."""
        record = recipient.session.record
        marks = self.marks.setdefault(recipient.id, AgentMarks())
        sender_rec = sender.session.record if sender is not None else None
        from_owner = sender_rec is not None and record.owner_id == sender_rec.id
        kind: InputKind = (
            "notification" if notification else ("write" if delivery == "write" else "input")
        )
        if kind != "write" and marks.stopped and not (sender_rec is None or from_owner):
            kind, delivery = "write", "write"  # after a stop, other Agents' messages only add
        tree = self.tree(self.root_of(record))
        if kind == "input" and not record.is_root and tree.outstanding >= self.max_outstanding:
            raise AgentCallError(texts.input_rejected(tree.outstanding))
        if has_result is None:
            has_result = kind == "input" and from_owner
        shown = text if plain else rendered
        return self.delivery.message(
            tree.root_id, record, sender_rec, kind, delivery, text, has_result, rendered=shown
        )

    def _submit(self, recipient: Agent, stored: InputRecord, committed: bool = False) -> Accepted:
        record = recipient.session.record
        marks = self.marks.setdefault(recipient.id, AgentMarks())
        tree = self.tree(self.root_of(record))
        kind, delivery = stored.kind, stored.delivery
        from_user_or_owner = stored.sender_id is None or stored.sender_id == record.owner_id
        if kind == "input" and marks.stopped and not from_user_or_owner:
            # Left in the store before the stop; it only adds to the conversation now.
            with contextlib.suppress(StoreError):  # recorded later
                self.ends.end(record, [stored.id], "completed", None, False)
            kind, delivery = "write", "write"
        owned = not record.is_root
        if kind != "write":
            tree.open(
                recipient.id,
                stored.id,
                counts=kind == "input" and owned,
                has_result=stored.has_result,
            )
        if from_user_or_owner and kind == "input":
            marks.stopped = False
        queued = False
        loop = recipient.loop
        if kind != "write" and owned and not (delivery == "steer" and loop.in_turn):
            if loop.phase == "queued":
                queued = True
            elif loop.phase == "idle" and not loop.busy:
                queued = not tree.slots.reserve(recipient.id)
        if delivery == "steer" and kind != "write":
            for waiter in list(marks.waiters):
                self.tree(self.root_of(record)).end_wait(waiter, marks, interrupted=True)
        future = loop.submit(
            Input(
                stored.text,
                delivery,  # type: ignore[arg-type]
                id=stored.id,
                meta={"kind": kind, "sender": stored.sender_id},
                rendered=stored.rendered,
                committed=committed,
            )
        )
        self.changed(recipient.id)
        return Accepted(stored, queued, future)

    # ---- harness hooks ---------------------------------------------------------------

    async def _before_run(self, loop: AgentLoop, inputs: tuple[Input, ...]) -> None:
        record = loop.session.record
        if record.is_root:
            return
        await self.tree(self.root_of(record)).slots.acquire(record.id)

    def _after_run(self, loop: AgentLoop, outcome: RunOutcome) -> None:
        record = loop.session.record
        marks = self.marks.get(record.id)
        by_owner = marks is not None and marks.aborting_by_owner
        result = ABORTED_RESULT if outcome.status == "aborted" else outcome.answer
        inputs = [i for i in outcome.inputs if "kind" in i.meta]
        ids = [i.id for i in inputs]
        try:
            # Settle first: an owner waiting for these resumes ahead of queued inputs.
            if outcome.status != "completed" or not self.ends.end_later(record, ids, result):
                self.ends.end(record, ids, outcome.status, result, by_owner)
        finally:
            if not record.is_root:
                self.tree(self.root_of(record)).slots.release(record.id)

    def _on_withdrawn(self, loop: AgentLoop, inputs: tuple[Input, ...]) -> None:
        record = loop.session.record
        marks = self.marks.get(record.id)
        by_owner = marks is not None and marks.aborting_by_owner
        if not record.is_root and not loop.busy:
            self.tree(self.root_of(record)).slots.release(record.id)
        with contextlib.suppress(StoreError):  # recorded later, when the store can be written
            ids = [i.id for i in inputs if "kind" in i.meta]
            self.ends.end(record, ids, "aborted", ABORTED_RESULT, by_owner)

    def _recorded(self, end: InputEnd, ended: list[InputRecord]) -> None:
        """The store recorded that these inputs ended: close them, tell the owner."""
        record = end.recipient
        tree = self.trees.get(self.root_of(record))
        if tree is not None:
            for r in ended:
                tree.close(record.id, r.id)
        with_results = [r for r in ended if r.has_result]
        if with_results and record.owner_id is not None:
            self._tell_owner(record, with_results)
        self.changed(record.id)

    def _tell_owner(self, record: SessionRecord, ended: Sequence[InputRecord]) -> None:
        owner = self.ports.agents.get(record.owner_id or "")
        if owner is None or self.ports.closing():
            return
        owner_marks = self.marks.get(owner.id)
        waiters = [
            w for w in (owner_marks.waiters if owner_marks else ()) if record.id in w.targets
        ]
        if owner_marks is not None and waiters:  # each wait ends when its own targets are done
            tree = self.tree(self.root_of(record))
            for waiter in waiters:
                if waiter.settled(record.id, tree.pending):
                    tree.end_wait(waiter, owner_marks)
            return
        notify = [r for r in ended if not r.aborted_by_owner]
        if not notify:
            return
        outcome = notify[-1].status
        text = texts.notification(self.shown(record, owner.session.record), outcome)
        agent = self.ports.agents.get(record.id)
        delivery: InputDelivery = "steer"
        if agent is None:
            return
        # The result itself is recorded; a notice the store cannot take only goes unsent.
        with contextlib.suppress(AgentCallError, StoreError):
            self.accept(agent, owner, text, delivery, notification=True)

    # ---- the user's side ---------------------------------------------------------------

    def user_input(self, agent: Agent, text: str, delivery: InputDelivery = "followUp") -> Accepted:
        return self.accept(None, agent, text, delivery)

    async def user_stop(self, agent: Agent) -> list[Input]:
        """The user stops the turn. For a root, the user's queued inputs come back and
        other Agents' messages, queued or later, only add to the conversation until
        the user's next input; an owned Agent is aborted as `abort` does."""
        marks = self.marks.setdefault(agent.id, AgentMarks())
        marks.stopped = True
        if agent.session.record.is_root:
            for inp in agent.loop.withdraw_queued(lambda i: i.meta.get("sender") is not None):
                agent.loop.submit(replace(inp, delivery="write", id=new_id()))
            result = await agent.loop.abort(self.abort_timeout, which=_from_user)
        else:
            result = await agent.loop.abort(self.abort_timeout)
        return list(result.withdrawn)


def _from_user(inp: Input) -> bool:
    return inp.meta.get("sender") is None
