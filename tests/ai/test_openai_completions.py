"""The Chat Completions adapter against a loopback server speaking the real streaming format."""

from __future__ import annotations

from typing import Any

import pytest
import real_servers
from loopback import (
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
from piagents.ai.openai_completions import (
    OpenAICompletionsProvider,
    chat_messages,
    is_openai,
)
from piagents.ai.retry import stream_with_retry

# ---- the wire format ------------------------------------------------------------


def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    return sse(
        {
            "id": "chatcmpl-9xyz",
            "object": "chat.completion.chunk",
            "created": 1730000000,
            "model": "gpt-4o-2024-08-06",
            "system_fingerprint": "fp_50cad350e4",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
    )


def usage_chunk(prompt: int, completion: int, cached: int = 0) -> str:
    return sse(
        {
            "id": "chatcmpl-9xyz",
            "object": "chat.completion.chunk",
            "created": 1730000000,
            "model": "gpt-4o-2024-08-06",
            "choices": [],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
                "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
            },
        }
    )


DONE = sse("[DONE]")
START = chunk({"role": "assistant", "content": "", "refusal": None})


def text_answer(*pieces: str) -> list[str]:
    return [
        START,
        *(chunk({"content": p}) for p in pieces),
        chunk({}, "stop"),
        usage_chunk(12, len(pieces)),
        DONE,
    ]


def tool_start(index: int, call_id: str, name: str) -> str:
    call = {"index": index, "id": call_id, "type": "function"}
    return chunk({"tool_calls": [{**call, "function": {"name": name, "arguments": ""}}]})


def tool_args(index: int, fragment: str) -> str:
    return chunk({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]})


def whole(text: str | None, calls: list[tuple[str, str, str]] = ()) -> dict[str, Any]:  # type: ignore[assignment]
    """A completion answered without streaming, as llama-cpp-python's server sends it."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
            for i, n, a in calls
        ]
    return {
        "id": "chatcmpl-5a8b",
        "object": "chat.completion",
        "created": 1764547200,
        "model": "qwen3-coder",
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if calls else "stop",
            }
        ],
        "usage": {"prompt_tokens": 40, "completion_tokens": 9, "total_tokens": 49},
    }


# ---- fixtures and helpers -----------------------------------------------------------

ask = asker("local/qwen3-coder")
CASE = ProviderCase(
    connect=lambda url, options=None: OpenAICompletionsProvider(
        "local", base_url=url + "/v1", api_key="sk-test", headers={"x-team": "pi"}, options=options
    ),
    ask=ask,
    text_answer=text_answer,
    model=("local", "qwen3-coder"),
    drop_after=2,
    unfinished=[START, chunk({"content": "half"}), DONE],  # no finish reason
    held_open=[START, chunk({"content": "thinking about it"})],
    rate_limited={
        "error": {
            "message": "Rate limit reached",
            "type": "requests",
            "code": "rate_limit_exceeded",
        }
    },
    rate_limit_message="Rate limit reached",
    server_error={"error": {"message": "The server had an error", "type": "server_error"}},
    server_error_message="The server had an error",
    api="openai-completions",
    whole_text=whole("whole"),
    whole_tool=whole(None, [("call_1", "read", '{"path": "a"}')]),
    split_tool_call=[
        START,
        chunk({"content": "Reading."}),
        tool_start(0, "call_Ab12", "read"),
        tool_args(0, '{"pa'),
        tool_args(0, 'th": "src/'),
        tool_args(0, 'main.py"}'),
        chunk({}, "tool_calls"),
        DONE,
    ],
    split_call_id="call_Ab12",
    parallel_tool_calls=[  # the second call starts before the first's arguments end
        START,
        tool_start(0, "call_1", "read"),
        tool_args(0, '{"path":'),
        tool_start(1, "call_2", "read"),
        tool_args(1, '{"path": "b"}'),
        tool_args(0, ' "a"}'),
        chunk({}, "tool_calls"),
        DONE,
    ],
    parallel_call_ids=("call_1", "call_2"),
    cut_for_length=[START, chunk({"content": "cut"}), chunk({}, "length"), DONE],
    priced_model="openai/gpt-4o",
    priced_answer=[
        START,
        chunk({"content": "ok"}),
        chunk({}, "stop"),
        usage_chunk(1000, 50, 400),
        DONE,
    ],
    priced_usage=(600, 50, 400, 0),
    # gpt-4o: $2.50 in, $10 out, $1.25 cached per million tokens
    priced_cost=(600 * 2.5 + 50 * 10.0 + 400 * 1.25) / 1e6,
    refused_status=401,
    refused_body={"error": {"message": "Incorrect API key provided"}},
    refused_message="local returned HTTP 401: Incorrect API key provided",
)


@pytest.fixture
def case() -> ProviderCase:
    return CASE


class TestTransport(TransportTests):
    """The shared streaming, retry and cancellation tests, against Chat Completions."""


class TestAnswers(AnswerTests):
    """The shared tests of what an answer's frames become, against Chat Completions."""


