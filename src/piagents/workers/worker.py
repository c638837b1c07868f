"""A `pi-agents worker`: a runtime that runs the roots of its store placed on it.

It registers in the store as a `worker` with its capacity (roots held at once) and
heartbeats like every runtime. Work reaches it three ways (`placements`): a
runtime that leaves an input for an offline root sends a NOTIFY on the placement
channel, and each worker with room that hears it sweeps at once; every worker
also sweeps every `sweep_s`. A sweep starts the managed agents' generations that
wait for a worker (`generations`), reads the roots that wait (`waiting_roots`:
open inputs, no live holder), starts placements for as many as it has room for,
enqueues those that waited through a sweep already, and hands the placements of
workers whose heartbeat lapsed back to DBOS for recovery.

A placement (`hold`) opens the root here, which takes its lease (compare-and-set:
two workers never both hold a root) and resumes what a lapsed worker left open
in its tree (`agents.leftovers`); it lasts until the tree is idle (no open input,
no busy Agent, no running Program), then the root goes offline and its lease is
released.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from piagents.ai.models import loadable_elsewhere
from piagents.ai.registry import ProviderConfigError
from piagents.runtime import Runtime
from piagents.store.base import PLACEMENT, Mailbox, SessionInUse, SessionNotFound, StoreError
from piagents.workers.generations import GenerationProcesses
from piagents.workers.placement_ids import QUEUED, workflow_id
from piagents.workers.placements import Placements

if TYPE_CHECKING:
    from piagents.agent import Agent

log = logging.getLogger("piagents.worker")

SWEEP_S = 1.0  # how often a worker looks for waiting roots without being told
IDLE_CHECK_S = 1.0  # a placed tree is checked for idleness at least this often
STORE_RETRY_S = (0.2, 1.0, 5.0)  # a root the store cannot open yet is tried again after


def cannot_run(exc: Exception) -> str:
    """The result of the inputs of a root whose model no worker process can run."""
    import socket

    host = socket.gethostname()
    return f"The input could not run: the pi-agents worker on {host} cannot load its Agent: {exc}"


class Worker:
    """Runs placed roots in `runtime` (already open), at most `capacity` at once."""

    def __init__(
        self,
        runtime: Runtime,
        placements: Placements,
        capacity: int,
        *,
        sweep_s: float = SWEEP_S,
        clock: Callable[[], float] | None = None,
        generations: GenerationProcesses | None = None,
    ) -> None:
        self.runtime = runtime
        self.placements = placements
        self.capacity = capacity
        self.generations = generations  # managed agents' processes started here
        self.sweep_s = sweep_s
        self._clock = clock or asyncio.get_running_loop().time
        self.held: set[str] = set()  # roots placed here now
        self._slots = asyncio.Semaphore(capacity)
        self._seen: dict[str, float] = {}  # workflow ids seen waiting, when first seen
        self._poked = asyncio.Event()
        self._changed = asyncio.Event()
        self._mailbox: Mailbox | None = None
        self.stopping = False
        self._hurry = False  # a second stop: end the drain now

    # ---- placements --------------------------------------------------------------

    async def hold(self, root_id: str) -> str:
        """The body of a placement: hold `root_id` here until its tree is idle."""
        if root_id in self.held:
            return "already here"
        async with self._slots:
            if self.stopping:
                raise RuntimeError("this worker is stopping")  # recovered elsewhere later
            self.held.add(root_id)
            try:
                return await self._hold(root_id)
            finally:
                self.held.discard(root_id)
                self._poked.set()  # room again: look for waiting roots now

    async def _open(self, root_id: str) -> Agent | str:
        """Open the root here; what became of the placement when it cannot be."""
        rt = self.runtime
        for wait in (*STORE_RETRY_S, None):
            try:
                return await rt.open_root(session=root_id)
            except SessionInUse:
                return "held elsewhere"
            except SessionNotFound:
                return "gone"
            except (ProviderConfigError, ValueError) as exc:
                # Its model cannot run here: its inputs end with the reason, not forever open.
                log.warning("Root %s cannot run on this worker: %s", root_id, exc)
                self._fail_inputs(root_id, cannot_run(exc))
                return "failed"
            except StoreError as exc:
                if wait is None:
                    raise
                log.warning("Root %s could not be opened yet: %s", root_id, exc)
                await asyncio.sleep(wait)
        raise AssertionError("unreachable")

    def _fail_inputs(self, root_id: str, text: str) -> None:
        store = self.runtime.store
        left = store.inputs(root_id=root_id, outstanding=True)
        ids = [i.id for i in left if i.kind != "control" and store.lease_of(i.recipient_id) is None]
        store.end_inputs(ids, "failed", text)

    async def _hold(self, root_id: str) -> str:
        rt = self.runtime
        root = await self._open(root_id)
        if isinstance(root, str):
            return root
        listener = self._changed.set
        rt.coordinator.listeners.append(listener)
        try:
            await self._until_idle(root_id)
        finally:
            with contextlib.suppress(ValueError):
                rt.coordinator.listeners.remove(listener)
        if root_id in rt.agents and not rt.closing:
            await rt.unload(root)
        return "idle"

    def _tree_idle(self, root_id: str) -> bool:
        rt = self.runtime
        loaded = [
            a.id
            for a in rt.agents.values()
            if a.id == root_id or a.session.record.root_id == root_id
        ]
        if root_id not in loaded:
            return True  # unloaded meanwhile (taken over, or the runtime is closing)
        for agent_id in loaded:
            if rt.coordinator.state_of(agent_id) != "idle" or rt.programs.running(agent_id):
                return False
        try:
            open_inputs = rt.store.inputs(recipient_ids=loaded, outstanding=True)
        except StoreError:
            return False  # asked again at the next change, or the next check
        return not any(i.kind != "control" for i in open_inputs)

    async def _until_idle(self, root_id: str) -> None:
        while not self._tree_idle(root_id):
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), IDLE_CHECK_S)
            await asyncio.sleep(0)  # the state settles before it is read again

    # ---- sweeps ------------------------------------------------------------------

    def poke(self) -> None:
        """The placement channel: a root waits (or the listener reconnected)."""
        self._poked.set()

    async def run(self) -> None:
        """Listen on the placement channel and sweep until `stop()`."""
        store = self.runtime.store
        self._mailbox = store.mailbox(PLACEMENT, self.poke)
        if self._mailbox is not None:
            await self._mailbox.start()
        try:
            while not self.stopping:
                try:
                    await self.sweep()
                except Exception as exc:  # the store is down, say: the next sweep retries
                    log.warning("A sweep for waiting roots failed: %s", exc)
                self._poked.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._poked.wait(), self.sweep_s)
        finally:
            if self._mailbox is not None:
                await self._mailbox.close()

    async def sweep(self) -> None:
        store = self.runtime.store
        dead = [w.token for w in store.workers() if w.kind == "worker" and not w.alive]
        if dead:
            await asyncio.to_thread(self.placements.recover, dead)
        now = self._clock()
        room = self.capacity - len(self.held)
        if self.generations is not None:  # a slot each, as a root's
            self.generations.reap()
            room -= len(self.generations.running)
            room -= self.generations.sweep(store, room)
        waiting = store.waiting_roots(limit=max(room, 0) + 50)
        seen: dict[str, float] = {}
        for root in waiting:
            if root.root_id in self.held:
                continue
            record = store.get_session(root.root_id)
            if record is None or not loadable_elsewhere(record.model):
                continue
            wid = workflow_id(root, QUEUED)
            first_seen = self._seen.get(wid, now)
            seen[wid] = first_seen
            if room > 0:
                room -= 1
                await self.placements.start(root)
            elif now - first_seen >= self.sweep_s:
                await self.placements.enqueue(root)  # nobody had room: the queue keeps it
        self._seen = seen

    async def drained(self, timeout: float) -> bool:
        """Wait until the roots held here went idle (their placements ended), at most
        `timeout` seconds; whether they all did."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self.held and not self._hurry:
            left = deadline - loop.time()
            if left <= 0:
                return False
            self._poked.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._poked.wait(), min(left, IDLE_CHECK_S))
        return True

    def stop(self) -> None:
        """Take no more placements; `run` returns. Asked again: stop draining too."""
        self._hurry = self.stopping
        self.stopping = True
        self._poked.set()
