"""The quick check says yes only to arguments the JSON schema validator accepts."""

from __future__ import annotations

import itertools
from typing import Any

import jsonschema
import pytest

from piagents.agents.tool import parameters as agent_parameters
from piagents.harness.tools import builtin_tools
from piagents.harness.tools.quick_check import quick_plan, surely_valid
from piagents.supervision.requests import parameters as supervision_parameters

SCHEMAS = {
    "agent": agent_parameters(),
    "supervision": supervision_parameters(),
    **{tool.name: tool.parameters for tool in builtin_tools()},
}

# Values of every JSON kind, and the edges the general validator treats with care.
VALUES: list[Any] = [
    "",
    "spawn",
    "wait",
    "fork",
    "steer",
    "high",
    "idle",
    0,
    1,
    -1,
    9,
    10,
    200,
    201,
    3600,
    3601,
    1.0,
    1.5,
    10.5,
    float("nan"),
    float("inf"),
    True,
    False,
    None,
    [],
    ["a", "b"],
    ["a", 1],
    {},
    {"a": 1},
]


def argument_sets(schema: dict[str, Any]) -> list[dict[str, Any]]:
    names = [*schema.get("properties", {}), "unknown"]
    base = {name: "x" for name in schema.get("required", [])}  # strings, as most ask
    sets: list[dict[str, Any]] = [{}, base]
    for name in names:  # each name alone with each value, beside the required ones
        for value in VALUES:
            sets.append({name: value})
            sets.append({"action": "spawn", name: value})
            sets.append({**base, name: value})
    for a, b in itertools.combinations(names[:6], 2):
        for va, vb in itertools.product(VALUES[:8], VALUES[6:14]):
            sets.append({a: va, b: vb})
    return sets


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_a_quick_yes_is_always_the_validators_yes(name: str) -> None:
    schema = SCHEMAS[name]
    plan = quick_plan(schema)
    if plan is None:
        pytest.skip(f"{name}: not a flat schema, the validator alone decides")
    validator = jsonschema.Draft202012Validator(schema)
    said_yes = 0
    for args in argument_sets(schema):
        if surely_valid(plan, args):
            said_yes += 1
            assert validator.is_valid(args), args
    assert said_yes > 0


def test_the_agent_tool_and_the_file_tools_get_quick_checks() -> None:
    for name in ("agent", "read", "write", "edit", "bash", "ls"):
        if name in SCHEMAS:
            assert quick_plan(SCHEMAS[name]) is not None, name


def test_anything_unsure_goes_to_the_validator() -> None:
    plan = quick_plan(
        {
            "type": "object",
            "properties": {"n": {"type": "integer", "minimum": 1}},
            "required": ["n"],
            "additionalProperties": False,
        }
    )
    assert plan is not None
    assert surely_valid(plan, {"n": 2})
    assert not surely_valid(plan, {"n": 2.0})  # valid JSON Schema, but left to the validator
    assert not surely_valid(plan, {"n": 0})
    assert not surely_valid(plan, {"n": True})
    assert not surely_valid(plan, {})
    assert not surely_valid(plan, {"n": 2, "m": 1})
    assert quick_plan({"type": "object", "properties": {"x": {"type": ["string", "null"]}}}) is None
    assert quick_plan({"type": "object", "oneOf": []}) is None
    assert quick_plan({"type": "array"}) is None
