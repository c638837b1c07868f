"""One path for every message to an Agent, wherever the Agent is.

A message is accepted once, here, by committing it to the store
(`commit`); then it reaches its recipient by one of the routes of
`accepted.Route`: handed to an Agent loaded in this process, left in the store
for the process that holds it (another runtime on this home, or a managed
agent's worker) with a poke through its mailbox, or left for an offline root
that is woken by the one wake policy (`WakePolicy`: loaded here, or by a
background `pi-agents serve`), or placed on a `pi-agents worker` when the store
has live ones (`for_workers`). Results of supervision reach their owners the
same way (`hand_over`).

One exception to "committed by `commit`": a supervision result (or question) for
an owner must commit in the same store transaction as its generation's change
(`Store.update_generation(result=...)`), so that a crash between the two loses or
repeats nothing. Delivery still owns it: `result_record` builds that record (left
undelivered) and `hand_over` gets it to the owner once the transaction committed.
Supervision reaches Agents only through these methods (its `Delivering` port).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from piagents.agents import texts
from piagents.agents.accepted import Accepted, Route
from piagents.agents.errors import AgentCallError
from piagents.agents.ports import AgentsPorts
from piagents.agents.texts import Shown
from piagents.agents.unrecorded import FIRST_RETRY_S, LAST_RETRY_S
from piagents.ai.models import loadable_elsewhere
from piagents.store.base import PLACEMENT, SessionInUse, Store, StoreError
from piagents.store.records import InputDelivery, InputKind, InputRecord, SessionRecord, new_id

if TYPE_CHECKING:
    from piagents.agent import Agent

log = logging.getLogger("piagents")


class LocalInbox(Protocol):
    """The coordinator's side of delivery: Agents loaded in this process."""

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
    ) -> Accepted: ...

    def submit_stored(self, recipient: Agent, stored: InputRecord) -> Accepted: ...

    def rendered(
        self, sender: SessionRecord | None, recipient: SessionRecord, text: str, kind: InputKind
    ) -> str: ...

    def shown(self, record: SessionRecord, reader: SessionRecord) -> Shown: ...

    def program_of(self, record: SessionRecord) -> str | None: ...

    def changed(self) -> None: ...


