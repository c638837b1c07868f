"""What a managed agent is given (its tools and system prompt), and what a lead or a
delegating agent is told of the roster when it starts."""

from __future__ import annotations

from collections.abc import Sequence

from piagents.harness.tools.base import Tool
from piagents.supervision import texts
from piagents.supervision.definitions import AgentDefinition, Roster
from piagents.supervision.host import Supervising
from piagents.supervision.ports import AgentHandle
from piagents.supervision.records import MANAGED

MANAGED_BASH_TIMEOUT_S = 600.0  # bash calls of managed agents that give no timeout


def _definition_of(agent: AgentHandle, roster: Roster | None) -> AgentDefinition | None:
    meta = agent.session.record.meta.get(MANAGED, {})
    return roster.get(str(meta.get("definition"))) if roster is not None else None


def managed_tools(sup: Supervising, agent: AgentHandle, available: Sequence[Tool]) -> list[Tool]:
    """The tools its definition allows (bash with a longer default timeout), `ask_owner`,
    and the `agent` tool for a delegating agent the lead delegated to."""
    from piagents.harness.tools.bash import BashTool
    from piagents.supervision.tool import AskOwnerTool, SupervisionTool

    definition = _definition_of(agent, sup.roster_quietly(agent.cwd))
    names = set(definition.effective_tools([t.name for t in available])) if definition else set()
    tools: list[Tool] = [
        BashTool(MANAGED_BASH_TIMEOUT_S) if t.name == "bash" else t
        for t in available
        if t.name in names
    ]
    tools.append(AskOwnerTool(sup, agent))
    record = agent.session.record
    if definition is not None and definition.is_delegating and record.owner_id == record.root_id:
        tools.append(SupervisionTool(sup, agent))
    return tools


def prompt_addition(sup: Supervising, agent: AgentHandle, roster: Roster | None) -> str:
    """For a lead or a delegating agent, the roster as `list` shows it (a startup
    snapshot); for a managed agent, how its result and questions travel."""
    record = agent.session.record
    face = sup.face(record)
    parts: list[str] = []
    if face == MANAGED:
        meta = record.meta.get(MANAGED, {})
        parts.append(texts.managed_intro(meta.get("label"), meta.get("definition")))
    if roster is None:
        return "\n\n".join(parts)
    viewer: AgentDefinition | None = None
    if face == MANAGED:
        viewer = _definition_of(agent, roster)
        if viewer is None or not viewer.is_delegating:
            return "\n\n".join(parts)
    elif face != "supervision":
        return ""
    lines = [texts.definition_line(texts.definition_line_record(d)) for d in roster.records(viewer)]
    parts.append(texts.roster_snapshot(lines))
    return "\n\n".join(parts)


def system_prompt_addition(sup: Supervising, agent: AgentHandle) -> str:
    """What `prompt_addition` adds for an agent that is not managed (a lead)."""
    return prompt_addition(sup, agent, sup.roster_quietly(agent.cwd))


def managed_system_prompt(sup: Supervising, agent: AgentHandle, base: str) -> str:
    """A managed agent's system prompt: its definition's body appended to, or
    replacing, the coding prompt."""
    roster = sup.roster_quietly(agent.cwd)  # read once, for both parts
    definition = _definition_of(agent, roster)
    addition = prompt_addition(sup, agent, roster)
    if definition is None:
        return "\n\n".join(p for p in (base, addition) if p)
    if definition.system_prompt_mode == "replace":
        return "\n\n".join(p for p in (definition.system_prompt, addition) if p)
    return "\n\n".join(p for p in (base, definition.system_prompt, addition) if p)
