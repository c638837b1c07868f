"""The `program` tool's arguments: its JSON schema, and each call checked into one typed
request (pure). What the schema cannot say (which parameters go with which action,
a Program's code being non-empty) is checked here, with the tool's own error texts."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from piagents.programs import texts

Action: TypeAlias = Literal["run", "wait", "list", "stop"]
ACTIONS: tuple[Action, ...] = ("run", "wait", "list", "stop")
PARAMETERS_OF: dict[Action, frozenset[str]] = {
    "run": frozenset({"code", "background", "timeout"}),
    "wait": frozenset({"target", "timeout"}),
    "list": frozenset({"limit", "offset"}),
    "stop": frozenset({"target"}),
}
WAIT_DEFAULT, WAIT_MIN, WAIT_MAX = 30.0, 10.0, 3600.0
LIST_DEFAULT, LIST_MAX = 20, 200


@dataclass(frozen=True, slots=True)
class Run:
    code: str
    background: bool = False
    timeout: float | None = None  # seconds; expiry stops the Program


@dataclass(frozen=True, slots=True)
class Wait:
    targets: tuple[str, ...] | None = None  # None: running and unreturned Programs
    timeout: float = WAIT_DEFAULT


@dataclass(frozen=True, slots=True)
class List:
    limit: int = LIST_DEFAULT
    offset: int = 0


@dataclass(frozen=True, slots=True)
class Stop:
    target: str


ProgramCall: TypeAlias = Run | Wait | List | Stop


@dataclass(frozen=True, slots=True)
class Refused:
    """A call the tool refuses: `text` is its error result."""

    text: str


def _or_null(*shapes: dict[str, Any], description: str) -> dict[str, Any]:
    """An optional parameter: one of `shapes`, or null for "not given" (SDK callers pass
    `"timeout": None`, and models often send null for what they leave out)."""
    return {"anyOf": [*shapes, {"type": "null"}], "description": description}


@functools.cache
def parameters() -> dict[str, Any]:
    """The JSON schema of the tool's arguments (one shared, read-only object)."""
    d = texts.PARAMETER_DESCRIPTIONS
    return {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": list(ACTIONS), "description": d["action"]},
            "code": _or_null({"type": "string"}, description=d["code"]),
            "background": _or_null({"type": "boolean"}, description=d["background"]),
            "timeout": _or_null(
                {"type": "number", "exclusiveMinimum": 0}, description=d["timeout"]
            ),
            "target": _or_null(
                {"type": "string"},
                {"type": "array", "items": {"type": "string"}},
                description=d["target"],
            ),
            "limit": _or_null(
                {"type": "integer", "minimum": 1, "maximum": LIST_MAX}, description=d["limit"]
            ),
            "offset": _or_null({"type": "integer", "minimum": 0}, description=d["offset"]),
        },
        "required": ["action"],
        "additionalProperties": False,
    }


def parse(args: dict[str, Any]) -> ProgramCall | Refused:
    """One call's arguments (already valid against `parameters()`) as a request; a
    parameter given as null counts as not given."""
    args = {k: v for k, v in args.items() if v is not None}
    action = args.get("action")
    if action not in ACTIONS:
        return Refused(texts.invalid(f"unknown action {action!r}."))
    extra = sorted(set(args) - {"action"} - PARAMETERS_OF[action])
    if extra:
        named = ", ".join(f"`{k}`" for k in extra)
        return Refused(texts.invalid(f"{action} does not take {named}."))
    if action == "run":
        return _run(args)
    if action == "wait":
        return _wait(args)
    if action == "list":
        return List(int(args.get("limit", LIST_DEFAULT)), int(args.get("offset", 0)))
    target = args.get("target")
    if target is None:
        return Refused(texts.invalid("stop needs `target`."))
    if not isinstance(target, str) or not target.strip():
        return Refused(texts.invalid("`target` for stop must be one Program ID or prefix."))
    return Stop(target.strip())


def _run(args: dict[str, Any]) -> Run | Refused:
    code = args.get("code")
    if code is None:
        return Refused(texts.invalid("run needs `code`."))
    if not isinstance(code, str) or not code.strip():
        return Refused(texts.invalid("`code` must be non-empty Python."))
    if "\0" in code:
        return Refused(texts.invalid("`code` must not contain NUL characters."))
    timeout = args.get("timeout")
    if timeout is not None and not _finite_positive(timeout):
        return Refused(texts.invalid("`timeout` must be a positive number of seconds."))
    return Run(code, bool(args.get("background", False)), None if timeout is None else timeout)


def _wait(args: dict[str, Any]) -> Wait | Refused:
    timeout = args.get("timeout", WAIT_DEFAULT)
    if not _finite_positive(timeout) or not WAIT_MIN <= timeout <= WAIT_MAX:
        return Refused(
            texts.invalid(f"`timeout` for wait must be from {WAIT_MIN:g} to {WAIT_MAX:g} seconds.")
        )
    target = args.get("target")
    if target is None:
        return Wait(None, float(timeout))
    targets = [target] if isinstance(target, str) else list(target)
    cleaned = tuple(t.strip() for t in targets)
    if not cleaned or any(not t for t in cleaned):
        return Refused(texts.invalid("`target` must name at least one Program."))
    return Wait(tuple(dict.fromkeys(cleaned)), float(timeout))


def _finite_positive(value: object) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )
