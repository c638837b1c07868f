"""Agent definitions: Markdown files with YAML front matter, in three layers.

A definition names a kind of managed agent; its body becomes the agent's system
prompt::

    ---
    name: scout
    description: Finds where things are in the code base; use before changing code.
    thinking: low
    tools: [read, grep, find, ls]
    ---
    You are a scout. ...

Layers, a later one overriding an earlier one by name: bundled (shipped in
`piagents/supervision/bundled/`) < project (`<project>/.pi-agents/agents/*.md`,
used only when the user trusts the project) < global (`<home>/agents/*.md`).

Depth is fixed at lead → delegating agent → leaf: a definition with a non-empty
`agents` list is a delegating one and may delegate only to enabled leaves.
"""

from __future__ import annotations

import enum
import functools
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, TypeAlias, TypeVar

import yaml

from piagents.ai.models import THINKING_LEVELS, ModelRef, ThinkingLevel
from piagents.atomic_file import write_atomically

NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
"""A definition name: a lower-case letter, then up to 31 of `a-z 0-9 _ -`."""

Layer: TypeAlias = Literal["bundled", "project", "global"]
SystemPromptMode: TypeAlias = Literal["append", "replace"]
SYSTEM_PROMPT_MODES: tuple[SystemPromptMode, ...] = ("append", "replace")
FIELDS = (
    "name",
    "description",
    "enabled",
    "model",
    "thinking",
    "tools",
    "excludeTools",
    "noTools",
    "systemPromptMode",
    "agents",
)
PROJECT_AGENTS_DIR = Path(".pi-agents", "agents")
GLOBAL_AGENTS_DIR = "agents"
_TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
_T = TypeVar("_T")


class DefinitionError(ValueError):
    """Invalid agent definitions; each of `problems` names the file and the field."""

    def __init__(self, problems: Iterable[str]) -> None:
        self.problems = tuple(problems)
        if len(self.problems) == 1:
            message = self.problems[0]
        else:
            listed = "\n".join(f"  - {p}" for p in self.problems)
            message = f"{len(self.problems)} problems in agent definitions:\n{listed}"
        super().__init__(message)


class DefinitionRefused(LookupError):
    """A definition that cannot be delegated to by this caller; the message says why."""


@dataclass(frozen=True, slots=True)
class AgentDefinition:
    """One parsed definition file; `layer` and `path` say where it came from."""

    name: str
    description: str = ""
    enabled: bool = True
    model: str | None = None  # `provider/modelId`; None: the runtime's default
    thinking: ThinkingLevel | None = None  # None: the model's default
    tools: tuple[str, ...] | None = None  # allowlist; None: every available tool
    exclude_tools: tuple[str, ...] = ()  # wins over `tools`
    no_tools: bool = False  # wins over both
    system_prompt_mode: SystemPromptMode = "append"
    agents: tuple[str, ...] = ()  # definitions it may delegate to
    system_prompt: str = ""
    layer: Layer = "bundled"
    path: str = ""

    @property
    def is_delegating(self) -> bool:
        """True when it may delegate (non-empty `agents`); otherwise it is a leaf."""
        return bool(self.agents)

    def effective_tools(self, available: Iterable[str]) -> tuple[str, ...]:
        """The tool names it gets out of `available`: none with `noTools`, else the
        `tools` allowlist (in its order) or every available tool, less `excludeTools`.

        These are its own tools; the runtime adds `agent` or `ask_owner` by role.
        """
        if self.no_tools:
            return ()
        offered = list(dict.fromkeys(available))
        chosen = offered if self.tools is None else [t for t in self.tools if t in offered]
        return tuple(t for t in chosen if t not in self.exclude_tools)


# ---- parsing ----------------------------------------------------------------


