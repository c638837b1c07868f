"""What the actions, the tools, the briefing and a worker's link use of the supervisor.

`Supervisor` provides it; the modules that act for it depend on this protocol,
not on the supervisor, so none of them imports it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from piagents.config import Placement
from piagents.harness.tools.base import ToolResult
from piagents.store.records import GenerationRecord, SessionRecord
from piagents.supervision.attachments import ComposedMessage
from piagents.supervision.definitions import AgentDefinition, Roster
from piagents.supervision.generations import Generations
from piagents.supervision.ports import AgentHandle, SupervisionPorts
from piagents.supervision.records import Face, Observed
from piagents.supervision.requests import AskOwnerRequest, ContinueRequest, DelegateRequest


class Supervising(Protocol):
    """The supervisor of one runtime, as its collaborators see it."""

    @property
    def ports(self) -> SupervisionPorts: ...

    @property
    def generations(self) -> Generations: ...

    @property
    def listeners(self) -> list[Callable[[], None]]: ...

    @property
    def placement(self) -> Placement: ...

    def face(self, record: SessionRecord) -> Face: ...

    def controller(
        self, caller: AgentHandle, operation: str
    ) -> tuple[Roster, AgentDefinition | None]: ...

    def roster_quietly(self, cwd: str) -> Roster | None: ...

    def observe(self, g: GenerationRecord) -> Observed: ...

    def recovered(self, g: GenerationRecord) -> GenerationRecord: ...

    def generation_of(self, session_id: str) -> GenerationRecord | None: ...

    def session_path(self, session_id: str) -> str: ...

    def compose(
        self, caller: AgentHandle, message: str, files: Sequence[str], operation: str
    ) -> ComposedMessage: ...

    def changed(self) -> None: ...

    def list_agents(self, caller: AgentHandle) -> ToolResult: ...

    async def delegate(self, caller: AgentHandle, req: DelegateRequest) -> ToolResult: ...

    async def continue_(self, caller: AgentHandle, req: ContinueRequest) -> ToolResult: ...

    async def ask_owner(
        self, agent: AgentHandle, req: AskOwnerRequest, turn_calls: Sequence[str]
    ) -> ToolResult: ...
