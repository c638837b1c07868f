"""Agent definitions in three layers: discovery, the roster, and global overrides.

Layers, a later one overriding an earlier one by name: bundled (shipped in
`piagents/supervision/bundled/`) < project (`<project>/.pi-agents/agents/*.md`,
used only when the user trusts the project) < global (`<home>/agents/*.md`).
One file is parsed by `definition_file`.

Depth is fixed at lead → delegating agent → leaf: a definition with a non-empty
`agents` list is a delegating one and may delegate only to enabled leaves.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import os
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

from piagents.ai.models import ThinkingLevel
from piagents.atomic_file import write_atomically
from piagents.supervision import error_texts
from piagents.supervision.definition_file import (
    FIELDS,
    MAX_FILE_BYTES,
    NAME_PATTERN,
    SYSTEM_PROMPT_MODES,
    AgentDefinition,
    DefinitionError,
    Layer,
    SystemPromptMode,
    edit_front_matter,
    parse_definition,
    read_definition_text,
    render_definition,
    shown,
)

__all__ = [  # what this module gives, the parsing of one file included
    "FIELDS",
    "NAME_PATTERN",
    "SYSTEM_PROMPT_MODES",
    "UNCHANGED",
    "AgentDefinition",
    "DefinitionError",
    "DefinitionProblem",
    "DefinitionRefused",
    "DefinitionReport",
    "Layer",
    "Roster",
    "SystemPromptMode",
    "definition_record",
    "discover",
    "parse_definition",
    "survey",
    "write_global_override",
]

PROJECT_AGENTS_DIR = Path(".pi-agents", "agents")
GLOBAL_AGENTS_DIR = "agents"
MAX_FILES = 256  # definition files in one folder
# Tools the runtime gives by role, whatever a definition lists: naming them is no typo.
ROLE_TOOLS = ("agent", "ask_owner")


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


# ---- discovery and the roster -----------------------------------------------


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


_Source: TypeAlias = tuple[str, Callable[[], str]]  # (path shown in errors, reader)


@dataclass(frozen=True, slots=True)
class DefinitionReport:
    """What discovery found: the roster (None when an error stops it) and every problem,
    errors and warnings, in the order found. What a user interface shows."""

    roster: Roster | None
    problems: tuple[DefinitionProblem, ...] = ()

    @property
    def errors(self) -> tuple[DefinitionProblem, ...]:
        return tuple(p for p in self.problems if p.severity == "error")

    @property
    def warnings(self) -> tuple[DefinitionProblem, ...]:
        return tuple(p for p in self.problems if p.severity == "warning")


def discover(
    home: Path, project_dir: Path | None, trusted: bool, *, tools: Collection[str] | None = None
) -> Roster:
    """Read the three layers and check the result; every error is reported in one
    `DefinitionError` and no partial roster is returned. An untrusted project's
    definitions are parsed only to be listed in `Roster.untrusted`. Given the names of
    the `tools` this runtime provides, a definition naming another is a warning
    (`Roster.warnings`)."""
    report = survey(home, project_dir, trusted, tools=tools)
    if report.roster is None:
        raise DefinitionError(p.text for p in report.errors)
    return report.roster


def survey(
    home: Path, project_dir: Path | None, trusted: bool, *, tools: Collection[str] | None = None
) -> DefinitionReport:
    """`discover`, reporting its errors instead of raising them (it never raises)."""
    problems: list[DefinitionProblem] = []
    bundled = _load_layer(_bundled_sources(problems), "bundled", problems)
    global_dir = home / GLOBAL_AGENTS_DIR
    project: dict[str, AgentDefinition] = {}
    project_problems: list[DefinitionProblem] = []
    project_path: str | None = None
    if project_dir is not None:
        project_path = os.path.realpath(project_dir)
        agents_dir = Path(project_path) / PROJECT_AGENTS_DIR
        # A project whose `.pi-agents` is the home itself has no separate project layer.
        if os.path.realpath(agents_dir) != os.path.realpath(global_dir):
            sink = problems if trusted else project_problems
            # An untrusted project's files are only listed: their bodies are not kept.
            sources = _dir_sources(agents_dir, sink)
            project = _load_layer(sources, "project", sink, with_body=trusted)
    global_ = _load_layer(_dir_sources(global_dir, problems), "global", problems)
    effective = {**bundled, **(project if trusted else {}), **global_}
    untrusted = {} if trusted else {n: d for n, d in project.items() if n not in global_}
    problems.extend(_reference_problems(effective, untrusted, project_path))
    unused = [DefinitionProblem(p.path, p.text, "warning") for p in project_problems]
    if any(p.severity == "error" for p in problems):
        return DefinitionReport(None, (*problems, *unused))
    warnings = _unknown_tools(effective, tools) if tools is not None else []
    roster = Roster(
        definitions=MappingProxyType(effective),
        untrusted=MappingProxyType(untrusted),
        project_dir=project_path,
        untrusted_problems=tuple(p.text for p in project_problems),
        warnings=tuple(warnings),
    )
    return DefinitionReport(roster, (*warnings, *unused))


def _bundled_sources(problems: list[DefinitionProblem]) -> list[_Source]:
    folder = resources.files("piagents.supervision").joinpath("bundled")
    try:
        entries = sorted(folder.iterdir(), key=lambda e: e.name)
    except OSError as exc:
        text = error_texts.bundled_unreadable(folder, exc)
        problems.append(DefinitionProblem(str(folder), text, "error"))
        return []
    return [
        (str(e), functools.partial(e.read_text, encoding="utf-8"))
        for e in entries
        if e.name.endswith(".md") and not e.name.startswith(".") and e.is_file()
    ]


def _dir_sources(folder: Path, problems: list[DefinitionProblem]) -> list[_Source]:
    if not folder.exists():
        return []
    if not folder.is_dir():
        text = error_texts.not_a_directory(folder)
        problems.append(DefinitionProblem(str(folder), text, "error"))
        return []
    names: list[str] = []
    try:
        with os.scandir(folder) as scan:
            for entry in scan:
                if entry.name.endswith(".md") and not entry.name.startswith("."):
                    names.append(entry.name)
                    if len(names) > MAX_FILES:
                        text = error_texts.too_many_files(folder, MAX_FILES)
                        problems.append(DefinitionProblem(str(folder), text, "error"))
                        return []
    except OSError as exc:
        text = error_texts.directory_unreadable(folder, exc.strerror or exc)
        problems.append(DefinitionProblem(str(folder), text, "error"))
        return []
    paths = [folder / name for name in sorted(names)]
    return [(str(p), functools.partial(read_definition_text, p)) for p in paths if p.is_file()]


_PARSED: OrderedDict[tuple[bytes, str, Layer, bool], AgentDefinition] = OrderedDict()


def _parsed(text: str, path: str, layer: Layer, with_body: bool) -> AgentDefinition:
    """`parse_definition`, remembered by a digest of the file's text (the last
    `MAX_FILES` of them): every `list` and `delegate` reads the definitions again (edits
    count at once) but parses only what changed."""
    key = (hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest(), path, layer, with_body)
    hit = _PARSED.get(key)
    if hit is None:
        hit = parse_definition(text, path=path, layer=layer, with_body=with_body)
        _PARSED[key] = hit
        if len(_PARSED) > MAX_FILES:
            _PARSED.popitem(last=False)
    else:
        _PARSED.move_to_end(key)
    return hit


def _load_layer(
    sources: Iterable[_Source],
    layer: Layer,
    problems: list[DefinitionProblem],
    *,
    with_body: bool = True,
) -> dict[str, AgentDefinition]:
    found: dict[str, AgentDefinition] = {}
    for path, read in sources:
        try:
            text = read()
            if len(text) > MAX_FILE_BYTES:  # a bundled file: read whole, but still bounded
                raise DefinitionError([error_texts.file_too_large(path, MAX_FILE_BYTES >> 20)])
            definition = _parsed(text, path, layer, with_body)
        except DefinitionError as exc:
            problems.extend(DefinitionProblem(path, p, "error") for p in exc.problems)
            continue
        except UnicodeDecodeError:
            problems.append(DefinitionProblem(path, error_texts.not_utf8(path), "error"))
            continue
        except OSError as exc:
            text = error_texts.file_unreadable(path, exc.strerror or exc)
            problems.append(DefinitionProblem(path, text, "error"))
            continue
        first = found.get(definition.name)
        if first is not None:
            text = error_texts.defined_twice(path, definition.name, first.path, layer)
            problems.append(DefinitionProblem(path, text, "error"))
            continue
        found[definition.name] = definition
    return found


def _reference_problems(
    effective: Mapping[str, AgentDefinition],
    untrusted: Mapping[str, AgentDefinition],
    project_dir: str | None,
) -> list[DefinitionProblem]:
    problems: list[DefinitionProblem] = []
    for definition in effective.values():
        if not definition.enabled:
            continue  # a disabled definition delegates nothing
        for target_name in definition.agents:
            target = effective.get(target_name)
            if target is None and target_name in untrusted:
                why = error_texts.untrusted_target(project_dir)
            elif target is None:
                why = error_texts.UNDEFINED_TARGET
            elif not target.enabled:
                why = error_texts.DISABLED_TARGET
            elif target.is_delegating:
                why = error_texts.DELEGATING_TARGET
            else:
                continue
            text = error_texts.bad_target(definition.path, target_name, why)
            problems.append(DefinitionProblem(definition.path, text, "error"))
    return problems


def _unknown_tools(
    effective: Mapping[str, AgentDefinition], tools: Collection[str]
) -> list[DefinitionProblem]:
    """A warning for each tool a definition names that nothing here provides: a typo, or
    an extension that is not loaded. The definition still works, without that tool."""
    known = {*tools, *ROLE_TOOLS}
    offered = ", ".join(sorted(tools))
    problems: list[DefinitionProblem] = []
    for definition in effective.values():
        for key, names in (
            ("tools", definition.tools or ()),
            ("excludeTools", definition.exclude_tools),
        ):
            for name in names:
                if name not in known:
                    text = error_texts.unknown_tool(definition.path, key, shown(name), offered)
                    problems.append(DefinitionProblem(definition.path, text, "warning"))
    return problems


# ---- writing overrides to the global layer ----------------------------------


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
