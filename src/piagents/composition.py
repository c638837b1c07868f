"""The one place where a runtime's parts are wired together.

Each part (the coordinator and its delivery path, the `agent` tool's operations, the
supervisor, the read model for front ends) is given only the collaborators it uses,
as ports; none of them sees the runtime itself. `Host` is what the wiring reads of
the runtime: its values are read again at each use (settings may be replaced, the
store opens later), never copied.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Coroutine
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, cast

from piagents.agent import Agent
from piagents.agents.clock import WaitClock
from piagents.agents.coordinator import Coordinator
from piagents.agents.delivery import Delivery
from piagents.agents.errors import AgentCallError
from piagents.agents.mailbox import wake as wake_holder
from piagents.agents.operations import Operations
from piagents.agents.ports import AgentsPorts, WakePolicy
from piagents.agents.tree import Waiter
from piagents.agents.yielding import slot_given_up
from piagents.ai.models import ThinkingLevel
from piagents.ai.registry import ProviderRegistry
from piagents.config import Settings
from piagents.events.hub import EventHub
from piagents.events.states import StateTracker
from piagents.harness.session import Session
from piagents.harness.tools.base import Tool
from piagents.programs.agents import CoordinatedProgramAgents, Unload
from piagents.programs.ports import ProgramAgents
from piagents.programs.runner import ProgramRunner, RunnerPorts
from piagents.read_model import ReadModel, SettingsPort
from piagents.store.base import LeaseHolder, Store, StoreError
from piagents.store.records import GenerationPlacement, SessionRecord
from piagents.supervision.ports import AgentHandle, Coordination, Delivering, SupervisionPorts
from piagents.supervision.supervisor import Supervisor


class Host(Protocol):
    """What the wiring reads of the runtime that hosts the parts."""

    home: Path
    settings: Settings
    holder: LeaseHolder | None
    closing: bool
    agents: dict[str, Agent]
    providers: ProviderRegistry
    default_model: str | None
    default_thinking: ThinkingLevel
    default_placement: GenerationPlacement

    @property
    def store(self) -> Store: ...

    @property
    def warnings(self) -> tuple[str, ...]: ...

    def background(self, work: Coroutine[Any, Any, object], what: str) -> None: ...

    async def unload(self, agent: Agent, timeout: float | None = None) -> None: ...

    def load_managed(self, session: Session) -> Agent: ...

    def extension_tools(self) -> list[Tool]: ...

    def worker_options(self) -> dict[str, Any]: ...

    async def wake(self, record: SessionRecord) -> Agent: ...

    def create_owned(
        self, owner: Agent, *, name: str, cwd: str, model: str, thinking: ThinkingLevel, fork: bool
    ) -> Agent: ...

    async def discard_owned(self, agent: Agent) -> None: ...


@dataclass(frozen=True, slots=True)
class Parts:
    """A runtime's parts, wired."""

    coordinator: Coordinator
    delivery: Delivery
    operations: Operations
    supervisor: Supervisor
    read_model: ReadModel
    programs: ProgramRunner


def compose(
    host: Host,
    hub: EventHub,
    states: StateTracker,
    wake: WakePolicy,
    clock: WaitClock | None = None,
    program_agents: ProgramAgents | None = None,
) -> Parts:
    """Wire the parts of the runtime `host`: each is handed what it may use of it.
    `program_agents` gives Programs their Agents (`agent()`); by default, Agents of
    the caller's tree made and run by this runtime's coordinator."""
    supervisor: Supervisor | None = None

    def on_control(stored: Any) -> None:  # a control message for a worker's supervisor
        assert supervisor is not None
        supervisor.on_control(stored)

    agents_ports = AgentsPorts(
        store=lambda: host.store,
        settings=lambda: host.settings,
        agents=host.agents,
        background=host.background,
        closing=lambda: host.closing,
        holder=lambda: host.holder,
        loader=host,
        wake=wake,
        home=host.home,
        on_control=on_control,
        poke=lambda token: wake_holder(host.store, token),
    )
    coordinator = Coordinator(agents_ports, states)
    delivery = coordinator.delivery
    operations = Operations(
        coordinator,
        agents_ports,
        providers=host.providers,
        default_model=lambda: host.default_model,
        clock=clock,
    )
    # The supervision face hands back only Agents this runtime gave it, hence the casts
    # to the Agent-typed coordinator, delivery and unload.
    unload = cast(Callable[[AgentHandle, float | None], Coroutine[Any, Any, None]], host.unload)
    supervisor = Supervisor(
        SupervisionPorts(
            home=host.home,
            settings=lambda: host.settings,
            default_thinking=host.default_thinking,
            store=lambda: host.store,
            holder=lambda: host.holder,
            closing=lambda: host.closing,
            default_placement=lambda: host.default_placement,
            agents=host.agents,
            coordinator=cast(Coordination, coordinator),
            delivery=cast(Delivering, delivery),
            background=host.background,
            load_managed=host.load_managed,
            unload=unload,
            context_window=host.providers.context_window,
            extension_tools=host.extension_tools,
            worker_options=host.worker_options,
            publish=hub.publish,
        )
    )

    def replace_settings(settings: Settings) -> None:  # a front end changed one
        host.settings = settings

    read_model = ReadModel(
        host.agents,
        states,
        lambda: host.store,
        coordinator,
        supervisor,
        host.providers,
        hub,
        home=host.home,
        settings=SettingsPort(lambda: host.settings, replace_settings, lambda: host.warnings),
    )

    def notify(caller: Agent, text: str) -> None:  # as the `agent` face tells an owner
        if host.closing or host.agents.get(caller.id) is not caller:
            return
        with contextlib.suppress(AgentCallError, StoreError):  # the result is recorded
            coordinator.accept(None, caller, text, "steer", notification=True)

    def yielded(caller: Agent) -> AbstractAsyncContextManager[object]:
        waiter = Waiter(caller.id, frozenset())
        return slot_given_up(coordinator, caller.session.record, waiter)

    if program_agents is None:
        program_agents = CoordinatedProgramAgents(
            coordinator, operations, agents_ports, cast(Unload, host.unload)
        )
    programs = ProgramRunner(
        RunnerPorts(
            store=lambda: host.store,
            notify=notify,
            yielded=yielded,
            cleanup_timeout=lambda: host.settings.agents.abort_timeout_ms / 1000,
            publish=hub.publish,
            clock=operations.clock,
        ),
        program_agents,
    )
    return Parts(coordinator, delivery, operations, supervisor, read_model, programs)
