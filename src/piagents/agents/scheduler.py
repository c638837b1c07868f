"""Execution slots of one tree: owned Agents need a slot to run a turn."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable


class SlotScheduler:
    """`capacity` slots, handed out first to Agents resuming after `wait`, then in FIFO order.

    A slot is held by an Agent ID. `reserve` takes a free slot at once (so
    `spawn`/`send` can tell whether an input is queued); `acquire` waits.
    """

    def __init__(self, capacity: int, on_change: Callable[[], None] | None = None) -> None:
        self.capacity = capacity
        self.holders: set[str] = set()
        self._resuming: deque[tuple[str, asyncio.Future[None]]] = deque()
        self._starting: deque[tuple[str, asyncio.Future[None]]] = deque()
        self._on_change = on_change

    @property
    def free(self) -> int:
        return self.capacity - len(self.holders)

    def has_waiters(self) -> bool:
        return any(not f.done() for _, f in (*self._resuming, *self._starting))

    def holds(self, agent_id: str) -> bool:
        return agent_id in self.holders

    def waiting(self, agent_id: str) -> bool:
        return any(a == agent_id and not f.done() for a, f in (*self._resuming, *self._starting))

    def reserve(self, agent_id: str) -> bool:
        """Take a slot now if one is free and nobody queues ahead; True when held."""
        if agent_id in self.holders:
            return True
        if self.free > 0 and not self.has_waiters():
            self.holders.add(agent_id)
            self._changed()
            return True
        return False

    async def acquire(self, agent_id: str, *, resuming: bool = False) -> None:
        await self.claimed(agent_id, self.claim(agent_id, resuming=resuming))

    def claim(self, agent_id: str, *, resuming: bool = False) -> asyncio.Future[None]:
        """Take a place in line now (a done future when a slot is free); await it with
        `claimed`."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self.reserve(agent_id):
            future.set_result(None)
            return future
        (self._resuming if resuming else self._starting).append((agent_id, future))
        self._changed()
        return future

    async def claimed(self, agent_id: str, future: asyncio.Future[None]) -> None:
        """Wait for a claim; a cancelled wait gives back what it was granted."""
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release(agent_id)  # granted as we were cancelled: give it back
            self._drop(future)
            raise

    def release(self, agent_id: str) -> None:
        if agent_id in self.holders:
            self.holders.discard(agent_id)
            self._grant()
            self._changed()

    def _drop(self, future: asyncio.Future[None]) -> None:
        for queue in (self._resuming, self._starting):
            for item in list(queue):
                if item[1] is future:
                    queue.remove(item)
        self._changed()

    def _grant(self) -> None:
        while self.free > 0:
            for queue in (self._resuming, self._starting):
                while queue and queue[0][1].done():
                    queue.popleft()
                if queue:
                    agent_id, future = queue.popleft()
                    self.holders.add(agent_id)
                    future.set_result(None)
                    break
            else:
                return

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change()