def parse_definition(text: str, *, path: str, layer: Layer) -> AgentDefinition:
    """Parse one definition file's text; every problem in it is one `DefinitionError`.

    `model`, `thinking` and `tools` may be `null` (the same as absent); YAML `false`
    for `thinking` means `off`.
    """
    front, body = _split_front_matter(text, path)
    data = _load_front_matter(front, path)
    problems: list[str] = []

    def bad(key: str, what: str) -> None:
        problems.append(f"{path}: `{key}`: {what}")

    for key in data:
        if key not in FIELDS:
            bad(str(key), f"unknown field; the fields are {', '.join(FIELDS)}")
    name = data.get("name")
    if "name" not in data:
        bad("name", "missing; every definition needs a name")
    elif not isinstance(name, str):
        bad("name", f"expected a string, got {_kind(name)}")
    elif not NAME_PATTERN.match(name):
        bad("name", f"{name!r} must match {NAME_PATTERN.pattern}")
    description = _typed(data, "description", str, "", bad)
    enabled = _typed(data, "enabled", bool, True, bad)
    no_tools = _typed(data, "noTools", bool, False, bad)
    model = _model(data.get("model"), bad)
    thinking = _thinking(data.get("thinking"), bad)
    tools = None if data.get("tools") is None else _names(data, "tools", _TOOL_NAME, bad)
    exclude_tools = _names(data, "excludeTools", _TOOL_NAME, bad) if "excludeTools" in data else ()
    agents = _names(data, "agents", NAME_PATTERN, bad) if "agents" in data else ()
    if isinstance(name, str) and name in agents:
        bad("agents", f"{name!r} cannot delegate to itself")
    mode: SystemPromptMode = "append"
    raw_mode = data.get("systemPromptMode", "append")
    if raw_mode == "replace":
        mode = "replace"
    elif raw_mode != "append":
        bad("systemPromptMode", f"expected append or replace, got {raw_mode!r}")
    if problems or not isinstance(name, str):
        raise DefinitionError(problems)
    return AgentDefinition(
        name=name,
        description=description.strip(),
        enabled=enabled,
        model=model,
        thinking=thinking,
        tools=tools,
        exclude_tools=exclude_tools,
        no_tools=no_tools,
        system_prompt_mode=mode,
        agents=agents,
        system_prompt=body.strip(),
        layer=layer,
        path=path,
    )


