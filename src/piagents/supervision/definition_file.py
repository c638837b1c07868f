"""One agent definition file: a Markdown file with YAML front matter, parsed with bounds.

A definition names a kind of managed agent; its body becomes the agent's system
prompt::

    ---
    name: scout
    description: Finds where things are in the code base; use before changing code.
    thinking: low
    tools: [read, grep, find, ls]
    ---
    You are a scout. ...

A definition may come from a project nobody has trusted yet, so reading and parsing
are bounded: the file is read only when it is a regular file of at most
`MAX_FILE_BYTES`, its front matter may be at most `MAX_FRONT_MATTER_BYTES`, nested
at most `MAX_DEPTH` deep, and expand (aliases included) to at most `MAX_NODES`
values. A problem names the file and the field and never echoes a long value.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, TypeVar

import yaml
from yaml.composer import ComposerError

from piagents.ai.models import THINKING_LEVELS, ModelRef, ThinkingLevel
from piagents.regular_file import FileTooLarge, NotARegularFile, read_regular_file
from piagents.supervision import error_texts

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
MAX_FILE_BYTES = 1_048_576
MAX_FRONT_MATTER_BYTES = 65_536
MAX_DEPTH = 16
MAX_NODES = 10_000
_SHOWN_CHARS = 60
_TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
_T = TypeVar("_T")


class DefinitionError(ValueError):
    """Invalid agent definitions; each of `problems` names the file and the field."""

    def __init__(self, problems: Iterable[str]) -> None:
        self.problems = tuple(problems)
        if len(self.problems) == 1:
            message = self.problems[0]
        else:
            message = error_texts.problems_listed(self.problems)
        super().__init__(message)


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


def parse_definition(
    text: str, *, path: str, layer: Layer, with_body: bool = True
) -> AgentDefinition:
    """Parse one definition file's text; every problem in it is one `DefinitionError`.

    `model`, `thinking` and `tools` may be `null` (the same as absent); YAML `false`
    for `thinking` means `off`.
    """
    front, body = split_front_matter(text, path)
    data = load_front_matter(front, path)
    problems: list[str] = []

    def bad(key: str, what: str) -> None:
        problems.append(error_texts.field_problem(path, key, what))

    for key in data:
        if key not in FIELDS:
            bad(_field_name(key), error_texts.unknown_field(FIELDS))
    name = data.get("name")
    if "name" not in data:
        bad("name", error_texts.NAME_MISSING)
    elif not isinstance(name, str):
        bad("name", error_texts.expected_type(False, _kind(name)))
    elif not NAME_PATTERN.match(name):
        bad("name", error_texts.name_mismatch(shown(name), NAME_PATTERN.pattern))
    description = _typed(data, "description", str, "", bad)
    enabled = _typed(data, "enabled", bool, True, bad)
    no_tools = _typed(data, "noTools", bool, False, bad)
    model = _model(data.get("model"), bad)
    thinking = _thinking(data.get("thinking"), bad)
    tools = None if data.get("tools") is None else _names(data, "tools", _TOOL_NAME, bad)
    exclude_tools = _names(data, "excludeTools", _TOOL_NAME, bad) if "excludeTools" in data else ()
    agents = _names(data, "agents", NAME_PATTERN, bad) if "agents" in data else ()
    if isinstance(name, str) and name in agents:
        bad("agents", error_texts.delegates_to_itself(shown(name)))
    mode: SystemPromptMode = "append"
    raw_mode = data.get("systemPromptMode", "append")
    if raw_mode == "replace":
        mode = "replace"
    elif raw_mode != "append":
        bad("systemPromptMode", error_texts.bad_prompt_mode(shown(raw_mode)))
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
        system_prompt=body.strip() if with_body else "",
        layer=layer,
        path=path,
    )


def read_definition_text(path: str | os.PathLike[str]) -> str:
    """The text of a definition file, read with the bounds of the module docstring; any
    problem is a `DefinitionError` naming the file."""
    where = os.fsdecode(path)
    try:
        data = read_regular_file(path, MAX_FILE_BYTES)
    except FileTooLarge:
        problem = error_texts.definition_too_large(where, MAX_FILE_BYTES >> 20)
        raise DefinitionError([problem]) from None
    except NotARegularFile:
        raise DefinitionError([error_texts.not_a_regular_file(where)]) from None
    except OSError as exc:
        raise DefinitionError([error_texts.file_unreadable(where, exc.strerror or exc)]) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise DefinitionError([error_texts.not_utf8(where)]) from None


def split_front_matter(text: str, path: str) -> tuple[str, str]:
    """The front matter between the `---` lines, and the body after them."""
    lines = text.removeprefix("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].rstrip() != "---":
        raise DefinitionError([error_texts.no_front_matter(path)])
    for i, line in enumerate(lines[1:], start=1):
        if line.rstrip() == "---":
            front = "".join(lines[1:i])
            if len(front.encode("utf-8", "surrogatepass")) > MAX_FRONT_MATTER_BYTES:
                limit_kib = MAX_FRONT_MATTER_BYTES >> 10
                raise DefinitionError([error_texts.front_matter_too_large(path, limit_kib)])
            return front, "".join(lines[i + 1 :])
    raise DefinitionError([error_texts.front_matter_unclosed(path)])


class _BoundedLoader(yaml.SafeLoader):
    """The safe loader, refusing documents nested deeper than `MAX_DEPTH` or expanding,
    aliases counted as often as they are used, to more than `MAX_NODES` values."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._sizes: dict[int, int] = {}  # id(node) -> values it expands to

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            return super().compose_node(parent, index)  # counted where it is used, below
        mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise ComposerError(None, None, error_texts.nested_too_deep(MAX_DEPTH), mark)
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        if node is None:
            return None
        children: list[yaml.Node] = []
        if isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        elif isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        size = 1 + sum(self._sizes.get(id(child), 1) for child in children)
        if size > MAX_NODES:
            problem = error_texts.expands_too_far(MAX_NODES)
            raise ComposerError(None, None, problem, mark)
        self._sizes[id(node)] = size
        return node


