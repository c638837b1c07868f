"""What a running Program needs of the Agents face: its own Agents (made, messaged,
aborted, closed) behind one narrow port, so the Program runner never reaches into
the coordinator and the Agents face never knows of the sandbox."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from piagents.programs.script_values import JsonValue

if TYPE_CHECKING:
    from piagents.agent import Agent


@dataclass(frozen=True, slots=True)
class ProgramScope:
    """One running Program: the owner of its Agents. `caller` is the Agent that ran it."""

    program_id: str
    short_id: str
    caller: Agent


@dataclass(frozen=True, slots=True)
class Closed:
    """How a Program's Agents went when it ended: `abandoned` names the work that did
    not stop within the cleanup timeout (empty: everything went offline)."""

    abandoned: tuple[str, ...] = ()


class ProgramAgents(Protocol):
    """A Program's Agents. Every failure a script should see raises `ToolError`
    (piagents.programs.script_api) with the text the script is given."""

    def create(self, scope: ProgramScope, options: dict[str, JsonValue]) -> tuple[str, str]:
        """A new idle Agent of the Program (options: name, cwd, context, model,
        thinking_level, as `spawn` takes them); its (id, name). Must not await."""
        ...

    async def send(
        self,
        scope: ProgramScope,
        agent_id: str,
        message: str,
        deliver_as: str,
        schema: JsonValue,
    ) -> JsonValue:
        """An input to one of the Program's Agents: its answer (the `submit_result`
        value when `schema` is given), or None once a steer or write is accepted.
        Raises ToolError when the input fails, is aborted or interrupted, or the tree
        is at `maxOutstanding`."""
        ...

    async def abort(self, scope: ProgramScope, agent_id: str) -> None:
        """Abort that Agent's current turn and queued inputs."""
        ...

    async def close(self, scope: ProgramScope, timeout: float) -> Closed:
        """The Program ended: its Agents' unfinished inputs end `aborted` and they go
        offline for good, bottom-up, within `timeout` seconds."""
        ...
