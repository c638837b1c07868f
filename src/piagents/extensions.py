"""Extensions: Python files that add tools to Agents.

An extension is a `.py` file (or an importable module name) with a function
`register(api)`; it calls `api.add_tool(tool)` for each tool it offers. The
paths come from `"pi-agents": {"extensions": [...]}` in settings.json. An
owned Agent can use only tools its owner can use.

An extension that fails in any way, exiting included, is a warning naming it and
loads nothing; a tool that is malformed (its `parameters` not a valid JSON schema
of an object), named like a built-in tool or like another extension's, is a
warning and is left out. A tool is kept as checked, so it cannot change later.
"""

from __future__ import annotations

import copy
import importlib
import importlib.util
import inspect
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema

from piagents.harness.tools import BUILTIN_TOOL_NAMES
from piagents.harness.tools.base import Tool, ToolContext, ToolResult

# Built-in tools, and those the runtime gives by face or role: never an extension's.
RESERVED_NAMES = frozenset({*BUILTIN_TOOL_NAMES, "agent", "ask_owner", "submit_result"})
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")


class ToolRefused(ValueError):
    """A tool `add_tool` does not accept; the message says why."""


@dataclass(slots=True)  # not frozen: `Tool` declares plain attributes; nothing assigns them
class ExtensionTool:
    """An extension's tool as it was checked when added."""

    name: str
    description: str
    parameters: dict[str, Any]
    prompt_snippet: str
    prompt_guidelines: Sequence[str]  # a tuple
    tool: Tool
    source: str

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            out: object = self.tool.execute(args, ctx)
            if inspect.isawaitable(out):
                out = await out
        except SystemExit as exc:  # a tool does not decide when pi-agents ends either
            return ToolResult(
                f"Tool {self.name} (extension {self.source}) tried to exit the program "
                f"(SystemExit: {exc}); nothing was ended.",
                is_error=True,
            )
        if not isinstance(out, ToolResult):
            return ToolResult(
                f"Tool {self.name} (extension {self.source}) returned "
                f"{type(out).__name__}, not a ToolResult.",
                is_error=True,
            )
        return out


def checked_tool(tool: Tool, source: str) -> ExtensionTool:
    """`tool` as an `ExtensionTool`, or `ToolRefused` saying what is wrong with it."""
    name = getattr(tool, "name", None)
    if not isinstance(name, str) or not _NAME.match(name):
        raise ToolRefused(f"`name` must match {_NAME.pattern}")
    if name in RESERVED_NAMES:
        raise ToolRefused("the name of a built-in tool, which an extension cannot replace")
    description = getattr(tool, "description", None)
    if not isinstance(description, str):
        raise ToolRefused("`description` must be a string")
    if not callable(getattr(tool, "execute", None)):
        raise ToolRefused("`execute(args, ctx)` is missing")
    snippet = getattr(tool, "prompt_snippet", "")
    guidelines = getattr(tool, "prompt_guidelines", ())
    if not isinstance(snippet, str) or isinstance(guidelines, str):
        raise ToolRefused("`prompt_snippet` must be a string, `prompt_guidelines` a list of them")
    guidelines = tuple(guidelines)
    if not all(isinstance(g, str) for g in guidelines):
        raise ToolRefused("`prompt_guidelines` must be a list of strings")
    return ExtensionTool(
        name,
        description,
        _schema(getattr(tool, "parameters", None)),
        snippet,
        guidelines,
        tool,
        source,
    )


def _schema(parameters: object) -> dict[str, Any]:
    if not isinstance(parameters, dict):
        raise ToolRefused(
            f"`parameters` must be a JSON schema object, got {type(parameters).__name__}"
        )
    try:
        schema: dict[str, Any] = json.loads(json.dumps(parameters))  # a copy, and JSON
    except (TypeError, ValueError, RecursionError) as exc:
        raise ToolRefused(f"`parameters` is not JSON: {exc}") from None
    if schema.get("type") != "object":
        raise ToolRefused('`parameters` must have "type": "object"')
    try:
        jsonschema.Draft202012Validator.check_schema(copy.deepcopy(schema))
    except jsonschema.SchemaError as exc:
        raise ToolRefused(f"`parameters` is not a valid JSON schema: {exc.message}") from None
    except RecursionError:
        raise ToolRefused("`parameters` is nested too deeply") from None
    return schema


class ExtensionApi:
    """What `register(api)` receives."""

    def __init__(self, source: str, taken: dict[str, str] | None = None) -> None:
        self.source = source
        self.tools: list[Tool] = []
        self.warnings: list[str] = []
        self._taken = taken if taken is not None else {}  # tool name -> extension

    def add_tool(self, tool: Tool) -> None:
        """Add `tool`; one that is malformed or whose name is taken becomes a warning."""
        name = getattr(tool, "name", None)
        shown = repr(name) if isinstance(name, str) and len(name) <= 64 else "(unnamed)"
        try:
            checked = checked_tool(tool, self.source)
            if checked.name in self._taken:
                raise ToolRefused(f"already given by extension {self._taken[checked.name]}")
        except ToolRefused as exc:
            self.warnings.append(f"extension {self.source}: tool {shown}: {exc}; not loaded.")
            return
        self._taken[checked.name] = self.source
        self.tools.append(checked)


def _module(spec: str, base: Path) -> ModuleType:
    path = Path(spec).expanduser()
    if not path.is_absolute():
        path = base / path
    if path.suffix == ".py" or path.exists():
        if not path.is_file():
            raise FileNotFoundError(f"no such file {path}")
        name = f"piagents_extension_{abs(hash(str(path)))}"
        cached = sys.modules.get(name)
        if cached is not None:
            return cached
        loader_spec = importlib.util.spec_from_file_location(name, path)
        if loader_spec is None or loader_spec.loader is None:
            raise ImportError(f"cannot load {path}")
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[name] = module
        loader_spec.loader.exec_module(module)
        return module
    return importlib.import_module(spec)


def load_extensions(specs: Sequence[str], base: Path) -> tuple[list[Tool], list[str]]:
    """Tools of every extension that loads, and a warning for each that does not."""
    tools: list[Tool] = []
    warnings: list[str] = []
    taken: dict[str, str] = {}
    for spec in specs:
        api = ExtensionApi(spec, dict(taken))
        try:
            module = _module(spec, base)
            register = getattr(module, "register", None)
            if not callable(register):
                raise TypeError("it has no register(api) function")
            register(api)
        except SystemExit as exc:  # an extension does not decide when pi-agents ends
            warnings.append(
                f"extension {spec}: it tried to exit the program (SystemExit: {exc}); not loaded."
            )
            continue
        except Exception as exc:
            warnings.append(f"extension {spec}: {type(exc).__name__}: {exc}; not loaded.")
            continue
        warnings.extend(api.warnings)
        tools.extend(api.tools)
        taken.update({t.name: spec for t in api.tools})
    return tools, warnings
