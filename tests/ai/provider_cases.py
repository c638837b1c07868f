"""What the three adapter test modules share: request helpers and the transport-level tests.

Each test module describes its API in a `ProviderCase` (served by its `case` fixture) and
subclasses `TransportTests`, so the same tests run against every adapter.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from loopback import Failure, LoopbackServer, Raw, Stream, cancel_after_first_event, collect
from real_servers import llama_error

from piagents.ai.events import StreamEnd, StreamEvent, StreamRetry, TextDelta, ToolCallDelta
from piagents.ai.messages import AssistantMessage, Message, TextContent, ToolCall, UserMessage
from piagents.ai.model_options import Compat, ModelOptions, ProviderOptions
from piagents.ai.models import ModelRef, ThinkingLevel
from piagents.ai.provider import ModelRequest, Provider, ProviderError, ToolSpec
from piagents.ai.retry import RetryPolicy, stream_with_retry
from support import TIMEOUT_S

FAST_RETRY = RetryPolicy(max_retries=3, base_delay_s=0.01)
READ_TOOL = ToolSpec(
    "read",
    "Read a file",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


def asker(default_model: str) -> Callable[..., ModelRequest]:
    """An `ask(*messages, model=..., tools=..., thinking=..., max_output=...)` for one API."""

    def ask(
        *messages: Message,
        model: str = default_model,
        tools: tuple[ToolSpec, ...] = (),
        thinking: ThinkingLevel = "off",
        max_output: int | None = None,
    ) -> ModelRequest:
        return ModelRequest(
            ModelRef.parse(model),
            "You are terse.",
            messages or (UserMessage.of("hi"),),
            tools,
            thinking,
            max_output,
        )

    return ask


class RecordedSleeps:
    """A `sleep` for `stream_with_retry` that records each delay instead of waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


PATIENT_RETRY = RetryPolicy(max_retries=3, base_delay_s=2.0, max_delay_s=60.0)


def final(events: list[StreamEvent]) -> AssistantMessage:
    assert isinstance(events[-1], StreamEnd)
    assert sum(isinstance(e, StreamEnd) for e in events) == 1
    return events[-1].message


@dataclass(frozen=True, slots=True)
class ProviderCase:
    """One API as the shared tests see it."""

    # the loopback server's URL (and options) -> a provider with `aclose`
    connect: Callable[..., Any]
    ask: Callable[..., ModelRequest]
    text_answer: Callable[..., list[str]]  # a complete answer streaming these text pieces
    model: tuple[str, str]  # (provider, model) of the answer to `ask()`
    drop_after: int  # frames of `text_answer(...)` sent (one text delta among them) before a drop
    unfinished: Sequence[str]  # an answer that ends before it is complete
    held_open: Sequence[str]  # the start of an answer, with at least one text delta
    rate_limited: dict[str, Any]  # a 429 body, and the message it carries
    rate_limit_message: str
    server_error: dict[str, Any]  # a 500 body, and the message it carries
    server_error_message: str
    api: str  # the wire API the answers name
    whole_text: dict[str, Any]  # the answer "whole" as the API sends it without streaming
    whole_tool: dict[str, Any]  # a call read(path="a") with id call_1, likewise
    # "Reading.", then read(path="src/main.py"), its arguments in the pieces '{"pa',
    # 'th": "src/' and 'main.py"}'; and the id of that call
    split_tool_call: Sequence[str]
    split_call_id: str
    # read(path="a") then read(path="b"), the first's arguments in two pieces; their ids
    parallel_tool_calls: Sequence[str]
    parallel_call_ids: tuple[str, str]
    cut_for_length: Sequence[str]  # the answer "cut", stopped by the output limit
    # an answer whose usage has cached tokens: the model asked, (input, output,
    # cache read, cache write) it comes to, and its cost in dollars
    priced_model: str
    priced_answer: Sequence[str]
    priced_usage: tuple[int, int, int, int]
    priced_cost: float
    # a request the server refuses for good: its status, the body, the error it gives
    refused_status: int
    refused_body: dict[str, Any]
    refused_message: str