# ---- streaming ---------------------------------------------------------------------


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_reasoning_deltas_stream_as_thinking_before_the_text(
    server: LoopbackServer, provider: OpenAICompletionsProvider, field: str
) -> None:
    server.reply(
        Stream(
            [
                START,
                chunk({field: "The user "}),
                chunk({field: "greets me."}),
                chunk({"content": "Hi!"}),
                chunk({}, "stop"),
                DONE,
            ]
        )
    )

    events = await collect(provider.stream(ask(thinking="high")))

    assert [e.text for e in events if isinstance(e, ThinkingDelta)] == ["The user ", "greets me."]
    assert final(events).content == (ThinkingContent("The user greets me."), TextContent("Hi!"))


# ---- the request ------------------------------------------------------------------


async def test_request_carries_model_system_prompt_tools_and_tool_results(
    server: LoopbackServer, provider: OpenAICompletionsProvider
) -> None:
    server.reply(Stream(text_answer("done")))
    history = (
        UserMessage((TextContent("look"), ImageContent("aGk=", "image/png"))),
        AssistantMessage(
            (
                ThinkingContent("hidden"),
                TextContent("Reading."),
                ToolCall("read", {"path": "a"}, "call_1"),
            )
        ),
        ToolResultMessage("call_1", "read", (TextContent("no such file"),), is_error=True),
    )

    await collect(provider.stream(ask(*history, tools=(READ_TOOL,))))

    [request] = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.headers["x-team"] == "pi"
    body = request.body
    assert body["model"] == "qwen3-coder"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 16_384
    assert "reasoning_effort" not in body
    assert body["messages"] == [
        {"role": "system", "content": "You are terse."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,aGk="}},
            ],
        },
        {
            "role": "assistant",
            "content": "Reading.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path": "a"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "no such file"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "read",
                "description": "Read a file",
                "parameters": READ_TOOL.parameters,
            },
        }
    ]


async def test_a_thinking_level_sends_reasoning_effort(
    server: LoopbackServer, provider: OpenAICompletionsProvider
) -> None:
    server.reply(Stream(text_answer("ok")))

    await collect(provider.stream(ask(thinking="xhigh")))

    assert server.requests[0].body["reasoning_effort"] == "high"


def test_tool_result_images_follow_the_tool_messages_as_a_user_message() -> None:
    history = (
        AssistantMessage((ToolCall("shot", {}, "call_1"), ToolCall("shot", {}, "call_2"))),
        ToolResultMessage("call_1", "shot", (ImageContent("aGk=", "image/png"),)),
        ToolResultMessage("call_2", "shot", (TextContent("no screen"),)),
    )

    messages = chat_messages("", history)

    assert [m["role"] for m in messages] == ["assistant", "tool", "tool", "user"]
    assert messages[1]["content"] == "(see the attached image)"
    assert messages[3]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64,aGk="},
    }


def test_only_openai_itself_is_sent_max_completion_tokens() -> None:
    # OpenAI's reasoning models refuse `max_tokens`; compatible servers know it best.
    assert is_openai(None)
    assert is_openai("https://api.openai.com/v1")
    assert not is_openai("http://127.0.0.1:11434/v1")
    assert not is_openai("https://openrouter.ai/api/v1")


# ---- failures -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("frame", "status"),
    [(real_servers.LITELLM_500, 500), (real_servers.LITELLM_429, 429)],
    ids=["internal_server_error", "throttling_error"],
)
async def test_an_error_litellm_reports_mid_stream_is_retried(
    server: LoopbackServer, provider: OpenAICompletionsProvider, frame: str, status: int
) -> None:
    server.reply(Stream([START, chunk({"content": "par"}), frame]), Stream(text_answer("whole")))

    events = await collect(stream_with_retry(provider, ask(), FAST_RETRY))

    [retry] = [e for e in events if isinstance(e, StreamRetry)]
    assert f"HTTP {status}" in retry.error
    assert "litellm." in retry.error
    assert final(events).text == "whole"
    assert len(server.requests) == 2


async def test_a_mid_stream_error_that_is_not_transient_is_not_retried(
    server: LoopbackServer, provider: OpenAICompletionsProvider
) -> None:
    refused = real_servers.litellm_stream_error(
        "litellm.BadRequestError: context length exceeded", "invalid_request_error", 400
    )
    server.reply(Stream([START, refused]))

    events = await collect(stream_with_retry(provider, ask(), FAST_RETRY))

    assert not any(isinstance(e, StreamRetry) for e in events)
    assert final(events).error_message == (
        "local returned HTTP 400: litellm.BadRequestError: context length exceeded"
    )