def _split_front_matter(text: str, path: str) -> tuple[str, str]:
    lines = text.removeprefix("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].rstrip() != "---":
        raise DefinitionError(
            [f"{path}: no front matter; a definition begins with a `---` line, YAML, and `---`"]
        )
    for i, line in enumerate(lines[1:], start=1):
        if line.rstrip() == "---":
            return "".join(lines[1:i]), "".join(lines[i + 1 :])
    raise DefinitionError([f"{path}: the front matter opened on line 1 is never closed by `---`"])


def _load_front_matter(front: str, path: str) -> dict[Any, Any]:
    try:
        node = yaml.compose(front, Loader=yaml.SafeLoader)
        data = yaml.safe_load(front)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        what = getattr(exc, "problem", None) or str(exc)
        raise DefinitionError([f"{path}: front matter is not valid YAML{where}: {what}"]) from None
    if data is None:
        raise DefinitionError([f"{path}: `name`: missing; every definition needs a name"])
    if not isinstance(data, dict) or not isinstance(node, yaml.MappingNode):
        raise DefinitionError([f"{path}: front matter must be a mapping of fields"])
    seen: set[str] = set()
    for key_node, _ in node.value:
        key = str(key_node.value)
        if key in seen:
            raise DefinitionError([f"{path}: `{key}`: given more than once"])
        seen.add(key)
    return data


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


def _typed(
    data: Mapping[Any, Any], key: str, kind: type[_T], default: _T, bad: Callable[[str, str], None]
) -> _T:
    if key not in data:
        return default
    value = data[key]
    if isinstance(value, kind):
        return value
    bad(key, f"expected {'true or false' if kind is bool else 'a string'}, got {_kind(value)}")
    return default


def _model(value: object, bad: Callable[[str, str], None]) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        bad("model", f"expected provider/modelId, got {_kind(value)}")
        return None
    try:
        ModelRef.parse(value)
    except ValueError as exc:
        bad("model", str(exc))
        return None
    return value.strip()


def _thinking(value: object, bad: Callable[[str, str], None]) -> ThinkingLevel | None:
    if value is None:
        return None
    if value is False:  # `thinking: false` (and YAML 1.1's bare `off`)
        return "off"
    for level in THINKING_LEVELS:
        if value == level and isinstance(value, str):
            return level
    bad("thinking", f"expected one of {', '.join(THINKING_LEVELS)} or false, got {value!r}")
    return None


def _names(
    data: Mapping[Any, Any], key: str, pattern: re.Pattern[str], bad: Callable[[str, str], None]
) -> tuple[str, ...]:
    value = data[key]
    if not isinstance(value, list):
        bad(key, f"expected a list such as [a, b], got {_kind(value)}")
        return ()
    names: list[str] = []
    for item in value:
        if not isinstance(item, str) or not pattern.match(item):
            bad(key, f"{item!r} is not a valid name (must match {pattern.pattern})")
        elif item in names:
            bad(key, f"{item!r} is listed twice")
        else:
            names.append(item)
    return tuple(names)


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
                f"definition {name!r} comes from the project {self.project_dir} "
                f"({hidden.path}), which is not trusted; definitions of an untrusted "
                f"project are not used. The user can trust it with "
                f"`pi-agents trust {self.project_dir}`."
            )
        choices = ", ".join(d.name for d in self.delegatable_by(delegator)) or "none"
        if found is None:
            raise DefinitionRefused(f"no agent definition named {name!r}; available: {choices}")
        if not found.enabled:
            raise DefinitionRefused(f"definition {name!r} is disabled; available: {choices}")
        if delegator is not None and not delegator.is_delegating:
            raise DefinitionRefused(f"definition {delegator.name!r} is a leaf and cannot delegate")
        if delegator is not None and found not in self.delegatable_by(delegator):
            raise DefinitionRefused(
                f"definition {delegator.name!r} may not delegate to {name!r}; "
                f"it may delegate to: {choices}"
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


def discover(home: Path, project_dir: Path | None, trusted: bool) -> Roster:
    """Read the three layers and check the result; every problem is reported in one
    `DefinitionError` and no partial roster is returned. An untrusted project's
    definitions are parsed only to be listed in `Roster.untrusted`."""
    problems: list[str] = []
    bundled = _load_layer(_bundled_sources(problems), "bundled", problems)
    global_dir = home / GLOBAL_AGENTS_DIR
    project: dict[str, AgentDefinition] = {}
    project_problems: list[str] = []
    project_path: str | None = None
    if project_dir is not None:
        project_path = os.path.realpath(project_dir)
        agents_dir = Path(project_path) / PROJECT_AGENTS_DIR
        # A project whose `.pi-agents` is the home itself has no separate project layer.
        if os.path.realpath(agents_dir) != os.path.realpath(global_dir):
            sink = problems if trusted else project_problems
            project = _load_layer(_dir_sources(agents_dir, sink), "project", sink)
    global_ = _load_layer(_dir_sources(global_dir, problems), "global", problems)
    effective = {**bundled, **(project if trusted else {}), **global_}
    untrusted = {} if trusted else {n: d for n, d in project.items() if n not in global_}
    problems.extend(_reference_problems(effective, untrusted, project_path))
    if problems:
        raise DefinitionError(problems)
    return Roster(
        definitions=MappingProxyType(effective),
        untrusted=MappingProxyType(untrusted),
        project_dir=project_path,
        untrusted_problems=tuple(project_problems),
    )


def _bundled_sources(problems: list[str]) -> list[_Source]:
    folder = resources.files("piagents.supervision").joinpath("bundled")
    try:
        entries = sorted(folder.iterdir(), key=lambda e: e.name)
    except OSError as exc:
        problems.append(f"{folder}: cannot read the bundled definitions: {exc}")
        return []
    return [
        (str(e), functools.partial(e.read_text, encoding="utf-8"))
        for e in entries
        if e.name.endswith(".md") and not e.name.startswith(".") and e.is_file()
    ]


def _dir_sources(folder: Path, problems: list[str]) -> list[_Source]:
    if not folder.exists():
        return []
    if not folder.is_dir():
        problems.append(f"{folder}: is not a directory")
        return []
    try:
        entries = sorted(folder.glob("*.md"))
    except OSError as exc:
        problems.append(f"{folder}: cannot read the directory: {exc.strerror or exc}")
        return []
    return [
        (str(p), functools.partial(p.read_text, encoding="utf-8"))
        for p in entries
        if not p.name.startswith(".") and p.is_file()
    ]


@functools.lru_cache(maxsize=256)
def _parsed(text: str, path: str, layer: Layer) -> AgentDefinition:
    """`parse_definition`, remembered by the file's text: every `list` and `delegate`
    reads the definitions again (edits count at once) but parses only what changed."""
    return parse_definition(text, path=path, layer=layer)


def _load_layer(
    sources: Iterable[_Source], layer: Layer, problems: list[str]
) -> dict[str, AgentDefinition]:
    found: dict[str, AgentDefinition] = {}
    for path, read in sources:
        try:
            definition = _parsed(read(), path, layer)
        except DefinitionError as exc:
            problems.extend(exc.problems)
            continue
        except UnicodeDecodeError:
            problems.append(f"{path}: is not UTF-8 text")
            continue
        except OSError as exc:
            problems.append(f"{path}: cannot be read: {exc.strerror or exc}")
            continue
        first = found.get(definition.name)
        if first is not None:
            problems.append(
                f"{path}: `name`: {definition.name!r} is also defined by {first.path} "
                f"in the {layer} layer"
            )
            continue
        found[definition.name] = definition
    return found


def _reference_problems(
    effective: Mapping[str, AgentDefinition],
    untrusted: Mapping[str, AgentDefinition],
    project_dir: str | None,
) -> list[str]:
    problems: list[str] = []
    for definition in effective.values():
        if not definition.enabled:
            continue  # a disabled definition delegates nothing
        for target_name in definition.agents:
            target = effective.get(target_name)
            if target is None and target_name in untrusted:
                why = f"is defined only by the untrusted project {project_dir}"
            elif target is None:
                why = "is not defined in any layer"
            elif not target.enabled:
                why = "is disabled"
            elif target.is_delegating:
                why = "delegates itself; depth is fixed at lead → delegating agent → leaf"
            else:
                continue
            problems.append(f"{definition.path}: `agents`: {target_name!r} {why}")
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
            text = _edit_front_matter(target.read_text(encoding="utf-8"), str(target), updates)
        except OSError as exc:
            raise DefinitionError([f"{target}: cannot be read: {exc.strerror or exc}"]) from exc
    else:
        target = home / GLOBAL_AGENTS_DIR / f"{definition.name}.md"
        if target.exists():
            raise DefinitionError(
                [f"{target}: exists and does not define {definition.name!r}; not overwritten"]
            )
        text = _render(definition, updates)
    written = parse_definition(text, path=str(target), layer="global")
    users = [] if roster is None or written.enabled else _delegating_to(roster, written.name)
    if users:
        raise DefinitionError(
            [
                f"{target}: `enabled`: {written.name!r} cannot be disabled while "
                f"{', '.join(users)} may delegate to it; disable those first"
            ]
        )
    if written.name != definition.name:
        raise DefinitionError([f"{target}: `name`: the file now defines {written.name!r}"])
    write_atomically(target, text)
    return written


def _delegating_to(roster: Roster, name: str) -> list[str]:
    return sorted(d.name for d in roster.definitions.values() if d.enabled and name in d.agents)


def _edit_front_matter(text: str, path: str, updates: Mapping[str, object]) -> str:
    """`text` with the given top-level front-matter values replaced or added, keeping
    every other line (comments too)."""
    front, body = _split_front_matter(text, path)
    data = _load_front_matter(front, path)
    rest = f"---\n{body}"
    node = yaml.compose(front, Loader=yaml.SafeLoader)
    if not isinstance(node, yaml.MappingNode) or node.flow_style:
        return f"---\n{_dump({**data, **updates})}{rest}"
    spans: list[tuple[int, int, str]] = []
    missing = dict(updates)
    for key_node, value_node in node.value:
        if key_node.value in missing:
            start, stop = value_node.start_mark.index, value_node.end_mark.index
            old = front[start:stop]
            lead = " " if start > 0 and front[start - 1] == ":" else ""
            trailing = old[len(old.rstrip()) :]
            spans.append((start, stop, lead + _scalar(missing.pop(key_node.value)) + trailing))
    for start, stop, new in sorted(spans, reverse=True):
        front = front[:start] + new + front[stop:]
    if front and not front.endswith("\n"):
        front += "\n"
    front += "".join(f"{key}: {_scalar(value)}\n" for key, value in missing.items())
    return f"---\n{front}{rest}"


def _scalar(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    plain = re.fullmatch(r"[A-Za-z0-9][\w./@+-]*", text) and yaml.safe_load(text) == text
    return text if plain else json.dumps(text, ensure_ascii=False)


def _render(definition: AgentDefinition, updates: Mapping[str, object]) -> str:
    d = definition
    front: dict[str, object] = {"name": d.name, "description": d.description}
    front.update({"enabled": d.enabled, "model": d.model, "thinking": d.thinking})
    front.update(updates)
    for key in ("model", "thinking"):
        if front[key] is None:
            del front[key]
    if d.tools is not None:
        front["tools"] = list(d.tools)
    if d.exclude_tools:
        front["excludeTools"] = list(d.exclude_tools)
    if d.no_tools:
        front["noTools"] = True
    if d.system_prompt_mode != "append":
        front["systemPromptMode"] = d.system_prompt_mode
    if d.agents:
        front["agents"] = list(d.agents)
    return f"---\n{_dump(front)}---\n\n{d.system_prompt}\n"


def _dump(data: Mapping[Any, object]) -> str:
    """Block-style front matter, one line per field, lists in flow style."""
    return "".join(f"{key}: {_value(value)}\n" for key, value in data.items())


def _value(value: object) -> str:
    if isinstance(value, list):
        return f"[{', '.join(_value(item) for item in value)}]"
    if value is None or isinstance(value, str | bool):
        return _scalar(value)
    return json.dumps(value, default=str, ensure_ascii=False)  # JSON is YAML
