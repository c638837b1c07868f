"""How a runtime is present in its store: its lease holder, registered with a heartbeat
that a background task renews (one statement for all its leases), and its mailbox, on
which other runtimes wake it.

Each renewal also says which leases the holder still has: one it had (or an Agent
loaded here that needs one) and no longer has was taken over by another runtime
after this one's heartbeat lapsed, while it was cut off from the store. The runtime
is told (`on_lost`), and stops using those sessions; the store refuses its writes
to them in any case (LeaseLost).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from piagents.agents.mailbox import open_mailbox
from piagents.store import lease
from piagents.store.base import HolderKind, LeaseHolder, Mailbox, Registration, Store, StoreError

if TYPE_CHECKING:
    from piagents.agent import Agent

log = logging.getLogger("piagents")


class Presence:
    """A runtime's holder, heartbeat and mailbox, from `open` to `close`."""

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
        self._renewing: asyncio.Task[None] | None = None

    def registration(self) -> Registration:
        assert self.holder is not None
        return Registration(self.holder, self.kind, self.capacity, len(self.agents))

    async def open(self, store: Store, renew_every: float) -> LeaseHolder:
        """Register a new holder in `store`, start its mailbox and its heartbeat."""
        self._store = store
        self.holder = lease.new_holder()
        store.register(self.registration())
        self.mailbox = open_mailbox(store, self.holder.token, self.on_poke)
        await self.mailbox.start()
        self._renewing = asyncio.get_running_loop().create_task(self._renew(renew_every))
        return self.holder

    async def _renew(self, every: float) -> None:
        while True:
            await asyncio.sleep(every)  # the heartbeat's period
            try:
                self.beat()
            except StoreError as exc:  # the leases lapse if this lasts; checked when it works
                log.warning("The heartbeat of this runtime's leases failed: %s", exc)

    def beat(self) -> None:
        """Renew the heartbeat now, and report the leases another holder took."""
        assert self._store is not None
        held = self._store.renew(self.registration())
        needed = {i for i, a in self.agents.items() if a.session.record.is_root}
        lost = sorted((self._held | needed) - held - self._lost)
        self._held = held
        self._lost &= needed | set(self.agents)  # forget those unloaded since
        for sid in lost:
            agent = self.agents.get(sid)
            if agent is not None:
                log.warning(
                    "Session %s was taken over by another pi-agents runtime after this one's "
                    "lease lapsed (it was cut off from the store); it is unloaded here.",
                    sid,
                )
                self._lost.add(sid)
                self.on_lost(agent)

    async def close_mailbox(self) -> None:
        """Hear no more wake-ups (what comes now waits in the store)."""
        if self.mailbox is not None:
            await self.mailbox.close()

    async def close(self) -> None:
        """Stop the heartbeat and leave the registry (the leases were released)."""
        if self._renewing is not None:
            self._renewing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._renewing
            self._renewing = None
        await self.close_mailbox()
        if self.holder is not None:
            if self._store is not None:
                with contextlib.suppress(StoreError):
                    self._store.unregister(self.holder.token)
            lease.retire(self.holder)
