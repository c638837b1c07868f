"""Tool-call arguments as plain JSON: the checks every call passes before a tool runs."""

from __future__ import annotations

import math
from typing import Any

import pytest
from loopback import LoopbackServer, Stream, collect, sse
from provider_cases import READ_TOOL, asker, final

from piagents.ai._sdk import parse_args
from piagents.ai.arguments import MAX_DEPTH, argument_problem, loads_arguments
from piagents.ai.messages import ToolCall
from piagents.ai.openai_completions import OpenAICompletionsProvider


def nested(depth: int) -> object:
    value: object = "x"
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("args", "text"),
    [
        ({"timeout": math.nan}, "field 'timeout': nan is not a finite number"),
        ({"timeout": math.inf}, "field 'timeout': inf is not a finite number"),
        ({"t": [1, {"x": -math.inf}]}, "field 't.1.x': -inf is not a finite number"),
        ({"message": "hi\ud800"}, "field 'message': the text has an unpaired surrogate"),
        ({"\udcff": 1}, "field '(root)': the key \"\\udcff\" has an unpaired surrogate"),
        ({1: "a"}, "field '(root)': the key 1 is not text"),
        ({"limit": 2**64}, "field 'limit': the number is too large"),
        ({"s": {1, 2}}, "field 's': a set is not a JSON value"),
        ({"a": nested(5000)}, f"values are nested deeper than {MAX_DEPTH} levels"),
    ],
)
def test_arguments_that_are_not_plain_json_are_named_by_field(args: object, text: str) -> None:
    problem = argument_problem(args)
    assert problem is not None
    assert problem.text("agent").startswith(f"Invalid arguments for agent: {text}")


def test_the_first_bad_field_in_order_is_the_one_reported() -> None:
    problem = argument_problem({"a": 1, "b": math.nan, "c": math.inf})
    assert problem is not None and problem.path == "b"


@pytest.mark.parametrize(
    "args",
    [
        {},
        {"action": "wait", "timeout": 30.5, "target": ["a", "b"], "history": 2**63 - 1},
        {"files": ("a.txt",)},  # a Python caller's tuple is an array
        {"a": nested(MAX_DEPTH - 1), "ok": None, "flag": True, "text": "é ✓ \U0001f600"},
    ],
)
def test_plain_json_arguments_pass(args: object) -> None:
    assert argument_problem(args) is None


@pytest.mark.parametrize(
    "raw",
    [
        '{"timeout": NaN}',
        '{"timeout": Infinity}',
        '{"timeout": -Infinity}',
        '{"timeout": 1e400}',  # becomes inf
        '{"a": ' + "[" * 5000 + "]" * 5000 + "}",
        '{"a": "\\ud800"}',
        '{"a": ' + "9" * 5000 + "}",  # longer than Python converts
    ],
    ids=["nan", "infinity", "-infinity", "overflow", "deep", "surrogate", "long-int"],
)
def test_parsed_arguments_that_break_the_rules_are_refused(raw: str) -> None:
    with pytest.raises(ValueError):
        loads_arguments(raw)
    assert parse_args(raw) == {}  # as a provider reads a model's arguments: none at all


def test_parsed_plain_arguments_come_back_as_they_are() -> None:
    assert parse_args('{"path": "src/main.py", "limit": 5, "offset": 1.5}') == {
        "path": "src/main.py",
        "limit": 5,
        "offset": 1.5,
    }


async def test_a_provider_reads_a_models_unusable_arguments_as_none(server: LoopbackServer) -> None:
    """Chat Completions over the loopback server: arguments nested 5,000 deep, as a model
    could stream them, give a call with no arguments, not a RecursionError."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return sse({"id": "c1", "object": "chat.completion.chunk", "choices": [choice]})

    deep = '{"path": ' + "[" * 5000 + "]" * 5000 + "}"
    call = {"index": 0, "id": "call_1", "type": "function"}
    server.reply(
        Stream(
            [
                chunk({"role": "assistant", "content": ""}),
                chunk({"tool_calls": [{**call, "function": {"name": "read", "arguments": ""}}]}),
                chunk({"tool_calls": [{"index": 0, "function": {"arguments": deep}}]}),
                chunk({}, "tool_calls"),
                sse("[DONE]"),
            ]
        )
    )
    provider = OpenAICompletionsProvider(
        "local", base_url=server.url + "/v1", api_key="k", headers={}
    )
    try:
        events = await collect(provider.stream(asker("local/qwen3-coder")(tools=(READ_TOOL,))))
    finally:
        await provider.aclose()
    assert final(events).tool_calls == [ToolCall("read", {}, "call_1")]
