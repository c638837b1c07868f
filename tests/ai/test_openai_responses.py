"""The Responses API adapter against a loopback server speaking the real streaming format."""

from __future__ import annotations

import itertools
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
from piagents.ai.openai_responses import OpenAIResponsesProvider
from piagents.ai.provider import ProviderError
from piagents.ai.retry import stream_with_retry

# ---- the wire format ------------------------------------------------------------

_sequence = itertools.count()


def event(kind: str, **fields: Any) -> str:
    return sse({"type": kind, "sequence_number": next(_sequence), **fields}, event=kind)


def response(status: str, usage: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "id": "resp_67ccd2bed1ec8190",
        "object": "response",
        "created_at": 1741476542,
        "status": status,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "max_output_tokens": None,
        "model": "gpt-5-2025-08-07",
        "output": [],
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "reasoning": {"effort": None, "summary": None},
        "store": False,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": usage,
        "metadata": {},
        **extra,
    }


def usage(inp: int, out: int, cached: int = 0, written: int = 0) -> dict[str, Any]:
    return {
        "input_tokens": inp,
        "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": written},
        "output_tokens": out,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": inp + out,
    }


CREATED = [
    event("response.created", response=response("in_progress")),
    event("response.in_progress", response=response("in_progress")),
]


def completed(tokens: dict[str, Any] | None = None) -> str:
    return event("response.completed", response=response("completed", tokens or usage(20, 5)))


def message_item(output_index: int, *pieces: str, item_id: str = "msg_1") -> list[str]:
    text = "".join(pieces)
    where = {"item_id": item_id, "output_index": output_index, "content_index": 0}
    part = {"type": "output_text", "text": "", "annotations": []}
    item = {"id": item_id, "type": "message", "role": "assistant", "status": "in_progress"}
    return [
        event(
            "response.output_item.added", output_index=output_index, item={**item, "content": []}
        ),
        event("response.content_part.added", **where, part=part),
        *(event("response.output_text.delta", **where, delta=p, logprobs=[]) for p in pieces),
        event("response.output_text.done", **where, text=text, logprobs=[]),
        event("response.content_part.done", **where, part={**part, "text": text}),
        event(
            "response.output_item.done",
            output_index=output_index,
            item={**item, "status": "completed", "content": [{**part, "text": text}]},
        ),
    ]


def reasoning_item(output_index: int, *summaries: list[str]) -> list[str]:
    item = {"id": "rs_1", "type": "reasoning", "summary": []}
    frames = [event("response.output_item.added", output_index=output_index, item=item)]
    for index, pieces in enumerate(summaries):
        where = {"item_id": "rs_1", "output_index": output_index, "summary_index": index}
        part = {"type": "summary_text", "text": ""}
        frames.append(event("response.reasoning_summary_part.added", **where, part=part))
        frames += [event("response.reasoning_summary_text.delta", **where, delta=p) for p in pieces]
        text = "".join(pieces)
        frames.append(event("response.reasoning_summary_text.done", **where, text=text))
        frames.append(
            event("response.reasoning_summary_part.done", **where, part={**part, "text": text})
        )
    frames.append(event("response.output_item.done", output_index=output_index, item=item))
    return frames


def function_call(output_index: int, call_id: str, name: str, *fragments: str) -> list[str]:
    item_id = f"fc_{call_id}"
    item = {"id": item_id, "type": "function_call", "call_id": call_id, "name": name}
    where = {"item_id": item_id, "output_index": output_index}
    arguments = "".join(fragments)
    return [
        event(
            "response.output_item.added",
            output_index=output_index,
            item={**item, "arguments": "", "status": "in_progress"},
        ),
        *(event("response.function_call_arguments.delta", **where, delta=f) for f in fragments),
        event("response.function_call_arguments.done", **where, arguments=arguments),
        event(
            "response.output_item.done",
            output_index=output_index,
            item={**item, "arguments": arguments, "status": "completed"},
        ),
    ]


def text_answer(*pieces: str) -> list[str]:
    return [*CREATED, *message_item(0, *pieces), completed()]


def whole(text: str | None, call: tuple[str, str, str] | None = None) -> dict[str, Any]:
    """A response answered without streaming."""
    output: list[dict[str, Any]] = []
    if text is not None:
        part = {"type": "output_text", "text": text, "annotations": []}
        output.append(
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [part],
            }
        )
    if call is not None:
        call_id, name, arguments = call
        output.append(
            {
                "id": "fc_1",
                "type": "function_call",
                "call_id": call_id,
                "name": name,
                "arguments": arguments,
                "status": "completed",
            }
        )
    return response("completed", usage(20, 5), output=output)


# ---- fixtures and helpers -----------------------------------------------------------

ask = asker("openai/gpt-5")
CASE = ProviderCase(
    connect=lambda url, options=None: OpenAIResponsesProvider(
        "openai", base_url=url + "/v1", api_key="sk-test", headers={"x-team": "pi"}, options=options
    ),
    ask=ask,
    text_answer=text_answer,
    model=("openai", "gpt-5"),
    drop_after=5,
    unfinished=[*CREATED, *message_item(0, "half")],  # no response.completed
    held_open=[*CREATED, *message_item(0, "thinking about it")[:3]],
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
    api="openai-responses",
    whole_text=whole("whole"),
    whole_tool=whole(None, ("call_1", "read", '{"path": "a"}')),
    split_tool_call=[
        *CREATED,
        *message_item(0, "Reading."),
        *function_call(1, "call_Ab12", "read", '{"pa', 'th": "src/', 'main.py"}'),
        completed(),
    ],
    split_call_id="call_Ab12",
    parallel_tool_calls=[
        *CREATED,
        *function_call(0, "call_1", "read", '{"path":', ' "a"}'),
        *function_call(1, "call_2", "read", '{"path": "b"}'),
        completed(),
    ],
    parallel_call_ids=("call_1", "call_2"),
    cut_for_length=[  # an incomplete response, for max_output_tokens
        *CREATED,
        *message_item(0, "cut"),
        event(
            "response.incomplete",
            response=response(
                "incomplete", usage(10, 100), incomplete_details={"reason": "max_output_tokens"}
            ),
        ),
    ],
    priced_model="openai/gpt-5",
    priced_answer=[*CREATED, *message_item(0, "ok"), completed(usage(1000, 50, cached=400))],
    priced_usage=(600, 50, 400, 0),
    # gpt-5: $1.25 in, $10 out, $0.125 cached per million tokens
    priced_cost=(600 * 1.25 + 50 * 10.0 + 400 * 0.125) / 1e6,
    refused_status=400,
    refused_body={
        "error": {
            "message": "Unsupported parameter: 'reasoning.effort'",
            "type": "invalid_request_error",
        }
    },
    refused_message="openai returned HTTP 400: Unsupported parameter: 'reasoning.effort'",
)


@pytest.fixture
def case() -> ProviderCase:
    return CASE


class TestTransport(TransportTests):
    """The shared streaming, retry and cancellation tests, against the Responses API."""


class TestAnswers(AnswerTests):
    """The shared tests of what an answer's frames become, against the Responses API."""


# ---- streaming ---------------------------------------------------------------------


async def test_reasoning_summaries_stream_as_thinking_before_the_text(
    server: LoopbackServer, provider: OpenAIResponsesProvider
) -> None:
    frames = [
        *CREATED,
        *reasoning_item(0, ["The user ", "greets me."], ["Answer briefly."]),
        *message_item(1, "Hi!"),
        completed(),
    ]
    server.reply(Stream(frames))

    events = await collect(provider.stream(ask(thinking="medium")))

    thinking = [e.text for e in events if isinstance(e, ThinkingDelta)]
    assert thinking == ["The user ", "greets me.", "\n\n", "Answer briefly."]
    assert final(events).content == (
        ThinkingContent("The user greets me.\n\nAnswer briefly."),
        TextContent("Hi!"),
    )
    assert server.requests[0].body["reasoning"] == {"effort": "medium", "summary": "auto"}


