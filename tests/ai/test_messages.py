"""Conversation messages and their Pi-style JSON form."""

from __future__ import annotations

import json
from typing import Any

import pytest

from piagents.ai.messages import (
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    content_from_json,
    content_to_json,
    message_from_json,
    message_to_json,
    usage_from_json,
    usage_to_json,
)

TS = 1_730_000_000_123


def through_json(m: Message) -> Message:
    """To JSON text and back, as the store and the export do."""
    return message_from_json(json.loads(json.dumps(message_to_json(m))))


MESSAGES: list[Message] = [
    UserMessage.of("hello"),
    UserMessage((TextContent("look"), ImageContent("aGVsbG8=", "image/png")), TS),
    AssistantMessage(
        (
            ThinkingContent("let me think", "sig-1"),
            ThinkingContent("unsigned"),
            TextContent("Reading it."),
            ToolCall("read", {"path": "a.py", "limit": 10, "nested": {"x": [1, None]}}, "call_1"),
            ToolCall("ls", {}, "call_2"),
        ),
        "toolUse",
        Usage(100, 20, 5, 3, 0.0125),
        "anthropic",
        "claude-sonnet-4-5",
        None,
        TS,
    ),
    AssistantMessage(
        (), "error", provider="openai", model="gpt-5", error_message="429", timestamp=TS
    ),
    AssistantMessage((TextContent("partial"),), "aborted", timestamp=TS),
    AssistantMessage((TextContent("cut"),), "length", timestamp=TS),
    ToolResultMessage("call_1", "read", (TextContent("print(1)"),), {"lines": 1}, False, TS),
    ToolResultMessage(
        "call_3",
        "read",
        (TextContent("an image"), ImageContent("AAAA", "image/jpeg")),
        None,
        True,
        TS,
    ),
    ToolResultMessage("c", "bash", (), {"exitCode": 1, "out": ["é", "☃"]}, True, TS),
]


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: m.role)
def test_every_message_survives_a_json_round_trip(message: Message) -> None:
    assert through_json(message) == message


@pytest.mark.parametrize(
    "content",
    [
        TextContent("t"),
        TextContent(""),
        ThinkingContent("th"),
        ThinkingContent("th", "sig"),
        ImageContent("ZGF0YQ==", "image/webp"),
        ToolCall("edit", {"path": "x", "oldText": "a", "newText": "b"}, "id-9"),
        ToolCall("ls"),
    ],
)
def test_every_content_type_survives_a_json_round_trip(content: Any) -> None:
    assert content_from_json(json.loads(json.dumps(content_to_json(content)))) == content


def test_usage_survives_a_json_round_trip() -> None:
    usage = Usage(1, 2, 3, 4, 0.5)

    assert usage_from_json(json.loads(json.dumps(usage_to_json(usage)))) == usage


# ---- Pi's keys -----------------------------------------------------------------


def test_content_uses_pi_style_camel_case_keys() -> None:
    assert content_to_json(ThinkingContent("x", "s")) == {
        "type": "thinking",
        "thinking": "x",
        "thinkingSignature": "s",
    }
    assert content_to_json(ThinkingContent("x")) == {"type": "thinking", "thinking": "x"}
    assert content_to_json(ImageContent("d", "image/png")) == {
        "type": "image",
        "data": "d",
        "mimeType": "image/png",
    }
    assert content_to_json(ToolCall("ls", {"path": "."}, "c1")) == {
        "type": "toolCall",
        "id": "c1",
        "name": "ls",
        "arguments": {"path": "."},
    }


def test_a_user_message_has_role_content_and_timestamp() -> None:
    assert message_to_json(UserMessage((TextContent("hi"),), TS)) == {
        "role": "user",
        "content": [{"type": "text", "text": "hi"}],
        "timestamp": TS,
    }


