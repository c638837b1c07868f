"""The Anthropic Messages adapter against a loopback server speaking the real streaming format."""

from __future__ import annotations

from typing import Any

import pytest
from loopback import (
    Failure,
    LoopbackServer,
    Stream,
    collect,
    sse,
)
from provider_cases import (
    FAST_RETRY,
    READ_TOOL,
    AnswerTests,
    ProviderCase,
    TransportTests,
    asker,
    final,
)

from piagents.ai.anthropic_messages import AnthropicMessagesProvider, thinking_budget
from piagents.ai.events import (
    StreamRetry,
    ThinkingDelta,
)
from piagents.ai.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from piagents.ai.provider import ProviderError
from piagents.ai.retry import stream_with_retry

# ---- the wire format ------------------------------------------------------------


def event(kind: str, **fields: Any) -> str:
    return sse({"type": kind, **fields}, event=kind)


def message_start(inp: int = 25, cache_read: int = 0, cache_write: int = 0) -> str:
    message: dict[str, Any] = {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-4-5-20251001",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": inp,
            "cache_creation_input_tokens": cache_write,
            "cache_read_input_tokens": cache_read,
            "output_tokens": 1,
        },
    }
    return event("message_start", message=message)


PING = event("ping")


def text_block(index: int, *pieces: str) -> list[str]:
    return [
        event("content_block_start", index=index, content_block={"type": "text", "text": ""}),
        *(
            event("content_block_delta", index=index, delta={"type": "text_delta", "text": p})
            for p in pieces
        ),
        event("content_block_stop", index=index),
    ]


def thinking_block(index: int, signature: str, *pieces: str) -> list[str]:
    start = {"type": "thinking", "thinking": "", "signature": ""}
    return [
        event("content_block_start", index=index, content_block=start),
        *(
            event(
                "content_block_delta", index=index, delta={"type": "thinking_delta", "thinking": p}
            )
            for p in pieces
        ),
        event(
            "content_block_delta",
            index=index,
            delta={"type": "signature_delta", "signature": signature},
        ),
        event("content_block_stop", index=index),
    ]


def tool_block(index: int, call_id: str, name: str, *fragments: str) -> list[str]:
    start = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
    return [
        event("content_block_start", index=index, content_block=start),
        *(
            event(
                "content_block_delta",
                index=index,
                delta={"type": "input_json_delta", "partial_json": f},
            )
            for f in fragments
        ),
        event("content_block_stop", index=index),
    ]


def message_end(stop_reason: str = "end_turn", output: int = 15) -> list[str]:
    return [
        event(
            "message_delta",
            delta={"stop_reason": stop_reason, "stop_sequence": None},
            usage={"output_tokens": output},
        ),
        event("message_stop"),
    ]


def text_answer(*pieces: str) -> list[str]:
    return [message_start(), PING, *text_block(0, *pieces), *message_end()]


def api_error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_011"}


