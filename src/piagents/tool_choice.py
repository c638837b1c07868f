"""Which tools an Agent is offered: the built-in ones, its face's tool (`agent` or
`supervise`), the extensions' and, when chosen, `program`.

`program` is off by default. The names chosen come from `--tools` (the SDK's
`tools=`) or else the settings' `defaultTools`: a list of names is exactly those
tools; a name written `+name` adds that tool to the defaults (`--tools +program`,
`"defaultTools": ["+program"]`). With `program_only` (`--program-only`) `program`
is the one tool offered, the others reachable through its Programs' `tools.*` and
listed in its description. An owned Agent is offered only tools its owner may use.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from piagents.agents.operations import Operations
from piagents.agents.tool import AgentTool
from piagents.harness.tools import BUILTIN_TOOL_NAMES, shared_builtin_tools
from piagents.harness.tools.base import Tool
from piagents.programs.runner import ProgramRunner
from piagents.programs.tool import NAME as PROGRAM
from piagents.programs.tool import ProgramTool
from piagents.supervision import briefing
from piagents.supervision.supervisor import Supervisor
from piagents.supervision.tool import SupervisionTool

if TYPE_CHECKING:
    from piagents.agent import Agent

OPTIONAL_TOOLS = frozenset({PROGRAM})  # offered only when chosen


@dataclass(frozen=True, slots=True)
class ToolChoice:
    """The tools chosen for a runtime's Agents (see the module docstring)."""

    names: tuple[str, ...] | None = None  # None: the defaults
    program_only: bool = False

    def offers(self, default_tools: Sequence[str]) -> Callable[[str], bool]:
        """Whether a tool of this name is chosen, given the settings' `defaultTools`."""
        names = list(default_tools) if self.names is None else list(self.names)
        if self.names and all(n.startswith("+") for n in self.names):
            names = [*default_tools, *self.names]  # `+name` adds to the defaults
        exact = {n for n in names if not n.startswith("+")}
        added = {n[1:] for n in names if n.startswith("+")}
        if self.program_only:
            added.add(PROGRAM)
        if exact or (self.names is not None and not self.names):  # a list, or none at all
            chosen = exact | added
            return lambda name: name in chosen
        return lambda name: name in added or name not in OPTIONAL_TOOLS


def known_tool_names(extension_tools: Sequence[Tool] = ()) -> tuple[str, ...]:
    """Every tool name `--tools` may give."""
    return (*BUILTIN_TOOL_NAMES, "agent", PROGRAM, *(t.name for t in extension_tools))


def choose_tools(
    agent: Agent,
    *,
    supervisor: Supervisor,
    operations: Operations,
    extensions: Sequence[Tool],
    choice: ToolChoice,
    default_tools: Sequence[str],
    owner: Agent | None,
    programs: Callable[[], ProgramRunner],
) -> list[Tool]:
    """The tools offered to `agent`, by its face: a managed agent's are its briefing's
    (never `program`); the others get the face's tool among theirs."""
    face = supervisor.face(agent.session.record)
    if face == "managed":
        available = [*shared_builtin_tools(), *extensions]
        if choice.names is not None:
            available = [t for t in available if t.name in choice.names]
        return briefing.managed_tools(supervisor, agent, available)
    face_tool: Tool = (
        SupervisionTool(supervisor, agent)
        if face == "supervision"
        else AgentTool(operations, agent)
    )
    offered = choice.offers(default_tools)
    tools = [t for t in (*shared_builtin_tools(), face_tool, *extensions) if offered(t.name)]
    may_program = offered(PROGRAM)
    if owner is not None:  # an owned Agent can use only tools its owner can use
        allowed = permitted(owner)
        tools = [t for t in tools if t.name in allowed]
        may_program = may_program and PROGRAM in allowed
    if not may_program:
        return tools
    if choice.program_only:
        reachable = {t.name: t for t in tools}
        return [ProgramTool(programs(), agent, reachable)]
    return [*tools, ProgramTool(programs(), agent)]


def permitted(agent: Agent) -> set[str]:
    """The names of the tools `agent` may use: those it is offered and, offered
    `program` alone, those its Programs reach."""
    names = set(agent.loop.tools)
    program = agent.loop.tools.get(PROGRAM)
    if isinstance(program, ProgramTool) and program.reachable is not None:
        names |= set(program.reachable)
    return names