class TransportTests:
    """Streaming, retries, dropped connections and cancellation, the same for every API."""

    async def test_text_streams_as_deltas_and_ends_with_the_whole_message(
        self, server: LoopbackServer, provider: Provider, case: ProviderCase
    ) -> None:
        server.reply(Stream(case.text_answer("Hel", "lo ", "there")))

        events = await collect(provider.stream(case.ask()))

        assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hel", "lo ", "there"]
        message = final(events)
        assert message.content == (TextContent("Hello there"),)
        assert message.stop_reason == "stop"
        assert (message.provider, message.model) == case.model
        assert message.api == case.api

    async def test_rate_limit_is_retried_and_the_second_attempt_succeeds(
        self, server: LoopbackServer, provider: Provider, case: ProviderCase
    ) -> None:
        server.reply(Failure(429, case.rate_limited), Stream(case.text_answer("ok")))

        events = await collect(stream_with_retry(provider, case.ask(), FAST_RETRY))

        [retry] = [e for e in events if isinstance(e, StreamRetry)]
        assert retry.attempt == 1
        assert "429" in retry.error
        assert case.rate_limit_message in retry.error
        assert retry.error == f"{provider.name} returned HTTP 429: {case.rate_limit_message}"
        assert final(events).text == "ok"
        assert len(server.requests) == 2

    async def test_server_error_that_keeps_failing_ends_with_a_clear_error_message(
        self, server: LoopbackServer, provider: Provider, case: ProviderCase
    ) -> None:
        server.reply(*[Failure(500, case.server_error)] * 4)

        events = await collect(stream_with_retry(provider, case.ask(), FAST_RETRY))

        assert sum(isinstance(e, StreamRetry) for e in events) == 3
        message = final(events)
        assert message.stop_reason == "error"
        assert message.error_message == (
            f"{provider.name} returned HTTP 500: {case.server_error_message}"
        )
        assert len(server.requests) == 4

    async def test_connection_dropped_mid_stream_is_a_retryable_error(
        self, server: LoopbackServer, provider: Provider, case: ProviderCase
    ) -> None:
        server.reply(Stream(case.text_answer("a", "b", "c"), drop_after=case.drop_after))

        with pytest.raises(ProviderError) as failure:
            await collect(provider.stream(case.ask()))

        assert failure.value.retryable
        assert "connection" in str(failure.value)

    async def test_stream_that_ends_before_the_answer_is_complete_is_a_retryable_error(
        self, server: LoopbackServer, provider: Provider, case: ProviderCase
    ) -> None:
        server.reply(Stream(case.unfinished))

        with pytest.raises(ProviderError) as failure:
            await collect(provider.stream(case.ask()))

        assert failure.value.retryable

    async def test_dropped_stream_is_retried_after_a_stream_retry_event(
        self, server: LoopbackServer, provider: Provider, case: ProviderCase
    ) -> None:
        server.reply(
            Stream(case.text_answer("lost"), drop_after=case.drop_after),
            Stream(case.text_answer("kept")),
        )

        events = await collect(stream_with_retry(provider, case.ask(), FAST_RETRY))

        kinds = [type(e).__name__ for e in events]
        assert kinds == ["TextDelta", "StreamRetry", "TextDelta", "StreamEnd"]
        assert final(events).text == "kept"

    async def test_cancelling_the_consumer_closes_the_connection(
        self, server: LoopbackServer, provider: Provider, case: ProviderCase
    ) -> None:
        server.reply(Stream(case.held_open, hold_open=True))
        events = provider.stream(case.ask())

        await cancel_after_first_event(events)

        await asyncio.wait_for(server.client_left.wait(), TIMEOUT_S)  # a bound, not a pace
        assert server.requests[0].client_left_early

    async def test_a_rate_limit_waits_as_long_as_its_retry_after_asks(
        self, server: LoopbackServer, provider: Provider, case: ProviderCase
    ) -> None:
        server.reply(
            Failure(429, case.rate_limited, {"retry-after": "5"}), Stream(case.text_answer("ok"))
        )
        sleeps = RecordedSleeps()

        events = await collect(stream_with_retry(provider, case.ask(), PATIENT_RETRY, sleep=sleeps))

        assert sleeps.delays == [5.0]
        [retry] = [e for e in events if isinstance(e, StreamRetry)]
        assert retry.delay_s == 5.0
        assert final(events).text == "ok"

    async def test_retry_after_ms_wins_and_is_read_in_milliseconds(
        self, server: LoopbackServer, provider: Provider, case: ProviderCase
    ) -> None:
        headers = {"retry-after-ms": "1500", "retry-after": "2"}
        server.reply(Failure(429, case.rate_limited, headers), Stream(case.text_answer("ok")))
        sleeps = RecordedSleeps()

        await collect(stream_with_retry(provider, case.ask(), PATIENT_RETRY, sleep=sleeps))

        assert sleeps.delays == [1.5]

    async def test_without_retry_after_the_backoff_doubles(
        self, server: LoopbackServer, provider: Provider, case: ProviderCase
    ) -> None:
        server.reply(*[Failure(429, case.rate_limited)] * 2, Stream(case.text_answer("ok")))
        sleeps = RecordedSleeps()

        await collect(stream_with_retry(provider, case.ask(), PATIENT_RETRY, sleep=sleeps))

        assert sleeps.delays == [2.0, 4.0]

    async def test_a_retry_after_beyond_the_cap_fails_at_once_naming_the_setting(
        self, server: LoopbackServer, provider: Provider, case: ProviderCase
    ) -> None:
        server.reply(Failure(429, case.rate_limited, {"retry-after": "120"}))
        sleeps = RecordedSleeps()

        events = await collect(stream_with_retry(provider, case.ask(), PATIENT_RETRY, sleep=sleeps))

        assert sleeps.delays == []
        message = final(events)
        assert message.stop_reason == "error"
        assert "retry after 120 s" in (message.error_message or "")
        assert "retry.maxDelayMs" in (message.error_message or "")
        assert len(server.requests) == 1

    async def test_a_server_error_sent_as_an_event_stream_shows_its_message(
        self, server: LoopbackServer, provider: Provider, case: ProviderCase
    ) -> None:
        # llama-server can answer a streaming request with a 500 whose body is an SSE frame.
        error = llama_error(500, "Failed to parse tool call arguments as JSON", "server_error")
        server.reply(Raw(500, "text/event-stream", f"data: {json.dumps(error)}\n\n"))

        with pytest.raises(ProviderError) as failure:
            await collect(provider.stream(case.ask()))

        assert str(failure.value) == (
            f"{provider.name} returned HTTP 500: Failed to parse tool call arguments as JSON"
        )
        assert failure.value.retryable

    async def test_a_connection_that_cannot_be_made_names_the_url(
        self, case: ProviderCase, unused_port: int
    ) -> None:
        provider = case.connect(f"http://127.0.0.1:{unused_port}")
        try:
            with pytest.raises(ProviderError) as failure:
                await collect(provider.stream(case.ask()))
        finally:
            await provider.aclose()

        assert failure.value.retryable
        assert f"http://127.0.0.1:{unused_port}/" in str(failure.value)

    async def test_a_whole_json_answer_to_a_streaming_request_is_read_as_the_answer(
        self, server: LoopbackServer, provider: Provider, case: ProviderCase
    ) -> None:
        server.reply(Raw(200, "application/json", json.dumps(case.whole_text)))

        events = await collect(provider.stream(case.ask()))

        assert [e.text for e in events if isinstance(e, TextDelta)] == ["whole"]
        assert final(events).text == "whole"
        assert final(events).stop_reason == "stop"

    async def test_an_answer_that_is_neither_a_stream_nor_json_says_what_came(
        self, server: LoopbackServer, provider: Provider, case: ProviderCase
    ) -> None:
        server.reply(Raw(200, "text/html", "<html><body>Proxy login</body></html>"))

        with pytest.raises(ProviderError) as failure:
            await collect(provider.stream(case.ask()))

        assert "text/html" in str(failure.value)
        assert "Proxy login" in str(failure.value)

    async def test_tool_choice_from_compat_is_sent_when_tools_are_offered(
        self, server: LoopbackServer, case: ProviderCase
    ) -> None:
        options = ProviderOptions(ModelOptions(compat=Compat(tool_choice="auto")))
        provider = case.connect(server.url, options)
        server.reply(Stream(case.text_answer("a")), Stream(case.text_answer("b")))
        try:
            await collect(provider.stream(case.ask(tools=(READ_TOOL,))))
            await collect(provider.stream(case.ask()))
        finally:
            await provider.aclose()

        with_tools, without = (r.body for r in server.requests)
        assert with_tools["tool_choice"] in ("auto", {"type": "auto"})
        assert "tool_choice" not in without

    async def test_without_streamed_tools_a_request_with_tools_is_answered_whole(
        self, server: LoopbackServer, case: ProviderCase
    ) -> None:
        options = ProviderOptions(ModelOptions(compat=Compat(stream_tools=False)))
        provider = case.connect(server.url, options)
        server.reply(
            Raw(200, "application/json", json.dumps(case.whole_tool)), Stream(case.text_answer("s"))
        )
        try:
            events = await collect(provider.stream(case.ask(tools=(READ_TOOL,))))
            streamed = await collect(provider.stream(case.ask()))
        finally:
            await provider.aclose()

        whole, plain = (r.body for r in server.requests)
        assert not whole.get("stream")
        assert plain["stream"] is True
        deltas = [e for e in events if isinstance(e, ToolCallDelta)]
        assert (deltas[0].id, deltas[0].name) == ("call_1", "read")
        message = final(events)
        assert message.stop_reason == "toolUse"
        assert message.tool_calls == [ToolCall("read", {"path": "a"}, "call_1")]
        assert final(streamed).text == "s"