def test_an_assistant_message_uses_pi_style_keys() -> None:
    usage = Usage(10, 5, 2, 1, 0.25, 0.1, 0.125, 0.005, 0.02)
    d = message_to_json(
        AssistantMessage(
            (TextContent("ok"),), "stop", usage, "openai", "gpt-5", api="openai-responses"
        )
    )

    assert d["role"] == "assistant"
    assert d["stopReason"] == "stop"
    assert (d["api"], d["provider"], d["model"]) == ("openai-responses", "openai", "gpt-5")
    assert d["usage"] == {
        "input": 10,
        "output": 5,
        "cacheRead": 2,
        "cacheWrite": 1,
        "totalTokens": 18,
        "cost": {
            "input": 0.1,
            "output": 0.125,
            "cacheRead": 0.005,
            "cacheWrite": 0.02,
            "total": 0.25,
        },
    }
    assert "errorMessage" not in d
    assert set(d) >= {"content", "api", "timestamp"}


def test_an_assistant_message_reads_back_its_api() -> None:
    message = AssistantMessage((TextContent("ok"),), api="anthropic-messages", timestamp=TS)

    assert message_from_json(message_to_json(message)) == message


def test_an_assistant_error_carries_error_message() -> None:
    d = message_to_json(AssistantMessage((), "error", error_message="rate limited"))

    assert (d["stopReason"], d["errorMessage"]) == ("error", "rate limited")


def test_a_tool_result_uses_pi_style_keys() -> None:
    d = message_to_json(
        ToolResultMessage("c1", "bash", (TextContent("out"),), {"code": 0}, True, TS)
    )

    assert d == {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "bash",
        "content": [{"type": "text", "text": "out"}],
        "details": {"code": 0},
        "isError": True,
        "timestamp": TS,
    }


def test_no_snake_case_key_appears_anywhere_in_the_json_form() -> None:
    def keys(value: Any) -> list[str]:
        if isinstance(value, dict):
            out = list(value)
            for v in value.values():
                out += keys(v)
            return out
        if isinstance(value, list):
            return [k for v in value for k in keys(v)]
        return []

    for m in MESSAGES:
        d = message_to_json(m)
        d.pop("details", None)  # a tool's own data, not ours to rename
        assert all("_" not in k for k in keys(d)), keys(d)


# ---- reading Pi's JSON ------------------------------------------------------------


def test_a_plain_string_content_reads_as_one_text_block() -> None:
    m = message_from_json({"role": "user", "content": "just text", "timestamp": 5})

    assert m == UserMessage((TextContent("just text"),), 5)


def test_missing_optional_fields_get_defaults() -> None:
    m = message_from_json({"role": "assistant", "content": [{"type": "text", "text": "x"}]})

    assert m == AssistantMessage((TextContent("x"),), "stop", Usage(), "", "", None, 0)


def test_a_usage_cost_given_as_a_plain_number_is_read() -> None:
    assert usage_from_json({"input": 1, "cost": 0.5}) == Usage(1, 0, 0, 0, 0.5)


def test_pi_usage_with_a_full_cost_breakdown_keeps_every_part() -> None:
    cost = {"input": 0.1, "output": 0.2, "cacheRead": 0.03, "cacheWrite": 0.04, "total": 0.37}

    usage = usage_from_json({"input": 1, "output": 2, "cost": cost})

    assert usage == Usage(1, 2, 0, 0, 0.37, 0.1, 0.2, 0.03, 0.04)


def test_pi_usage_with_a_full_cost_breakdown_keeps_the_total() -> None:
    cost = {"input": 0.1, "output": 0.2, "cacheRead": 0, "cacheWrite": 0, "total": 0.3}

    assert usage_from_json({"input": 1, "output": 2, "cost": cost}).cost == 0.3


# ---- text and tool_calls ---------------------------------------------------------


def test_text_joins_the_text_blocks_of_each_role() -> None:
    user = UserMessage((TextContent("a"), ImageContent("d", "image/png"), TextContent("b")))
    assistant = AssistantMessage(
        (ThinkingContent("hidden"), TextContent("x"), ToolCall("ls"), TextContent("y"))
    )
    result = ToolResultMessage("c", "read", (TextContent("l1"), TextContent("l2")))

    assert user.text == "a\nb"
    assert assistant.text == "xy"
    assert result.text == "l1\nl2"


