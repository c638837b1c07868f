"""The collaborators the Pi Agents side is given by the runtime that composes it.

The coordinator, the operations of the `agent` tool and the delivery path see
the runtime only through these: no whole runtime is passed in.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from piagents.ai.models import ThinkingLevel
from piagents.config import Settings
from piagents.store.base import LeaseHolder, Store
from piagents.store.records import InputRecord, SessionRecord

if TYPE_CHECKING:
    from piagents.agent import Agent


class TaskSpawner(Protocol):
    """Runs background work in the runtime's task group; an error it raises is logged
    and ends only that work."""

    def __call__(self, work: Coroutine[Any, Any, object], what: str, /) -> None: ...


class AgentLoader(Protocol):
    """Loads and makes Agents in this runtime."""

    async def wake(self, record: SessionRecord) -> Agent:
        """Load an Agent that is not loaded here, for an input sent to it."""
        ...

    def create_owned(
        self, owner: Agent, *, name: str, cwd: str, model: str, thinking: ThinkingLevel, fork: bool
    ) -> Agent:
        """A new Agent owned by `owner`, in its tree, running in this runtime (without
        awaiting: a spawn makes it inside the store batch of its first input)."""
        ...

    async def discard_owned(self, agent: Agent) -> None:
        """Take back an owned Agent whose spawn failed before its first input was accepted."""
        ...


@dataclass(slots=True)
class WakePolicy:
    """How an offline root is woken for a message: loaded in this process (the SDK),
    or by a background `pi-agents serve` process (the command line, and workers)."""

    in_process: bool = True
    # What a runtime that stopped left open in a tree loaded here: resumed (a
    # `pi-agents worker` taking work over), or ended `aborted` (`agents.leftovers`).
    resume: bool = False


@dataclass(frozen=True, slots=True)
class AgentsPorts:
    """What the runtime lends the Pi Agents side, wired in one place (`Runtime`)."""

    store: Callable[[], Store]
    settings: Callable[[], Settings]
    agents: Mapping[str, Agent]  # the Agents loaded here, by ID (the runtime's registry)
    background: TaskSpawner
    closing: Callable[[], bool]  # the runtime is taking its Agents offline
    holder: Callable[[], LeaseHolder | None]  # this runtime's lease holder, once open
    loader: AgentLoader
    wake: WakePolicy
    home: Path
    on_control: Callable[[InputRecord], None]  # a control input for a worker's supervisor
    # Nudge the runtime holding a lease token (`mailbox.wake`); False: nobody was told.
    poke: Callable[[str], Coroutine[Any, Any, bool]]