def whole(text: str | None, call: tuple[str, str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """A message answered without streaming."""
    content: list[dict[str, Any]] = []
    if text is not None:
        content.append({"type": "text", "text": text})
    if call is not None:
        call_id, name, args = call
        content.append({"type": "tool_use", "id": call_id, "name": name, "input": args})
    return {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-4-5-20251001",
        "content": content,
        "stop_reason": "tool_use" if call else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 25, "output_tokens": 9},
    }


# ---- fixtures and helpers -----------------------------------------------------------

ask = asker("anthropic/claude-haiku-4-5")
CASE = ProviderCase(
    connect=lambda url, options=None: AnthropicMessagesProvider(
        "anthropic", base_url=url, api_key="sk-ant-test", headers={"x-team": "pi"}, options=options
    ),
    ask=ask,
    text_answer=text_answer,
    model=("anthropic", "claude-haiku-4-5"),
    drop_after=4,
    unfinished=[message_start(), *text_block(0, "half")],  # no message_stop
    held_open=[message_start(), *text_block(0, "thinking about it")[:2]],
    rate_limited=api_error("rate_limit_error", "Number of request tokens has exceeded your limit"),
    rate_limit_message="Number of request tokens has exceeded your limit",
    server_error=api_error("api_error", "Internal server error"),
    server_error_message="Internal server error",
    api="anthropic-messages",
    whole_text=whole("whole"),
    whole_tool=whole(None, ("call_1", "read", {"path": "a"})),
    split_tool_call=[
        message_start(),
        *text_block(0, "Reading."),
        *tool_block(1, "toolu_01A09q90qw90", "read", "", '{"pa', 'th": "src/', 'main.py"}'),
        *message_end("tool_use"),
    ],
    split_call_id="toolu_01A09q90qw90",
    parallel_tool_calls=[
        message_start(),
        *tool_block(0, "toolu_1", "read", '{"path":', ' "a"}'),
        *tool_block(1, "toolu_2", "read", '{"path": "b"}'),
        *message_end("tool_use"),
    ],
    parallel_call_ids=("toolu_1", "toolu_2"),
    cut_for_length=[message_start(), *text_block(0, "cut"), *message_end("max_tokens")],
    priced_model="anthropic/claude-haiku-4-5",
    priced_answer=[  # cache reads and writes both
        message_start(inp=100, cache_read=2000, cache_write=500),
        *text_block(0, "ok"),
        *message_end(output=40),
    ],
    priced_usage=(100, 40, 2000, 500),
    # claude-haiku-4-5: $1 in, $5 out, $0.10 cache read, $1.25 cache write per million
    priced_cost=(100 * 1 + 40 * 5 + 2000 * 0.1 + 500 * 1.25) / 1e6,
    refused_status=400,
    refused_body=api_error(
        "invalid_request_error", "messages: text content blocks must be non-empty"
    ),
    refused_message="anthropic returned HTTP 400: messages: text content blocks must be non-empty",
)


@pytest.fixture
def case() -> ProviderCase:
    return CASE


class TestTransport(TransportTests):
    """The shared streaming, retry and cancellation tests, against Anthropic Messages."""


class TestAnswers(AnswerTests):
    """The shared tests of what an answer's frames become, against the Messages API."""


# ---- streaming ---------------------------------------------------------------------


async def test_thinking_streams_as_thinking_deltas_and_keeps_its_signature(
    server: LoopbackServer, provider: AnthropicMessagesProvider
) -> None:
    frames = [
        message_start(),
        *thinking_block(0, "EqQBCgIYAhIM1gbcDa9GJwZA", "The user ", "greets me."),
        *text_block(1, "Hi!"),
        *message_end(),
    ]
    server.reply(Stream(frames))

    events = await collect(provider.stream(ask(thinking="low")))

    assert [e.text for e in events if isinstance(e, ThinkingDelta)] == ["The user ", "greets me."]
    assert final(events).content == (
        ThinkingContent("The user greets me.", "EqQBCgIYAhIM1gbcDa9GJwZA"),
        TextContent("Hi!"),
    )


async def test_a_thinking_level_sends_a_budget_below_max_tokens(
    server: LoopbackServer, provider: AnthropicMessagesProvider
) -> None:
    server.reply(Stream(text_answer("ok")), Stream(text_answer("ok")))

    await collect(provider.stream(ask(thinking="medium", max_output=2000)))
    await collect(provider.stream(ask(thinking="off", max_output=2000)))

    thinking, plain = (r.body for r in server.requests)
    assert thinking["thinking"] == {"type": "enabled", "budget_tokens": 10_240}
    assert thinking["max_tokens"] > 10_240
    assert "thinking" not in plain
    assert plain["max_tokens"] == 2000


# ---- the request ------------------------------------------------------------------


def test_thinking_budget_stays_within_the_model_output_limit() -> None:
    # claude-opus-4-1 writes at most 32k tokens, less than the "max" budget of 63,999.
    max_tokens, budget = thinking_budget(ask(model="anthropic/claude-opus-4-1", thinking="max"))

    assert max_tokens == 32_000
    assert budget < max_tokens


async def test_request_carries_model_system_prompt_tools_and_tool_results(
    server: LoopbackServer, provider: AnthropicMessagesProvider
) -> None:
    server.reply(Stream(text_answer("done")))
    history = (
        UserMessage((TextContent("look"), ImageContent("aGk=", "image/png"))),
        AssistantMessage(
            (
                ThinkingContent("Two files.", "sig-1"),
                TextContent("Reading."),
                ToolCall("read", {"path": "a"}, "toolu_1"),
                ToolCall("read", {"path": "b"}, "call_2|fc_2"),
            )
        ),
        ToolResultMessage("toolu_1", "read", (TextContent("no such file"),), is_error=True),
        ToolResultMessage("call_2|fc_2", "read", (TextContent("B"),)),
    )

    await collect(provider.stream(ask(*history, tools=(READ_TOOL,))))

    [request] = server.requests
    assert request.path == "/v1/messages"
    # Older SDKs send the key as x-api-key, newer ones as a bearer token.
    key = request.headers.get("x-api-key") or request.headers["authorization"]
    assert key.removeprefix("Bearer ") == "sk-ant-test"
    assert request.headers["x-team"] == "pi"
    body = request.body
    assert body["model"] == "claude-haiku-4-5"
    assert body["stream"] is True
    assert body["max_tokens"] == 64_000
    assert "thinking" not in body
    assert body["system"] == [
        {"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "aGk="},
                },
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Two files.", "signature": "sig-1"},
                {"type": "text", "text": "Reading."},
                {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a"}},
                {"type": "tool_use", "id": "call_2_fc_2", "name": "read", "input": {"path": "b"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": [{"type": "text", "text": "no such file"}],
                    "is_error": True,
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "call_2_fc_2",
                    "content": [{"type": "text", "text": "B"}],
                    "cache_control": {"type": "ephemeral"},
                },
            ],
        },
    ]
    assert body["tools"] == [
        {"name": "read", "description": "Read a file", "input_schema": READ_TOOL.parameters}
    ]


# ---- failures -----------------------------------------------------------------------


async def test_overloaded_is_retried(
    server: LoopbackServer, provider: AnthropicMessagesProvider
) -> None:
    server.reply(
        Failure(529, api_error("overloaded_error", "Overloaded")), Stream(text_answer("ok"))
    )

    events = await collect(stream_with_retry(provider, ask(), FAST_RETRY))

    [retry] = [e for e in events if isinstance(e, StreamRetry)]
    assert retry.error == "anthropic returned HTTP 529: Overloaded"
    assert final(events).text == "ok"


async def test_an_overloaded_error_event_mid_stream_is_retryable(
    server: LoopbackServer, provider: AnthropicMessagesProvider
) -> None:
    error = sse(api_error("overloaded_error", "Overloaded"), event="error")
    server.reply(Stream([message_start(), *text_block(0, "par"), error]))

    with pytest.raises(ProviderError) as failure:
        await collect(provider.stream(ask()))

    assert failure.value.retryable
    assert (
        str(failure.value)
        == "anthropic reported an error mid-stream (overloaded_error): Overloaded"
    )
