"""Anthropic Messages API streaming."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator, Iterator
from typing import Any

from anthropic import AsyncAnthropic
from anthropic.types import (
    InputJSONDelta,
    MessageDeltaUsage,
    RawContentBlockDeltaEvent,
    RawContentBlockStartEvent,
    RawMessageDeltaEvent,
    RawMessageStartEvent,
    RawMessageStopEvent,
    RawMessageStreamEvent,
    SignatureDelta,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolUseBlock,
    Usage,
)
from anthropic.types import Message as WholeMessage

from piagents.ai._sdk import (
    ContentBuilder,
    SDKProvider,
    client_options,
    complete_sdk,
    max_output,
    priced_usage,
    stream_sdk,
)
from piagents.ai.errors import anthropic_error
from piagents.ai.events import StreamEvent
from piagents.ai.messages import (
    AssistantMessage,
    Message,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserContent,
    UserMessage,
)
from piagents.ai.model_options import Compat, ProviderOptions
from piagents.ai.models import ANTHROPIC_BUDGETS, ModelInfo, model_info
from piagents.ai.provider import ModelRequest, ToolSpec

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "toolUse",
}

WHOLE_ANSWER_TIMEOUT_S = 600.0  # a request made without streaming (compat.streamTools false)
ANSWER_TOKENS = 1024  # room left for the answer when thinking takes most of max_tokens
_CACHE = {"type": "ephemeral"}


API = "anthropic-messages"


class AnthropicMessagesProvider(SDKProvider[AsyncAnthropic]):
    api = API

    def __init__(
        self,
        name: str,
        *,
        base_url: str | None,
        api_key: str,
        headers: dict[str, str],
        options: ProviderOptions | None = None,
    ) -> None:
        super().__init__(
            name,
            AsyncAnthropic(**client_options(base_url=base_url, api_key=api_key, headers=headers)),
            options=options,
            base_url=base_url,
            probe_headers={"x-api-key": api_key, "Authorization": f"Bearer {api_key}", **headers},
        )

    def _stream(
        self, request: ModelRequest, info: ModelInfo, compat: Compat
    ) -> AsyncGenerator[StreamEvent, None]:
        params = _params(request, info, compat)
        create = self._client.messages.create
        if request.tools and compat.stream_tools is False:
            # A whole answer may take long: the SDK refuses to guess a timeout for it.
            return complete_sdk(
                self.name,
                lambda: create(**params, timeout=WHOLE_ANSWER_TIMEOUT_S),
                _EventReader(request),
                anthropic_error,
            )
        return stream_sdk(
            self.name,
            lambda: create(**params, stream=True),
            _EventReader(request),
            anthropic_error,
        )


def _params(request: ModelRequest, info: ModelInfo, compat: Compat | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {
        "model": request.model.model_id,
        "messages": anthropic_messages(request.messages),
        "max_tokens": max_output(request, info),
    }
    if request.system_prompt:
        params["system"] = [
            {"type": "text", "text": request.system_prompt, "cache_control": _CACHE}
        ]
    if request.tools:
        params["tools"] = [_tool(t) for t in request.tools]
        if compat is not None and compat.tool_choice is not None:
            params["tool_choice"] = {"type": "auto" if compat.tool_choice == "auto" else "any"}
    if request.thinking != "off":
        max_tokens, budget = thinking_budget(request, info)
        params["max_tokens"] = max_tokens
        params["thinking"] = {"type": "enabled", "budget_tokens": budget}
    return params


def thinking_budget(request: ModelRequest, info: ModelInfo | None = None) -> tuple[int, int]:
    """`(max_tokens, budget_tokens)` for a thinking level other than off: the budget must stay
    below max_tokens, and both within the model's output limit."""
    info = info or model_info(request.model)
    limit = info.max_output
    budget = ANTHROPIC_BUDGETS[request.thinking]
    max_tokens = max(max_output(request, info), min(budget + ANSWER_TOKENS, limit))
    return max_tokens, max(1024, min(budget, max_tokens - ANSWER_TOKENS))


