"""Tool-call arguments as plain JSON: what every call must be before it runs.

JSON parsers accept `NaN` and `Infinity` (and an overlong number becomes one),
`\\ud800` decodes to text that cannot be stored, Python callers can pass any
object, and a value nested thousands deep makes recursive code (validation,
the store, the next request) fail. Arguments are checked here once, without
recursion, before any tool sees them; providers use the same rules when they
parse a model's arguments.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import msgspec

from piagents.ai.messages import AssistantContent, AssistantMessage, ToolCall

MAX_DEPTH = 64  # objects and arrays inside one another; tools need a handful
INT_RANGE = (-(2**63), 2**63 - 1)  # what the store (and most JSON readers) can keep


@dataclass(frozen=True, slots=True)
class ArgumentProblem:
    """Why arguments cannot be used; `path` names the field (None: the whole value)."""

    path: str | None
    message: str

    def text(self, tool: str) -> str:
        """The error a model reads, in the form schema errors have."""
        where = f"field '{self.path}': " if self.path is not None else ""
        return f"Invalid arguments for {tool}: {where}{self.message}."


def argument_problem(args: object) -> ArgumentProblem | None:
    """The first thing that makes `args` unusable as JSON arguments, or None."""
    stack: list[tuple[tuple[str, ...], object, int]] = [((), args, 0)]
    while stack:
        path, value, depth = stack.pop()
        problem = _value_problem(value)
        if problem is not None:
            return ArgumentProblem(".".join(path) or "(root)", problem)
        if isinstance(value, dict | list | tuple):
            if depth >= MAX_DEPTH:
                return ArgumentProblem(None, f"values are nested deeper than {MAX_DEPTH} levels")
            items: Any = value.items() if isinstance(value, dict) else enumerate(value)
            children = []
            for key, child in items:
                if isinstance(value, dict):
                    where = ".".join(path) or "(root)"
                    if not isinstance(key, str):
                        return ArgumentProblem(where, f"the key {key!r:.40} is not text")
                    if _unstorable(key):
                        return ArgumentProblem(where, f"the key {_shown(key)} {_SURROGATE}")
                children.append(((*path, str(key)), child, depth + 1))
            stack.extend(reversed(children))  # report the first bad field first
    return None


_SURROGATE = "has an unpaired surrogate code point, which is not valid text"


def _value_problem(value: object) -> str | None:
    if value is None or isinstance(value, bool | dict | list | tuple):
        return None
    if isinstance(value, str):
        return f"the text {_SURROGATE}" if _unstorable(value) else None
    if isinstance(value, int):
        low, high = INT_RANGE
        return None if low <= value <= high else "the number is too large"
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{value} is not a finite number"
    return f"a {type(value).__name__} is not a JSON value"


def _unstorable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _shown(key: str) -> str:
    return json.dumps(key)[:40]


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:20]} is too large a number")
    return value


def loads_arguments(raw: str) -> object:
    """`raw` parsed as JSON arguments; ValueError when it is not JSON or breaks the rules."""
    try:
        value = json.loads(raw, parse_constant=_reject_constant, parse_float=_finite)
    except RecursionError as exc:
        raise ValueError(f"values are nested deeper than {MAX_DEPTH} levels") from exc
    problem = argument_problem(value)
    if problem is not None:
        raise ValueError(problem.text("the tool"))
    return value


def storable(message: AssistantMessage) -> tuple[AssistantMessage, dict[int, ArgumentProblem]]:
    """`message` with the arguments of calls that are not plain JSON left out (so it can
    be recorded and sent back), and each such call's problem by its index among the calls."""
    problems: dict[int, ArgumentProblem] = {}
    content: list[AssistantContent] = []
    index = 0
    for block in message.content:
        if isinstance(block, ToolCall):
            problem = argument_problem(block.args)
            if problem is not None:
                problems[index] = problem
                block = msgspec.structs.replace(block, args={})
            index += 1
        content.append(block)
    if not problems:
        return message, problems
    return msgspec.structs.replace(message, content=tuple(content)), problems
