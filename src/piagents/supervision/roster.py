"""The roster: the effective agent definitions by name, what `delegate` may launch
for a caller (`Roster.resolve`), and the `list` records of definitions.

Depth is fixed at lead → delegating agent → leaf: a definition with a non-empty
`agents` list is a delegating one and may delegate only to enabled leaves.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from piagents.supervision import error_texts
from piagents.supervision.definition_file import AgentDefinition, shown


class DefinitionRefused(LookupError):
    """A definition that cannot be delegated to by this caller; the message says why."""


@dataclass(frozen=True, slots=True)
class DefinitionProblem:
    """One problem found by discovery. `text` names the file and the field; an `error`
    stops discovery, a `warning` (a tool no one provides, a broken file of an untrusted
    project, which is not used) does not."""

    path: str
    text: str
    severity: Literal["error", "warning"]


@dataclass(frozen=True, slots=True)
class Roster:
    """The effective definitions by name (enabled or not), and the project's
    definitions left unused because the project is not trusted."""

    definitions: Mapping[str, AgentDefinition]
    untrusted: Mapping[str, AgentDefinition] = field(default_factory=dict)
    project_dir: str | None = None
    # Problems in an untrusted project's files: reported, never fatal, since they are not used.
    untrusted_problems: tuple[str, ...] = ()
    # Tools named by a definition that no one provides (`discover(tools=...)`).
    warnings: tuple[DefinitionProblem, ...] = ()

    def get(self, name: str) -> AgentDefinition | None:
        """The effective definition of that name, enabled or not."""
        return self.definitions.get(name)

    def delegatable_by(self, delegator: AgentDefinition | None) -> tuple[AgentDefinition, ...]:
        """What the lead (None) or a delegating definition may delegate to: the lead,
        every enabled definition; a delegating agent, the enabled leaves it lists."""
        if delegator is None:
            return tuple(d for _, d in sorted(self.definitions.items()) if d.enabled)
        allowed = (self.definitions.get(n) for n in delegator.agents)
        return tuple(d for d in allowed if d is not None and d.enabled and not d.is_delegating)

    def resolve(self, name: str, delegator: AgentDefinition | None) -> AgentDefinition:
        """The definition `delegate` launches for `name`, or `DefinitionRefused` saying why."""
        found = self.definitions.get(name)
        if found is None and name in self.untrusted:
            hidden = self.untrusted[name]
            raise DefinitionRefused(
                error_texts.definition_untrusted(name, self.project_dir, hidden.path)
            )
        choices = [d.name for d in self.delegatable_by(delegator)]
        if found is None:
            raise DefinitionRefused(error_texts.definition_unknown(shown(name), choices))
        if not found.enabled:
            raise DefinitionRefused(error_texts.definition_disabled(name, choices))
        if delegator is not None and not delegator.is_delegating:
            raise DefinitionRefused(error_texts.definition_is_leaf(delegator.name))
        if delegator is not None and found not in self.delegatable_by(delegator):
            raise DefinitionRefused(
                error_texts.definition_not_delegatable(delegator.name, name, choices)
            )
        return found

    def records(self, viewer: AgentDefinition | None = None) -> list[dict[str, Any]]:
        """The `agent_definitions` of `list` as JSON-ready dicts. The lead (None) sees
        every effective definition and then the untrusted project ones; a delegating
        agent its allowed enabled leaves; a leaf nothing."""
        if viewer is None:
            shown = [definition_record(d) for _, d in sorted(self.definitions.items())]
            hidden = sorted(self.untrusted.items())
            return shown + [definition_record(d, trusted=False) for _, d in hidden]
        return [definition_record(d) for d in self.delegatable_by(viewer)]


def definition_record(definition: AgentDefinition, *, trusted: bool = True) -> dict[str, Any]:
    """One definition as a `list` record (snake_case, like the agent records)."""
    d = definition
    return {
        "name": d.name,
        "description": d.description,
        "enabled": d.enabled,
        "model": d.model,
        "thinking": d.thinking,
        "tools": None if d.tools is None else list(d.tools),
        "exclude_tools": list(d.exclude_tools),
        "no_tools": d.no_tools,
        "system_prompt_mode": d.system_prompt_mode,
        "delegates_to": list(d.agents),
        "layer": d.layer,
        "path": d.path,
        "trusted": trusted,
    }
