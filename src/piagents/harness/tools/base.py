"""What a tool is, what it gets when it runs, and what it returns."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import jsonschema

from piagents.ai.messages import ImageContent
from piagents.ai.provider import ToolSpec
from piagents.harness.tools.quick_check import QuickPlan, quick_plan, surely_valid


class ToolError(Exception):
    """Raised by a tool to fail its call with a clear message (an error result)."""


@dataclass(frozen=True, slots=True)
class ToolResult:
    text: str
    details: Any = None
    is_error: bool = False
    images: tuple[ImageContent, ...] = ()


@dataclass(frozen=True, slots=True)
class ToolContext:
    """What a running tool may use: where it works and where it saves full outputs."""

    cwd: Path
    output_dir: Path  # full outputs of truncated results go here
    agent_id: str = ""
    call_id: str = ""
    aborted: asyncio.Event = field(default_factory=asyncio.Event)
    # Names of every tool call of the model turn this call belongs to (empty outside a turn).
    turn_calls: tuple[str, ...] = ()


class Tool(Protocol):
    name: str
    description: str
    parameters: dict[str, Any]
    prompt_snippet: str
    prompt_guidelines: Sequence[str]

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult: ...


_specs: dict[tuple[str, str, int], ToolSpec] = {}
_MAX_SPECS = 4096  # distinct tools remembered; more (generated ones) are made each time


def spec_of(tool: Tool) -> ToolSpec:
    """What a model is told of `tool`. One spec per distinct tool is made and shared:
    every model call of every Agent sends its tools' specs, and a thousand Agents'
    copies of the same eight were a thousand more objects for the collector to walk."""
    key = (tool.name, tool.description, id(tool.parameters))
    spec = _specs.get(key)
    if spec is None or spec.parameters is not tool.parameters:
        spec = ToolSpec(tool.name, tool.description, tool.parameters)
        if len(_specs) < _MAX_SPECS:
            _specs[key] = spec
    return spec


_validators: dict[
    int, tuple[dict[str, Any], jsonschema.Draft202012Validator, QuickPlan | None]
] = {}


def _validator(
    schema: dict[str, Any],
) -> tuple[jsonschema.Draft202012Validator, QuickPlan | None]:
    """One compiled validator, and its quick checks, per schema object (tools keep
    theirs for life)."""
    hit = _validators.get(id(schema))
    if hit is None or hit[0] is not schema:
        hit = (schema, jsonschema.Draft202012Validator(schema), quick_plan(schema))
        _validators[id(schema)] = hit
    return hit[1], hit[2]


def validation_error(tool: Tool, args: Any) -> str | None:
    """A clear message naming the offending field, or None when `args` fit the schema.

    A tool with `validates_arguments = True` checks its own arguments (its errors
    have a structure of their own) and is given any object."""
    if isinstance(args, dict) and getattr(tool, "validates_arguments", False):
        return None
    if not isinstance(args, dict):
        return f"Invalid arguments for {tool.name}: expected an object, got {type(args).__name__}."
    validator, plan = _validator(tool.parameters)
    if plan is not None and surely_valid(plan, args):
        return None
    error = jsonschema.exceptions.best_match(validator.iter_errors(args))
    if error is None:
        return None
    where = ".".join(str(p) for p in error.absolute_path)
    if error.validator == "required":
        return f"Invalid arguments for {tool.name}: {error.message}."
    if error.validator == "additionalProperties":
        return f"Invalid arguments for {tool.name}: {error.message}."
    field_name = where or "(root)"
    return f"Invalid arguments for {tool.name}: field '{field_name}': {error.message}."


def resolve_path(ctx: ToolContext, path: str) -> Path:
    if "\0" in path:  # the OS cannot take it: say so, not `ValueError: embedded null byte`
        raise ToolError(f"Invalid path {path!r}: it holds a NUL byte")
    p = Path(path).expanduser()
    return p if p.is_absolute() else ctx.cwd / p