def load_front_matter(front: str, path: str) -> dict[Any, Any]:
    """The front matter as a mapping, parsed with bounds; duplicate fields are refused."""
    loader = _BoundedLoader(front)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else None
        what = getattr(exc, "problem", None) or str(exc)
        raise DefinitionError([error_texts.invalid_yaml(path, line, what)]) from None
    except ValueError:  # an integer of more digits than Python converts
        raise DefinitionError([error_texts.number_too_long(path)]) from None
    finally:
        loader.dispose()
    if data is None:
        raise DefinitionError([error_texts.field_problem(path, "name", error_texts.NAME_MISSING)])
    if not isinstance(data, dict) or not isinstance(node, yaml.MappingNode):
        raise DefinitionError([error_texts.front_matter_not_a_mapping(path)])
    seen: set[str] = set()
    for key_node, _ in node.value:
        if not isinstance(key_node, yaml.ScalarNode):
            raise DefinitionError([error_texts.field_names_not_plain(path)])
        key = str(key_node.value)
        if key in seen:
            problem = error_texts.field_problem(path, _field_name(key), error_texts.GIVEN_TWICE)
            raise DefinitionError([problem])
        seen.add(key)
    return data


def shown(value: object) -> str:
    """A value as a problem may quote it: short scalars in full, anything else by kind."""
    if value is None or isinstance(value, str | bool | int | float):
        text = repr(value)
        if len(text) <= _SHOWN_CHARS:
            return text
        return error_texts.a_value_of(_kind(value), len(text))
    return error_texts.a_value(_kind(value))


def _field_name(key: object) -> str:
    text = str(key) if isinstance(key, str | bool | int | float) or key is None else _kind(key)
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"


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
    bad(key, error_texts.expected_type(kind is bool, _kind(value)))
    return default


def _model(value: object, bad: Callable[[str, str], None]) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        bad("model", error_texts.expected_model(_kind(value)))
        return None
    try:
        ModelRef.parse(value)
    except ValueError as exc:
        bad("model", str(exc) if len(value) <= _SHOWN_CHARS else error_texts.EXPECTED_MODEL)
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
    bad("thinking", error_texts.bad_thinking(THINKING_LEVELS, shown(value)))
    return None


def _names(
    data: Mapping[Any, Any], key: str, pattern: re.Pattern[str], bad: Callable[[str, str], None]
) -> tuple[str, ...]:
    value = data[key]
    if not isinstance(value, list):
        bad(key, error_texts.expected_list(_kind(value)))
        return ()
    names: list[str] = []
    for item in value:
        if not isinstance(item, str) or not pattern.match(item):
            bad(key, error_texts.invalid_name(shown(item), pattern.pattern))
        elif item in names:
            bad(key, error_texts.listed_twice(shown(item)))
        else:
            names.append(item)
    return tuple(names)


# ---- writing one file's front matter -------------------------------------------


def edit_front_matter(text: str, path: str, updates: Mapping[str, object]) -> str:
    """`text` with the given top-level front-matter values replaced or added, keeping
    every other line (comments too)."""
    front, body = split_front_matter(text, path)
    data = load_front_matter(front, path)
    rest = f"---\n{body}"
    node = yaml.compose(front, Loader=_BoundedLoader)
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


def render_definition(definition: AgentDefinition, updates: Mapping[str, object]) -> str:
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
