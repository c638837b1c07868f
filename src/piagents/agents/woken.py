"""Roots loaded only for a message from another Agent: taken offline again once idle."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING

from piagents.agents.ports import TaskSpawner

if TYPE_CHECKING:
    from piagents.agent import Agent


class WokenRoots:
    """The roots this runtime woke (`Delivery`'s in-process wake) and unloads when idle."""

    def __init__(
        self,
        *,
        agents: Mapping[str, Agent],
        state_of: Callable[[str], str],
        unload: Callable[[Agent], Awaitable[None]],
        background: TaskSpawner,
        closing: Callable[[], bool],
    ) -> None:
        self._agents = agents
        self._state_of = state_of
        self._unload = unload
        self._background = background
        self._closing = closing
        self._ids: set[str] = set()

    def add(self, agent: Agent) -> None:
        self._ids.add(agent.id)
        agent.loop.listeners.append(lambda event: self._maybe_unload(agent))

    def discard(self, agent_id: str) -> None:
        self._ids.discard(agent_id)

    def _maybe_unload(self, agent: Agent) -> None:
        if agent.id in self._ids and not self._closing() and self._state_of(agent.id) == "idle":
            self._ids.discard(agent.id)
            self._background(self._unload_when_idle(agent), f"taking {agent.id} offline")

    async def _unload_when_idle(self, agent: Agent) -> None:
        await asyncio.sleep(0)  # let the run that just ended finish its bookkeeping
        if self._state_of(agent.id) == "idle" and agent.id in self._agents:
            await self._unload(agent)
        elif agent.id in self._agents:
            self._ids.add(agent.id)