# ---- the request ------------------------------------------------------------------


async def test_request_carries_model_instructions_tools_and_tool_results(
    server: LoopbackServer, provider: OpenAIResponsesProvider
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
    assert request.path == "/v1/responses"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.headers["x-team"] == "pi"
    body = request.body
    assert body["model"] == "gpt-5"
    assert body["stream"] is True
    assert body["instructions"] == "You are terse."
    assert body["max_output_tokens"] == 128_000
    assert "reasoning" not in body
    assert body["input"] == [
        {
            "type": "message",
            "role": "user",
            "content": [
                {"type": "input_text", "text": "look"},
                {
                    "type": "input_image",
                    "image_url": "data:image/png;base64,aGk=",
                    "detail": "auto",
                },
            ],
        },
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Reading.", "annotations": []}],
            "status": "completed",
            "id": "msg_1",
        },
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "read",
            "arguments": '{"path": "a"}',
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "no such file"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "name": "read",
            "description": "Read a file",
            "parameters": READ_TOOL.parameters,
            "strict": False,
        }
    ]


async def test_llama_server_accepts_a_second_turn_and_a_tool_round_trip(
    server: LoopbackServer, provider: OpenAIResponsesProvider
) -> None:
    # llama-server reads an item without "type" only as an input message: an earlier
    # assistant answer sent that way is refused with HTTP 400.
    server.check = real_servers.llama_server_responses
    server.reply(Stream(text_answer("second")), Stream(text_answer("after the tool")))
    second_turn = (
        UserMessage.of("hi"),
        AssistantMessage((TextContent("Hello."),)),
        UserMessage.of("and now?"),
    )
    tool_round = (
        UserMessage.of("read a"),
        AssistantMessage((TextContent("Reading."), ToolCall("read", {"path": "a"}, "call_1"))),
        ToolResultMessage("call_1", "read", (TextContent("contents"),)),
    )

    first = await collect(stream_with_retry(provider, ask(*second_turn), FAST_RETRY))
    second = await collect(stream_with_retry(provider, ask(*tool_round), FAST_RETRY))

    assert final(first).text == "second"
    assert final(second).text == "after the tool"
    for request in server.requests:
        assert all("type" in item for item in request.body["input"])


def test_the_loopback_llama_server_refuses_an_untyped_assistant_item() -> None:
    refusal = real_servers.llama_server_responses(
        {"input": [{"role": "assistant", "content": "Hello."}]}
    )

    assert refusal is not None
    assert refusal.status == 400
    assert refusal.body["error"]["message"] == "Cannot determine type of 'item'"


# ---- failures -----------------------------------------------------------------------


async def test_a_failed_response_in_the_stream_is_reported(
    server: LoopbackServer, provider: OpenAIResponsesProvider
) -> None:
    failed = response("failed", error={"code": "server_error", "message": "Something broke"})
    server.reply(Stream([*CREATED, event("response.failed", response=failed)]))

    with pytest.raises(ProviderError) as failure:
        await collect(provider.stream(ask()))

    assert failure.value.retryable
    assert (
        str(failure.value) == "openai reported an error mid-stream (server_error): Something broke"
    )


async def test_an_error_event_litellm_ends_the_stream_with_is_retried(
    server: LoopbackServer, provider: OpenAIResponsesProvider
) -> None:
    failure = real_servers.litellm_responses_error(
        "litellm.InternalServerError: OpenAIException - Connection error.", 500
    )
    server.reply(Stream([*CREATED, failure]), Stream(text_answer("whole")))

    events = await collect(stream_with_retry(provider, ask(), FAST_RETRY))

    [retry] = [e for e in events if isinstance(e, StreamRetry)]
    assert "litellm.InternalServerError" in retry.error
    assert final(events).text == "whole"
