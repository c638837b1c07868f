"""How a runtime is present in its store: its lease holder, registered with a heartbeat
renewed (one statement for all its leases) by a thread of its own, and its mailbox, on
which other runtimes wake it.

The heartbeat is a thread's, not a task's: a long step on the event loop does not let
the leases lapse. It stops only when its process ends or is cut off from the store,
which is what a lapse is to mean (on the holder's own machine a lease used to be
judged by its process alone, and a process gone there still frees it at once).

Each renewal also says which leases the holder still has: one it had (or a root
loaded here) and no longer has was taken over by another runtime after this one's
heartbeat lapsed, while it was cut off from the store. That is checked again on the
event loop (where Agents are loaded, so the two agree), then the runtime is told
(`on_lost`) and stops using those sessions; the store refuses its writes to them in
any case (LeaseLost).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from piagents.agents.mailbox import open_mailbox
from piagents.store import lease
from piagents.store.base import (
    HolderKind,
    LeaseHolder,
    Mailbox,
    Registration,
    Store,
    StoreError,
    WorkerRecord,
)

if TYPE_CHECKING:
    from piagents.agent import Agent

log = logging.getLogger("piagents")


class Presence:
    """A runtime's holder, heartbeat and mailbox, from `open` to `close`. It registers
    as `kind` with `capacity` (a `pi-agents worker` sets both before it opens) and
    with its load."""

    def __init__(
        self,
        agents: Mapping[str, Agent],
        on_poke: Callable[[], None],
        on_lost: Callable[[Agent], None],
        *,
        kind: HolderKind = "runtime",
        capacity: int | None = None,
    ) -> None:
        self.agents = agents
        self.on_poke = on_poke
        self.on_lost = on_lost
        self.kind: HolderKind = kind
        self.capacity = capacity
        self.holder: LeaseHolder | None = None
        self.mailbox: Mailbox | None = None
        self._store: Store | None = None
        self._held: frozenset[str] = frozenset()  # what the last renewal found ours
        self._lost: set[str] = set()  # reported taken over already
        self._stop = threading.Event()
        self._renewing: threading.Thread | None = None

    def registration(self) -> Registration:
        """What it says of itself; its load is its Agents, or for a worker (whose
        capacity counts roots) the roots it holds."""
        assert self.holder is not None
        if self.kind == "worker":
            load = sum(1 for a in self.agents.values() if a.session.record.is_root)
        else:
            load = len(self.agents)
        return Registration(self.holder, self.kind, self.capacity, load)

    async def open(self, store: Store, renew_every: float) -> LeaseHolder:
        """Register a new holder in `store`, start its mailbox and its heartbeat."""
        self._store = store
        self.holder = lease.new_holder()
        try:
            store.register(self.registration())
        except StoreError as exc:  # each renewal registers it again
            log.warning("This runtime could not register in the store yet: %s", exc)
        self.mailbox = open_mailbox(store, self.holder.token, self.on_poke)
        await self.mailbox.start()
        loop = asyncio.get_running_loop()
        self._renewing = threading.Thread(
            target=self._renew,
            args=(store, renew_every, loop),
            name="pi-agents heartbeat",
            daemon=True,  # a runtime never closed does not keep its process from exiting
        )
        self._renewing.start()
        return self.holder

    def _renew(self, store: Store, every: float, loop: asyncio.AbstractEventLoop) -> None:
        """The heartbeat thread: renew every `every` seconds until closed."""
        while not self._stop.wait(every):
            try:
                held = store.renew(self.registration())
            except StoreError as exc:  # the leases lapse if this lasts; checked when it works
                log.warning("The heartbeat of this runtime's leases failed: %s", exc)
                continue
            with contextlib.suppress(RuntimeError):  # the loop has closed
                loop.call_soon_threadsafe(self._renewed, held)

    def _lost_of(self, held: frozenset[str]) -> list[str]:
        needed = {i for i, a in self.agents.items() if a.session.record.is_root}
        self._lost &= needed | set(self.agents)  # forget those unloaded since
        return sorted(i for i in (self._held | needed) - held - self._lost if i in self.agents)

    def _renewed(self, held: frozenset[str]) -> None:
        """On the loop, after the thread's renewal: what it found missing, checked again."""
        if self._store is None or self._stop.is_set():
            return
        if not self._lost_of(held):
            self._held = held
            return
        try:
            self.beat()  # a lease taken meanwhile by this runtime is not one lost
        except StoreError as exc:
            log.warning("The heartbeat of this runtime's leases failed: %s", exc)

    def beat(self) -> None:
        """Renew the heartbeat now, and report the leases another holder took."""
        assert self._store is not None
        held = self._store.renew(self.registration())
        lost = self._lost_of(held)
        self._held = held
        for sid in lost:
            log.warning(
                "Session %s was taken over by another pi-agents runtime after this one's "
                "lease lapsed (it was cut off from the store); it is unloaded here.",
                sid,
            )
            self._lost.add(sid)
            self.on_lost(self.agents[sid])

    async def close_mailbox(self) -> None:
        """Hear no more wake-ups (what comes now waits in the store)."""
        if self.mailbox is not None:
            await self.mailbox.close()

    async def close(self) -> None:
        """Stop the heartbeat and leave the registry (the leases were released)."""
        self._stop.set()
        if self._renewing is not None:
            await asyncio.to_thread(self._renewing.join)  # a renewal under way ends first
            self._renewing = None
        await self.close_mailbox()
        if self.holder is not None:
            if self._store is not None:
                with contextlib.suppress(StoreError):
                    self._store.unregister(self.holder.token)
            lease.retire(self.holder)


def held_elsewhere(store: Store, session_ids: Iterable[str]) -> dict[str, str]:
    """Where the sessions that another live holder has run, as front ends show it:
    `worker 1a2b3c4d on <host>` for a `pi-agents worker`, `process N on <host>` for a
    runtime (a managed agent's worker process, another terminal); sessions no one
    else holds are left out."""
    out: dict[str, str] = {}
    workers: dict[str, WorkerRecord] | None = None
    # One batched read first: most of a tree's sessions have no lease of their own.
    held = [sid for sid, state in store.states(list(session_ids)).items() if state != "offline"]
    for sid in held:
        holder = store.lease_of(sid)
        if holder is None:
            continue
        if workers is None:
            workers = {w.token: w for w in store.workers()}
        record = workers.get(holder.token)
        if record is not None and record.kind == "worker":
            out[sid] = f"worker {holder.token[:8]} on {holder.host}"
        else:
            out[sid] = f"process {holder.pid} on {holder.host}"
    return out
