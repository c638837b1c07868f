"""What the `program` tool accepts: each action's arguments, checked into one request,
and the errors for what it refuses; targets by ID or unique prefix."""

from __future__ import annotations

import jsonschema
import pytest

from piagents.programs import addressing, calls
from piagents.programs.calls import List, Refused, Run, Stop, Wait


def test_the_schema_is_valid_and_takes_only_the_documents_parameters() -> None:
    schema = calls.parameters()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert set(schema["properties"]) == {
        "action",
        "code",
        "background",
        "timeout",
        "target",
        "limit",
        "offset",
    }
    validator = jsonschema.Draft202012Validator(schema)
    assert not list(validator.iter_errors({"action": "run", "code": "return 1"}))
    assert list(validator.iter_errors({"action": "run", "nonsense": 1}))
    assert list(validator.iter_errors({"action": "list", "limit": 201}))
    assert list(validator.iter_errors({"action": "exec"}))


@pytest.mark.parametrize(
    ("args", "request_"),
    [
        ({"action": "run", "code": "return 1"}, Run("return 1")),
        (
            {"action": "run", "code": "x", "background": True, "timeout": 2.5},
            Run("x", True, 2.5),
        ),
        ({"action": "wait"}, Wait(None, 30.0)),
        ({"action": "wait", "target": "0192abcd", "timeout": 10}, Wait(("0192abcd",), 10.0)),
        ({"action": "wait", "target": ["a1", " a1 ", "b2"]}, Wait(("a1", "b2"), 30.0)),
        ({"action": "list"}, List(20, 0)),
        ({"action": "list", "limit": 5, "offset": 10}, List(5, 10)),
        ({"action": "stop", "target": " 0192 "}, Stop("0192")),
    ],
)
def test_each_action_becomes_one_request(args: dict, request_: object) -> None:
    assert calls.parse(args) == request_


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ({"action": "run"}, "Invalid program call: run needs `code`."),
        (
            {"action": "run", "code": "  \n"},
            "Invalid program call: `code` must be non-empty Python.",
        ),
        (
            {"action": "run", "code": "a\0b"},
            "Invalid program call: `code` must not contain NUL characters.",
        ),
        (
            {"action": "run", "code": "x", "timeout": float("nan")},
            "Invalid program call: `timeout` must be a positive number of seconds.",
        ),
        (
            {"action": "run", "code": "x", "target": "a"},
            "Invalid program call: run does not take `target`.",
        ),
        (
            {"action": "wait", "timeout": 5},
            "Invalid program call: `timeout` for wait must be from 10 to 3600 seconds.",
        ),
        (
            {"action": "wait", "timeout": 4000},
            "Invalid program call: `timeout` for wait must be from 10 to 3600 seconds.",
        ),
        (
            {"action": "wait", "target": []},
            "Invalid program call: `target` must name at least one Program.",
        ),
        (
            {"action": "wait", "code": "x"},
            "Invalid program call: wait does not take `code`.",
        ),
        ({"action": "list", "target": "x"}, "Invalid program call: list does not take `target`."),
        ({"action": "stop"}, "Invalid program call: stop needs `target`."),
        (
            {"action": "stop", "target": ["a", "b"]},
            "Invalid program call: `target` for stop must be one Program ID or prefix.",
        ),
    ],
)
def test_what_the_tool_refuses_and_how_it_says_so(args: dict, error: str) -> None:
    assert calls.parse(args) == Refused(error)


IDS = [
    "0192abcd-0000-7000-8000-000000000001",
    "0192abcd-0000-7000-8000-000000000002",
    "0193ffff-0000-7000-8000-000000000003",
]


def test_a_target_is_an_id_or_a_unique_prefix_in_any_case() -> None:
    assert addressing.resolve(IDS[2], IDS) == IDS[2]
    assert addressing.resolve("0193", IDS) == IDS[2]
    assert addressing.resolve("0192ABCD-0000-7000-8000-000000000001", IDS) == IDS[0]


def test_an_unknown_or_ambiguous_target_is_refused_with_the_documents_texts() -> None:
    assert addressing.resolve("ffff", IDS) == Refused(
        'No Program matches "ffff". Use list to find Programs.'
    )
    assert addressing.resolve("", IDS) == Refused(
        'No Program matches "". Use list to find Programs.'
    )
    ambiguous = addressing.resolve("0192", IDS)
    assert ambiguous == Refused(
        '"0192" matches several Programs: 0192abcd-0000-7000-8000-000000000001, '
        "0192abcd-0000-7000-8000-000000000002. Retry with a longer ID prefix."
    )


def test_short_ids_are_eight_characters_unless_a_sibling_shares_them() -> None:
    short = addressing.short_ids(IDS)
    assert short[IDS[2]] == "0193ffff"
    assert short[IDS[0]] == "0192abcd-0000-7000-8000-000000000001"


def test_a_parameter_given_as_null_counts_as_not_given() -> None:
    validator = jsonschema.Draft202012Validator(calls.parameters())
    sdk_call = {"action": "run", "code": "return 1", "background": False, "timeout": None}
    assert not list(validator.iter_errors(sdk_call))
    assert calls.parse(sdk_call) == Run("return 1")
    waited = {"action": "wait", "target": None, "timeout": None}
    assert not list(validator.iter_errors(waited))
    assert calls.parse(waited) == Wait(None, 30.0)
    listed = {"action": "list", "limit": None, "offset": None, "code": None}
    assert calls.parse(listed) == List(20, 0)  # a null of another action's is no error
    assert calls.parse({"action": "run", "code": None}) == Refused(
        "Invalid program call: run needs `code`."
    )
