"""Discovery: the three layers of agent definitions read and checked together.

Layers, a later one overriding an earlier one by name: bundled (shipped in
`piagents/supervision/bundled/`) < project (`<project>/.pi-agents/agents/*.md`,
used only when the user trusts the project) < global (`<home>/agents/*.md`).
One file is parsed by `definition_file`.
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import TypeAlias

from piagents.supervision import error_texts
from piagents.supervision.definition_file import (
    MAX_FILE_BYTES,
    AgentDefinition,
    DefinitionError,
    Layer,
    parse_definition,
    read_definition_text,
    shown,
)
from piagents.supervision.roster import DefinitionProblem, Roster

PROJECT_AGENTS_DIR = Path(".pi-agents", "agents")
GLOBAL_AGENTS_DIR = "agents"
MAX_FILES = 256  # definition files in one folder
# Tools the runtime gives by role, whatever a definition lists: naming them is no typo.
ROLE_TOOLS = ("agent", "ask_owner")

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