class _EventReader:
    """Turns the events of one streamed message into our events and the final message."""

    def __init__(self, request: ModelRequest) -> None:
        self.request = request
        self.content = ContentBuilder()
        self.stop_reason: str | None = None
        self.stopped = False
        self._tokens = {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}

    def read(self, event: RawMessageStreamEvent) -> Iterator[StreamEvent]:
        if isinstance(event, RawMessageStartEvent):
            self._count(event.message.usage)
        elif isinstance(event, RawContentBlockStartEvent):
            yield from self._start(event)
        elif isinstance(event, RawContentBlockDeltaEvent):
            yield from self._delta(event)
        elif isinstance(event, RawMessageDeltaEvent):
            self.stop_reason = event.delta.stop_reason
            self._count(event.usage)
        elif isinstance(event, RawMessageStopEvent):
            self.stopped = True

    def _start(self, event: RawContentBlockStartEvent) -> Iterator[StreamEvent]:
        block = event.content_block
        if isinstance(block, TextBlock) and block.text:
            yield self.content.text(event.index, block.text)
        elif isinstance(block, ThinkingBlock) and block.thinking:
            yield self.content.thinking(event.index, block.thinking)
        elif isinstance(block, ToolUseBlock):
            yield self.content.start_tool(event.index, block.id, block.name)

    def _delta(self, event: RawContentBlockDeltaEvent) -> Iterator[StreamEvent]:
        delta = event.delta
        if isinstance(delta, TextDelta) and delta.text:
            yield self.content.text(event.index, delta.text)
        elif isinstance(delta, ThinkingDelta) and delta.thinking:
            yield self.content.thinking(event.index, delta.thinking)
        elif isinstance(delta, SignatureDelta):
            self.content.sign(event.index, delta.signature)
        elif (
            isinstance(delta, InputJSONDelta)
            and delta.partial_json
            and self.content.has_tool(event.index)
        ):
            yield self.content.tool_args(event.index, delta.partial_json)

    def _count(self, usage: Usage | MessageDeltaUsage) -> None:
        """Usage arrives in message_start and (cumulative) in message_delta; compatible servers
        may leave fields out."""
        for ours, theirs in (
            ("input", "input_tokens"),
            ("output", "output_tokens"),
            ("cache_read", "cache_read_input_tokens"),
            ("cache_write", "cache_creation_input_tokens"),
        ):
            value = getattr(usage, theirs, None)
            if isinstance(value, int):
                self._tokens[ours] = value

    def complete(self, body: dict[str, Any]) -> Iterator[StreamEvent]:
        """A whole message: its content blocks in order, its stop reason and usage."""
        message = WholeMessage.model_validate(body)
        self._count(message.usage)
        for index, block in enumerate(message.content):
            if isinstance(block, TextBlock) and block.text:
                yield self.content.text(index, block.text)
            elif isinstance(block, ThinkingBlock):
                if block.thinking:
                    yield self.content.thinking(index, block.thinking)
                self.content.sign(index, block.signature)
            elif isinstance(block, ToolUseBlock):
                yield self.content.start_tool(index, block.id, block.name)
                self.content.set_tool_args(index, json.dumps(block.input))
        self.stop_reason = message.stop_reason
        self.stopped = True

    def result(self) -> AssistantMessage | None:
        return self.message() if self.stopped else None

    def message(self) -> AssistantMessage:
        reason = self.stop_reason or "end_turn"
        stop = _STOP_REASONS.get(reason)
        error = None
        if stop is None:
            stop, error = "error", f"the model stopped: {reason}"
        t = self._tokens
        usage = priced_usage(
            self.request.model, t["input"], t["output"], t["cache_read"], t["cache_write"]
        )
        return AssistantMessage(
            self.content.content(),
            stop,
            usage,
            self.request.model.provider,
            self.request.model.model_id,
            error,
            api=API,
        )


# ---- our messages in Messages form ----------------------------------------------


def anthropic_messages(messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    after_result = False
    for message in messages:
        if isinstance(message, ToolResultMessage):
            # All results for one assistant turn go back in one user message.
            if after_result:
                out[-1]["content"].append(_tool_result(message))
            else:
                out.append({"role": "user", "content": [_tool_result(message)]})
            after_result = True
            continue
        after_result = False
        if isinstance(message, UserMessage):
            out.append({"role": "user", "content": _parts(message.content)})
        else:
            blocks = [b for c in message.content if (b := _assistant_block(c)) is not None]
            if blocks:
                out.append({"role": "assistant", "content": blocks})
    _mark_cache_breakpoint(out)
    return out


def _mark_cache_breakpoint(messages: list[dict[str, Any]]) -> None:
    """Cache the conversation up to the newest user turn, so the next request reads it."""
    for m in reversed(messages):
        if m["role"] == "user" and m["content"]:
            m["content"][-1] = {**m["content"][-1], "cache_control": _CACHE}
            return


def _parts(content: tuple[UserContent, ...]) -> list[dict[str, Any]]:
    """The API rejects empty text blocks."""
    return [_part(c) for c in content if not (isinstance(c, TextContent) and not c.text)]


def _part(c: UserContent) -> dict[str, Any]:
    if isinstance(c, TextContent):
        return {"type": "text", "text": c.text}
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": c.mime_type, "data": c.data},
    }


def _assistant_block(c: TextContent | ThinkingContent | ToolCall) -> dict[str, Any] | None:
    if isinstance(c, TextContent):
        return {"type": "text", "text": c.text} if c.text else None
    if isinstance(c, ThinkingContent):
        # Only signed thinking can go back; unsigned thinking came from elsewhere.
        if c.signature is None:
            return None
        return {"type": "thinking", "thinking": c.thinking, "signature": c.signature}
    return {"type": "tool_use", "id": tool_id(c.id), "name": c.name, "input": c.args}


def _tool_result(message: ToolResultMessage) -> dict[str, Any]:
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": tool_id(message.tool_call_id),
        "content": _parts(message.content),
    }
    if message.is_error:
        block["is_error"] = True
    return block


def tool_id(call_id: str) -> str:
    """Anthropic accepts `[a-zA-Z0-9_-]{1,64}` ids; calls made by other providers may not fit."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", call_id)[:64] or "call"


def _tool(spec: ToolSpec) -> dict[str, Any]:
    return {"name": spec.name, "description": spec.description, "input_schema": spec.parameters}
