"""One model response, streamed: deltas reported as they arrive, the message at the end.

A response cut short by cancellation (an abort) is handed over as a partial
message (its text and thinking so far, stop reason `aborted`) before the
cancellation goes on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from piagents.ai.events import StreamEnd, StreamRetry, TextDelta, ThinkingDelta, ToolCallDelta
from piagents.ai.messages import AssistantContent, AssistantMessage, TextContent, ThinkingContent
from piagents.ai.provider import ModelRequest, Provider
from piagents.ai.retry import RetryPolicy, close_stream, stream_with_retry
from piagents.harness.events import AssistantDelta, AssistantRetry, LoopEvent


async def stream_response(
    provider: Provider,
    request: ModelRequest,
    retry: RetryPolicy,
    emit: Callable[[LoopEvent], None],
    on_cancelled: Callable[[AssistantMessage], None],
) -> AssistantMessage:
    """The provider's answer to `request`, retried by `retry`; `on_cancelled` gets the
    partial message when the stream is cancelled."""
    text: list[str] = []
    thinking: list[str] = []
    names: dict[int, str] = {}
    try:
        events = stream_with_retry(provider, request, retry)
        async for event in events:
            if isinstance(event, TextDelta):
                text.append(event.text)
                emit(AssistantDelta("text", event.text))
            elif isinstance(event, ThinkingDelta):
                thinking.append(event.text)
                emit(AssistantDelta("thinking", event.text))
            elif isinstance(event, ToolCallDelta):
                # Providers name the tool when its call starts; later pieces may not.
                tool = names.setdefault(event.index, event.name) or event.name
                emit(AssistantDelta("toolCall", event.args_fragment, tool))
            elif isinstance(event, StreamRetry):
                text.clear()
                thinking.clear()
                names.clear()
                emit(AssistantRetry(event.attempt, event.delay_s, event.error))
            elif isinstance(event, StreamEnd):
                await close_stream(events)
                return event.message
    except asyncio.CancelledError:
        on_cancelled(partial_message(request, provider.api, text, thinking))
        raise
    raise AssertionError("unreachable: stream_with_retry always ends with StreamEnd")


def partial_message(
    request: ModelRequest, api: str, text: list[str], thinking: list[str]
) -> AssistantMessage:
    content: list[AssistantContent] = []
    if thinking:
        content.append(ThinkingContent("".join(thinking)))
    if text:
        content.append(TextContent("".join(text)))
    return AssistantMessage(
        tuple(content),
        "aborted",
        provider=request.model.provider,
        model=request.model.model_id,
        api=api,
    )