class AnswerTests:
    """What the frames of an answer become, the same for every API."""

    async def test_tool_call_arguments_split_across_chunks_are_joined(
        self, server: LoopbackServer, provider: Provider, case: ProviderCase
    ) -> None:
        server.reply(Stream(case.split_tool_call))

        events = await collect(provider.stream(case.ask(tools=(READ_TOOL,))))

        deltas = [e for e in events if isinstance(e, ToolCallDelta)]
        assert [d.args_fragment for d in deltas] == ["", '{"pa', 'th": "src/', 'main.py"}']
        assert {(d.index, d.id, d.name) for d in deltas} == {(0, case.split_call_id, "read")}
        message = final(events)
        assert message.content == (
            TextContent("Reading."),
            ToolCall("read", {"path": "src/main.py"}, case.split_call_id),
        )
        assert message.stop_reason == "toolUse"

    async def test_parallel_tool_calls_keep_their_order_and_ids(
        self, server: LoopbackServer, provider: Provider, case: ProviderCase
    ) -> None:
        server.reply(Stream(case.parallel_tool_calls))

        events = await collect(provider.stream(case.ask(tools=(READ_TOOL,))))

        first, second = case.parallel_call_ids
        assert final(events).tool_calls == [
            ToolCall("read", {"path": "a"}, first),
            ToolCall("read", {"path": "b"}, second),
        ]
        assert {(d.index, d.id) for d in events if isinstance(d, ToolCallDelta)} == {
            (0, first),
            (1, second),
        }

    async def test_an_answer_stopped_by_the_output_limit_stops_with_length(
        self, server: LoopbackServer, provider: Provider, case: ProviderCase
    ) -> None:
        server.reply(Stream(case.cut_for_length))

        message = final(await collect(provider.stream(case.ask())))

        assert message.stop_reason == "length"
        assert message.text == "cut"

    async def test_usage_counts_cached_tokens_apart_and_is_priced(
        self, server: LoopbackServer, provider: Provider, case: ProviderCase
    ) -> None:
        server.reply(Stream(case.priced_answer))

        message = final(await collect(provider.stream(case.ask(model=case.priced_model))))

        u = message.usage
        assert (u.input, u.output, u.cache_read, u.cache_write) == case.priced_usage
        assert u.cost == pytest.approx(case.priced_cost)

    async def test_a_refused_request_is_not_retried(
        self, server: LoopbackServer, provider: Provider, case: ProviderCase
    ) -> None:
        server.reply(*[Failure(case.refused_status, case.refused_body)] * 2)

        with pytest.raises(ProviderError) as failure:
            await collect(provider.stream(case.ask()))
        events = await collect(stream_with_retry(provider, case.ask(), FAST_RETRY))

        assert not failure.value.retryable
        assert failure.value.status == case.refused_status
        assert str(failure.value) == case.refused_message
        assert not any(isinstance(e, StreamRetry) for e in events)
        assert final(events).error_message == case.refused_message
        assert len(server.requests) == 2
