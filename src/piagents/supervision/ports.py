"""What the supervision face needs of the runtime around it, as narrow ports.

The runtime wires one `SupervisionPorts` (see `Runtime.__init__`); the supervisor
and its modules use only these, never the runtime itself. A loaded Agent is seen
through `AgentHandle`, the coordinator through `Coordination` (what it announces),
and the one delivery path through `Delivering`: every message and poke to an Agent.

This module imports no other module of the supervision face, so every one of them
can depend on it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from piagents.ai.models import ModelRef, ThinkingLevel
from piagents.config import Settings
from piagents.events.records import RuntimeEvent
from piagents.harness.loop import AgentLoop
from piagents.harness.session import Session
from piagents.harness.tools.base import Tool
from piagents.store.base import LeaseHolder, Store
from piagents.store.records import InputDelivery, InputRecord


class AgentHandle(Protocol):
    """What supervision uses of a loaded Agent: its session and its loop."""

    @property
    def id(self) -> str: ...

    @property
    def cwd(self) -> str: ...

    @property
    def model(self) -> ModelRef: ...

    @property
    def session(self) -> Session: ...

    @property
    def loop(self) -> AgentLoop: ...


class Coordination(Protocol):
    """What supervision uses of the coordinator: its change announcements."""

    @property
    def listeners(self) -> list[Callable[[], None]]: ...

    def changed(self) -> None:
        """Something may have changed state."""


class Delivering(Protocol):
    """The delivery path (`agents.delivery.Delivery`) as supervision uses it: every
    message supervision sends to an Agent, and every poke, goes through it."""

    def accept(
        self,
        sender: AgentHandle | None,
        recipient: AgentHandle,
        text: str,
        delivery: InputDelivery,
        *,
        has_result: bool | None = None,
        plain: bool = False,
    ) -> object:
        """Accept a message for an Agent loaded here and hand it to its loop."""

    def submit_stored(self, recipient: AgentHandle, stored: InputRecord) -> object:
        """Hand an input already committed (and taken from the store) to an Agent
        loaded here."""

    def commit(self, record: InputRecord) -> InputRecord:
        """Commit an accepted message to the store (for a worker to take)."""

    def result_record(
        self, recipient_id: str, sender_id: str, root_id: str, text: str
    ) -> InputRecord:
        """A result (or question) for an owner, to commit with its generation's change."""

    def hand_over(self, recipient_id: str, *, wake: bool = True) -> None:
        """Get messages already committed for `recipient_id` to it, wherever it is."""

    def drain(self) -> None:
        """Take the inputs waiting in the store for Agents loaded here."""

    def nudge(self, token: str | None) -> None:
        """Poke the process holding `token` (a worker), in the background."""

    async def poke(self, token: str) -> bool:
        """Tell the process holding `token` to look in the store now."""

    async def poke_holder(self, recipient_id: str) -> None:
        """Nudge the runtime holding the recipient's tree (from a worker: the lead)."""


class ControlReceiver(Protocol):
    """A worker process's side: it takes the lead's control messages."""

    def on_control(self, stored: InputRecord) -> None: ...


@dataclass(frozen=True, slots=True)
class SupervisionPorts:
    """The runtime's collaborators for the supervision face, wired in one place."""

    home: Path
    settings: Callable[[], Settings]  # the current ones (a settings screen may replace them)
    default_thinking: ThinkingLevel
    store: Callable[[], Store]  # once the runtime is open
    holder: Callable[[], LeaseHolder | None]  # this runtime's lease holder, once open
    closing: Callable[[], bool]  # the runtime is taking its Agents offline
    default_placement: Callable[[], str]  # where managed agents run when settings name none
    agents: Mapping[str, AgentHandle]  # the Agents loaded here, by session id (read only)
    coordinator: Coordination
    delivery: Delivering
    background: Callable[[Coroutine[Any, Any, object], str], None]  # contained background work
    load_managed: Callable[[Session], AgentHandle]
    unload: Callable[[AgentHandle, float | None], Coroutine[Any, Any, None]]
    context_window: Callable[[ModelRef], Awaitable[int]]
    extension_tools: Callable[[], list[Tool]]
    worker_options: Callable[[], dict[str, Any]]  # a worker process's options, as JSON
    publish: Callable[[RuntimeEvent], None]  # tell the runtime's event stream


class HasPorts(Protocol):
    """Anything of the supervision face that carries the ports (the supervisor)."""

    @property
    def ports(self) -> SupervisionPorts: ...
