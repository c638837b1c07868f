"""Writing a definition's `enabled`, `model` and `thinking` to the global layer (what
the supervision screen's toggles do)."""

from __future__ import annotations

import enum
from pathlib import Path

from piagents.ai.models import ThinkingLevel
from piagents.atomic_file import write_atomically
from piagents.supervision import error_texts
from piagents.supervision.definition_file import (
    AgentDefinition,
    DefinitionError,
    edit_front_matter,
    parse_definition,
    render_definition,
)
from piagents.supervision.discovery import GLOBAL_AGENTS_DIR
from piagents.supervision.roster import Roster


class _Unchanged(enum.Enum):
    UNCHANGED = "unchanged"


UNCHANGED = _Unchanged.UNCHANGED
"""The default of `write_global_override`'s fields: keep the current value."""


def write_global_override(
    home: Path,
    definition: AgentDefinition,
    *,
    enabled: bool | _Unchanged = UNCHANGED,
    model: str | _Unchanged | None = UNCHANGED,
    thinking: ThinkingLevel | _Unchanged | None = UNCHANGED,
    roster: Roster | None = None,
) -> AgentDefinition:
    """Set `enabled`, `model` and `thinking` of `definition` in the global layer and
    return the definition as now written (`None` removes a model or thinking level).

    A global definition's own file has just those front-matter values replaced,
    everything else kept. A definition from another layer is copied, body and all,
    to `<home>/agents/<name>.md`. The new text is checked before it replaces the
    file atomically; an invalid value is a `DefinitionError` and nothing is written.
    Given the current `roster`, disabling a definition that an enabled one delegates
    to is refused too, since discovery would then fail.
    """
    updates: dict[str, object] = {}
    if not isinstance(enabled, _Unchanged):
        updates["enabled"] = enabled
    if not isinstance(model, _Unchanged):
        updates["model"] = model
    if not isinstance(thinking, _Unchanged):
        updates["thinking"] = thinking
    if definition.layer == "global":
        target = Path(definition.path)
        try:
            text = edit_front_matter(target.read_text(encoding="utf-8"), str(target), updates)
        except OSError as exc:
            raise DefinitionError(
                [error_texts.file_unreadable(target, exc.strerror or exc)]
            ) from exc
    else:
        target = home / GLOBAL_AGENTS_DIR / f"{definition.name}.md"
        if target.exists():
            raise DefinitionError([error_texts.not_overwritten(target, definition.name)])
        text = render_definition(definition, updates)
    written = parse_definition(text, path=str(target), layer="global")
    users = [] if roster is None or written.enabled else _delegating_to(roster, written.name)
    if users:
        raise DefinitionError([error_texts.still_delegated_to(target, written.name, users)])
    if written.name != definition.name:
        raise DefinitionError([error_texts.renamed_by_override(target, written.name)])
    write_atomically(target, text)
    return written


def _delegating_to(roster: Roster, name: str) -> list[str]:
    return sorted(d.name for d in roster.definitions.values() if d.enabled and name in d.agents)
