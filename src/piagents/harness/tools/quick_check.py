"""A quick yes for tool arguments that surely fit a simple schema.

Every tool call's arguments are checked against the tool's JSON schema; the general
validator costs about 0.1 ms a call, as much as a spawn's store commit. Most tools'
schemas are flat objects of strings, integers, numbers, booleans and string enums.
`quick_plan` turns such a schema into plain checks once; `surely_valid` answers True
only when the arguments certainly fit, and False whenever it is unsure (a schema it
does not know, a float where an integer is asked for, a missing field...): the
general validator then decides and words the error, so no answer changes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Check = Callable[[Any], bool]

_OBJECT_KEYS = {"type", "properties", "required", "additionalProperties", "description", "title"}
_VALUE_KEYS = {
    "type",
    "enum",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "minLength",
    "description",
    "title",
}


class QuickPlan:
    """A flat object schema as checks: its required names, a check per property, and
    whether other names are allowed."""

    def __init__(self, required: tuple[str, ...], checks: dict[str, Check], others: bool) -> None:
        self.required = required
        self.checks = checks
        self.others = others


def _is_string(v: Any) -> bool:
    return type(v) is str


def _is_integer(v: Any) -> bool:
    return type(v) is int


def _is_number(v: Any) -> bool:
    return type(v) is int or (type(v) is float and v == v and abs(v) != float("inf"))


def _is_boolean(v: Any) -> bool:
    return type(v) is bool


def _is_string_list(v: Any) -> bool:
    return type(v) is list and all(type(x) is str for x in v)


_TYPES: dict[str, Check] = {
    "string": _is_string,
    "integer": _is_integer,
    "number": _is_number,
    "boolean": _is_boolean,
}


def _value_check(schema: Any) -> Check | None:
    if not isinstance(schema, dict):
        return None
    if set(schema) == {"anyOf", "description"} or set(schema) == {"anyOf"}:
        options = [_option_check(s) for s in schema["anyOf"]]
        if not options or any(o is None for o in options):
            return None
        checks = [o for o in options if o is not None]
        return lambda v: any(c(v) for c in checks)
    kind_name = schema.get("type")
    if not set(schema) <= _VALUE_KEYS or not isinstance(kind_name, str) or kind_name not in _TYPES:
        return None
    kind = _TYPES[schema["type"]]
    enum = schema.get("enum")
    if enum is not None:
        if schema["type"] != "string" or not all(type(e) is str for e in enum):
            return None
        allowed = frozenset(enum)
        return lambda v: type(v) is str and v in allowed
    low, high = schema.get("minimum"), schema.get("maximum")
    above, shortest = schema.get("exclusiveMinimum"), schema.get("minLength")
    for bound in (low, high, above):
        if bound is not None and type(bound) not in (int, float):
            return None
    if shortest is not None and (type(shortest) is not int or schema["type"] != "string"):
        return None
    if low is None and high is None and above is None and shortest is None:
        return kind
    return lambda v: (
        kind(v)
        and (low is None or v >= low)
        and (high is None or v <= high)
        and (above is None or v > above)
        and (shortest is None or len(v) >= shortest)
    )


def _option_check(schema: Any) -> Check | None:
    if schema == {"type": "array", "items": {"type": "string"}}:
        return _is_string_list
    if isinstance(schema, dict) and set(schema) == {"type"} and _TYPES.get(str(schema["type"])):
        return _TYPES[schema["type"]]
    return None


def quick_plan(schema: dict[str, Any]) -> QuickPlan | None:
    """The checks of a flat object schema, or None for any other schema."""
    if not set(schema) <= _OBJECT_KEYS or schema.get("type") != "object":
        return None
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    others = schema.get("additionalProperties", True)
    if (
        not isinstance(properties, dict)
        or not isinstance(required, list)
        or others
        not in (
            True,
            False,
        )
    ):
        return None
    if not all(type(r) is str for r in required):
        return None
    checks: dict[str, Check] = {}
    for name, sub in properties.items():
        check = _value_check(sub)
        if check is None:
            return None
        checks[name] = check
    return QuickPlan(tuple(required), checks, bool(others))


def surely_valid(plan: QuickPlan, args: dict[str, Any]) -> bool:
    """True only when `args` certainly fit the schema `plan` was made from."""
    for name in plan.required:
        if name not in args:
            return False
    checks = plan.checks
    for name, value in args.items():
        check = checks.get(name)
        if check is None:
            if not plan.others:
                return False
        elif not check(value):
            return False
    return True
