"""The `agent` tool's JSON schema and model-facing texts (spec §6)."""

from types import SimpleNamespace

import jsonschema
import pytest

from piagents.agents.tool import AgentTool, parameters

SCHEMA = parameters()
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def valid(args):
    return VALIDATOR.is_valid(args)


def test_the_parameters_are_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_action_is_required():
    assert not valid({})
    assert not valid({"name": "worker", "message": "hi"})
    assert SCHEMA["required"] == ["action"]


def test_unknown_fields_are_rejected():
    assert not valid({"action": "list", "verbose": True})


@pytest.mark.parametrize(
    "args",
    [
        {"action": "spawn", "name": "worker", "message": "Fix it."},
        {
            "action": "spawn",
            "name": "worker",
            "message": "Fix it.",
            "cwd": "/tmp",
            "context": "fork",
            "model": "openai/gpt-5",
            "thinkingLevel": "high",
        },
        {"action": "send", "target": "worker", "message": "More.", "deliverAs": "steer"},
        {"action": "send", "target": ["a", "b"], "message": "FYI", "deliverAs": "write"},
        {"action": "wait"},
        {"action": "wait", "target": ["a", "b"], "history": 2, "timeout": 120},
        {"action": "list", "query": "fix|test", "state": "idle", "limit": 20, "offset": 40},
        {"action": "abort", "target": "01JABCDE"},
    ],
)
def test_calls_of_each_action_are_accepted(args):
    VALIDATOR.validate(args)


def test_target_accepts_a_string_or_an_array_of_strings():
    assert valid({"action": "wait", "target": "worker"})
    assert valid({"action": "wait", "target": ["worker", "reviewer"]})
    assert not valid({"action": "wait", "target": 7})
    assert not valid({"action": "wait", "target": ["worker", 7]})


@pytest.mark.parametrize(("timeout", "ok"), [(9, False), (10, True), (3600, True), (3601, False)])
def test_timeout_is_bounded_from_10_to_3600_seconds(timeout, ok):
    assert valid({"action": "wait", "timeout": timeout}) is ok


def test_timeout_may_be_fractional():
    assert valid({"action": "wait", "timeout": 12.5})


@pytest.mark.parametrize(("limit", "ok"), [(0, False), (1, True), (200, True), (201, False)])
def test_limit_is_bounded_from_1_to_200(limit, ok):
    assert valid({"action": "list", "limit": limit}) is ok


def test_limit_offset_and_history_are_whole_numbers_not_below_zero():
    assert not valid({"action": "list", "limit": 2.5})
    assert not valid({"action": "list", "offset": -1})
    assert valid({"action": "list", "offset": 0})
    assert not valid({"action": "wait", "history": -1})
    assert valid({"action": "wait", "history": 0})


@pytest.mark.parametrize(
    ("field", "values"),
    [
        ("action", ["spawn", "send", "wait", "list", "abort"]),
        ("context", ["fresh", "fork"]),
        ("thinkingLevel", ["off", "minimal", "low", "medium", "high", "xhigh", "max"]),
        ("deliverAs", ["followUp", "steer", "write"]),
        ("state", ["running", "waiting", "queued", "idle"]),
    ],
)
def test_enumerated_fields_take_exactly_the_spec_values(field, values):
    assert SCHEMA["properties"][field]["enum"] == values
    base = {"action": "list"}
    for value in values:
        assert valid({**base, field: value})
    assert not valid({**base, field: "other"})


def test_every_spec_parameter_is_a_property_with_its_description():
    from piagents.agents.texts import PARAMETER_DESCRIPTIONS

    assert list(SCHEMA["properties"]) == list(PARAMETER_DESCRIPTIONS)
    for name, prop in SCHEMA["properties"].items():
        assert prop["description"] == PARAMETER_DESCRIPTIONS[name]


def test_the_target_description_is_the_spec_line():
    assert SCHEMA["properties"]["target"]["description"] == (
        "Agent ID, name, or unique ID prefix for `send`, `wait`, or `abort`. `wait` and "
        "`send` with `deliverAs='write'` also accept an array. When omitted for `wait`, "
        "selects all owned Agents with pending or unread results."
    )


# ---- the tool object ----------------------------------------------------------------


def make_tool(max_concurrent=3, max_outstanding=8):
    coordinator = SimpleNamespace(max_concurrent=max_concurrent, max_outstanding=max_outstanding)
    return AgentTool(coordinator, caller=None)  # type: ignore[arg-type]


def test_the_tool_is_called_agent():
    assert make_tool().name == "agent"


def test_the_tool_description_carries_the_configured_limits():
    assert make_tool(4, 10).description == (
        "Create, message, and coordinate Agents. `spawn` creates an owned Agent and sends its "
        "first input; `send` sends an input or a write to a visible Agent; `wait` waits for "
        "owned Agents and returns unread results; `list` finds visible Agents; `abort` stops an "
        "owned Agent's current turn and queued inputs while keeping it available. When an owned "
        "Agent finishes an input while its owner is not waiting for it, the owner receives a "
        "notification naming the Agent and outcome; `wait` returns the result. Owned Agents "
        "under the same root share `4` execution slots and a limit of `10` inputs that have not "
        "ended. Inputs that start a new turn queue when all slots are busy; new inputs are "
        "rejected at the input limit."
    )


def test_the_tool_snippet_and_guidelines_are_the_spec_texts():
    tool = make_tool()
    assert tool.prompt_snippet == "Create, message, and coordinate Agents"
    assert list(tool.prompt_guidelines) == [
        "Use `agent(action='spawn', name=..., message=...)` for concrete, bounded work with a "
        "clear expected result. Keep the first message self-contained; use `context='fork'` "
        "only when the Agent needs the caller's conversation.",
        "For independent work, start the Agents before waiting and partition tasks into "
        "non-overlapping responsibilities.",
        "Use `agent(action='wait', ...)` when the next step depends on Agent results. Prefer "
        "one longer wait over repeated short polling.",
    ]


def test_the_tool_parameters_are_the_schema():
    assert make_tool().parameters == SCHEMA