class Delivery:
    """Accepts messages for Agents and gets them to wherever the Agent runs."""

    def __init__(self, ports: AgentsPorts, local: LocalInbox) -> None:
        self.ports = ports
        self.local = local

    # ---- accepting: the one place a message is committed -------------------------------

    def commit(self, record: InputRecord) -> InputRecord:
        """Commit an accepted message to the store; it counts as accepted from here on."""
        return self.ports.store().add_input(record)

    def message(
        self,
        root_id: str,
        recipient: SessionRecord,
        sender: SessionRecord | None,
        kind: InputKind,
        delivery: InputDelivery,
        text: str,
        has_result: bool,
        *,
        delivered: bool = True,
        rendered: str | None = None,
    ) -> InputRecord:
        """Commit a message from `sender` (None: the user); writes have nothing to end,
        so they are done at once. `rendered` is the text the recipient reads when the
        caller made it (e.g. the text as it is, without a header)."""
        if rendered is None:
            rendered = self.local.rendered(sender, recipient, text, kind)
        return self.commit(
            InputRecord(
                id=new_id(),
                root_id=root_id,
                recipient_id=recipient.id,
                sender_id=sender.id if sender is not None else None,
                kind=kind,
                delivery=delivery,
                text=text,
                has_result=has_result,
                status="outstanding" if kind != "write" else "completed",
                delivered=delivered,
                rendered=rendered,
            )
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
    ) -> Accepted:
        """A message for an Agent loaded here (route `delivered`), as the coordinator's
        rules accept it (see `Coordinator.accept`)."""
        return self.local.accept(
            sender,
            recipient,
            text,
            delivery,
            notification=notification,
            has_result=has_result,
            plain=plain,
        )

    @staticmethod
    def result_record(recipient_id: str, sender_id: str, root_id: str, text: str) -> InputRecord:
        """A supervision result (or question) for the owner `recipient_id`, left
        undelivered: the caller commits it with its generation's change, then
        `hand_over` gets it to the owner."""
        return InputRecord(
            id=new_id(),
            root_id=root_id,
            recipient_id=recipient_id,
            sender_id=sender_id,
            kind="notification",
            delivery="steer",
            text=text,
            delivered=False,
            rendered=text,
        )

    def submit_stored(self, recipient: Agent, stored: InputRecord) -> Accepted:
        """Hand a message already committed (and taken from the store) to an Agent
        loaded here."""
        return self.local.submit_stored(recipient, stored)

    # ---- routing -----------------------------------------------------------------------

    async def deliver(
        self,
        sender: Agent | None,
        recipient: SessionRecord,
        text: str,
        delivery: InputDelivery,
    ) -> Accepted:
        """Accept a message for `recipient`: here, in the runtime holding it, or by
        waking it when no runtime does."""
        agent = self.ports.agents.get(recipient.id)
        if agent is not None:
            return self.local.accept(sender, agent, text, delivery)
        reader = sender.session.record if sender is not None else recipient
        store = self.ports.store()
        if not recipient.is_root:
            if self.local.program_of(recipient) is not None:
                # A Program's Agents run only while it does; offline, they stay so for good.
                raise AgentCallError(texts.program_ended(self.local.shown(recipient, reader)))
            worker = store.lease_of(recipient.id)
            holder = self.ports.holder()
            if worker is not None and (holder is None or worker.token != holder.token):
                return await self._post_to_worker(sender, recipient, text, delivery, worker.token)
            return self._woken(
                self.local.accept(sender, await self.ports.loader.wake(recipient), text, delivery)
            )
        holder_of = store.lease_of(recipient.id)
        if holder_of is None and delivery == "write":
            raise AgentCallError(texts.write_to_offline(self.local.shown(recipient, reader)))
        if holder_of is None and self.ports.wake.in_process and not for_workers(store, recipient):
            with contextlib.suppress(SessionInUse):  # taken meanwhile: leave it there
                woken = await self.ports.loader.wake(recipient)
                return self._woken(self.local.accept(sender, woken, text, delivery))
        return await self.post(sender, recipient, text, delivery)

    @staticmethod
    def _woken(accepted: Accepted) -> Accepted:
        return Accepted(accepted.record, accepted.queued, accepted.future, "woken")

    async def post(
        self, sender: Agent | None, recipient: SessionRecord, text: str, delivery: InputDelivery
    ) -> Accepted:
        """Leave a message in the store for the runtime that holds (or will hold) a root."""
        sender_rec = sender.session.record if sender is not None else None
        kind: InputKind = "write" if delivery == "write" else "input"
        # Roots have no owner, and only owners get results.
        stored = self.message(
            recipient.id, recipient, sender_rec, kind, delivery, text, False, delivered=False
        )
        route = await self.reach(recipient)
        return Accepted(stored, False, None, route)

    async def _post_to_worker(
        self,
        sender: Agent | None,
        recipient: SessionRecord,
        text: str,
        delivery: InputDelivery,
        token: str,
    ) -> Accepted:
        """An owned Agent another process runs (a managed agent's worker): leave the
        message in the store for it and say so; it is never loaded twice."""
        sender_rec = sender.session.record if sender is not None else None
        kind: InputKind = "write" if delivery == "write" else "input"
        stored = self.message(
            recipient.root_id or recipient.id,
            recipient,
            sender_rec,
            kind,
            delivery,
            text,
            False,
            delivered=False,
        )
        route: Route = "poked" if await self.ports.poke(token) else "stored"
        return Accepted(stored, False, None, route)

    async def reach(self, recipient: SessionRecord) -> Route:
        """Messages wait in the store for `recipient`, which is not loaded here: tell the
        runtime holding its tree, or start its root to take them (here, when this
        runtime wakes roots itself, else in a background `pi-agents serve`)."""
        root_id = recipient.root_id or recipient.id
        store = self.ports.store()
        holder = store.lease_of(root_id)
        if holder is not None and await self.ports.poke(holder.token):
            return "poked"
        if store.lease_of(root_id) is not None:
            return "stored"  # its holder takes them when it next drains
        root = store.get_session(root_id)
        if root is None:
            return "stored"
        if for_workers(store, root):
            store.notify(PLACEMENT)  # after the commit: a worker that hears it finds them
            return "placed"
        if not self.ports.wake.in_process:
            serve_offline_root(self.ports.home, root_id, self.ports.settings().store)
            return "serve"
        with contextlib.suppress(SessionInUse, AgentCallError):
            await self.ports.loader.wake(root)
            self.drain()
            return "woken"
        return "stored"

    def hand_over(self, recipient_id: str, *, wake: bool = True) -> None:
        """Messages already committed for `recipient_id` (results of supervision, say):
        hand them over here when it is loaded, else tell its holder or wake it, in the
        background. `wake=False` (a worker) only pokes the holder: if it is down, it
        takes them from the store when it next starts."""
        if recipient_id in self.ports.agents:
            self.drain()
            return
        if not wake:
            self.ports.background(self.poke_holder(recipient_id), "waking the lead")
            return
        record = self.ports.store().get_session(recipient_id)
        if record is not None and not self.ports.closing():
            self.ports.background(self.reach(record), "delivering a result")

    async def poke_holder(self, recipient_id: str) -> None:
        """Nudge the runtime holding the recipient's tree. When nobody holds it the
        message waits in the store for the holder's next drain."""
        store = self.ports.store()
        record = store.get_session(recipient_id)
        if record is None:
            return
        holder = store.lease_of(record.root_id or record.id)
        if holder is not None:
            await self.ports.poke(holder.token)

    async def poke(self, token: str) -> bool:
        """Tell the process holding `token` to look in the store now; False when
        nobody listens (it looks when it next starts, or on its own)."""
        return await self.ports.poke(token)

    def nudge(self, token: str | None) -> None:
        """Poke the process holding `token` (a worker), in the background; nothing
        when there is no token yet or the runtime is closing."""
        if token and not self.ports.closing():
            self.ports.background(self.ports.poke(token), "waking a worker")

    # ---- receiving -------------------------------------------------------------------

    def drain(self) -> None:
        """Take inputs left in the store (by other runtimes, or results recorded with
        their generation) for Agents loaded here."""
        agents = self.ports.agents
        for stored in self.ports.store().take_undelivered(list(agents)):
            if stored.kind == "control":  # for the supervisor of a managed agent's worker
                self.ports.on_control(stored)
                continue
            agent = agents.get(stored.recipient_id)
            if agent is not None:
                try:
                    self.local.submit_stored(agent, stored)
                except StoreError as exc:  # the others taken with it are still handed over
                    log.warning("An input for %s could not be added: %s", agent.id, exc)
        self.local.changed()  # a poke may only say that a worker's generation changed state

    def on_poke(self, retry_in: float = FIRST_RETRY_S) -> None:
        """The mailbox was poked: take what waits, retrying while the store refuses."""
        try:
            self.drain()
        except StoreError as exc:  # nothing was taken: the inputs wait in the store
            log.warning("Inputs waiting in the store could not be taken yet: %s", exc)
            if not self.ports.closing():
                asyncio.get_running_loop().call_later(
                    retry_in, self.on_poke, min(retry_in * 2, LAST_RETRY_S)
                )


def for_workers(store: Store, root: SessionRecord) -> bool:
    """Whether an offline root is left to the store's `pi-agents worker`s: some are
    alive, and they can load its model."""
    if not loadable_elsewhere(root.model):
        return False
    return any(w.alive and w.kind == "worker" for w in store.workers())


def waiting_for(store: Store, session_id: str) -> bool:
    """Messages wait in the store for `session_id`, not yet taken by any runtime."""
    return bool(store.inputs(recipient_ids=[session_id], delivered=False))


def serve_offline_root(home: Path, session_id: str, store: str | None = None) -> None:
    """Start a `pi-agents serve` process for an offline root with inputs waiting: it
    takes them from the store (`store`'s URL, or the home's) and exits once the root
    is idle."""
    subprocess.Popen(
        [
            sys.executable,
            "-m",
            "piagents.cli",
            "serve",
            "--home",
            str(home),
            "--session",
            session_id,
            *(("--store", store) if store else ()),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