def test_thinking_joins_only_the_thinking_blocks() -> None:
    m = AssistantMessage((ThinkingContent("a"), TextContent("t"), ThinkingContent("b")))

    assert m.thinking == "ab"


def test_tool_calls_lists_the_assistants_calls_in_order() -> None:
    first, second = ToolCall("read", {"path": "a"}, "1"), ToolCall("ls", {}, "2")
    m = AssistantMessage((TextContent("t"), first, ThinkingContent("x"), second))

    assert m.tool_calls == [first, second]


def test_only_assistants_have_tool_calls() -> None:
    assert UserMessage.of("x").tool_calls == []
    assert ToolResultMessage("c", "ls", (TextContent("x"),)).tool_calls == []


def test_messages_carry_their_role() -> None:
    assert [m.role for m in MESSAGES[:3]] == ["user", "user", "assistant"]
    assert MESSAGES[-1].role == "toolResult"


def test_usage_adds_up_and_counts_all_tokens() -> None:
    total = Usage(1, 2, 3, 4, 0.5, 0.1, 0.2, 0.1, 0.1) + Usage(10, 20, 30, 40, 1.0, 1.0)

    assert total == Usage(11, 22, 33, 44, 1.5, 1.1, 0.2, 0.1, 0.1)
    assert total.total_tokens == 110


# ---- bad JSON ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "d",
    [
        pytest.param({"role": "system", "content": []}, id="unknown-role"),
        pytest.param({"content": []}, id="no-role"),
        pytest.param({"role": "assistant", "content": [], "stopReason": "done"}, id="stop"),
        pytest.param({"role": "user", "content": [{"type": "video"}]}, id="content-type"),
        pytest.param({"role": "user", "content": [{"text": "x"}]}, id="content-no-type"),
        pytest.param({"role": "user", "content": [{"type": "text"}]}, id="text-missing"),
        pytest.param({"role": "user", "content": [{"type": "text", "text": 3}]}, id="text-int"),
        pytest.param({"role": "user", "content": ["hello"]}, id="content-item-str"),
        pytest.param({"role": "user", "content": {"type": "text"}}, id="content-object"),
        pytest.param({"role": "user", "content": 7}, id="content-number"),
        pytest.param({"role": "user", "content": [], "timestamp": "soon"}, id="timestamp"),
        pytest.param({"role": "user", "content": [], "timestamp": None}, id="timestamp-null"),
        pytest.param({"role": "user", "content": [{"type": "image", "data": "x"}]}, id="mime"),
        pytest.param({"role": "toolResult", "content": []}, id="no-tool-call-id"),
        pytest.param(
            {"role": "toolResult", "toolCallId": "c", "content": [], "isError": "false"},
            id="is-error-string",
        ),
        pytest.param(
            {"role": "assistant", "content": [{"type": "toolCall", "arguments": {}}]},
            id="tool-call-no-name",
        ),
        pytest.param(
            {
                "role": "assistant",
                "content": [{"type": "toolCall", "name": "ls", "arguments": "{}"}],
            },
            id="tool-call-args-string",
        ),
        pytest.param(
            {
                "role": "assistant",
                "content": [{"type": "toolCall", "name": "ls", "arguments": [["a", 1]]}],
            },
            id="tool-call-args-pairs",
        ),
        pytest.param({"role": "assistant", "content": [], "usage": []}, id="usage-list"),
        pytest.param(
            {"role": "assistant", "content": [], "usage": {"input": "many"}}, id="usage-str"
        ),
        pytest.param({"role": "assistant", "content": [], "provider": None}, id="provider"),
        pytest.param({"role": "assistant", "content": [], "errorMessage": 5}, id="error-msg"),
    ],
)
def test_malformed_json_raises_value_error(d: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        message_from_json(d)


@pytest.mark.parametrize("d", [None, [], "user", 3])
def test_a_message_that_is_not_an_object_raises_value_error(d: Any) -> None:
    with pytest.raises(ValueError, match="must be a JSON object"):
        message_from_json(d)


def test_a_content_block_that_is_not_an_object_raises_value_error() -> None:
    with pytest.raises(ValueError, match="content block"):
        content_from_json("text")  # type: ignore[arg-type]
