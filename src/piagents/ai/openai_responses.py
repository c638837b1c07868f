"""OpenAI Responses API streaming."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Iterator
from typing import Any

from openai import AsyncOpenAI
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseErrorEvent,
    ResponseFailedEvent,
    ResponseFunctionCallArgumentsDeltaEvent,
    ResponseFunctionToolCall,
    ResponseIncompleteEvent,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseReasoningItem,
    ResponseReasoningSummaryTextDeltaEvent,
    ResponseReasoningTextDeltaEvent,
    ResponseStreamEvent,
    ResponseTextDeltaEvent,
)

from piagents.ai._sdk import (
    ContentBuilder,
    SDKProvider,
    client_options,
    complete_sdk,
    data_url,
    max_output,
    priced_usage,
    stream_sdk,
)
from piagents.ai.errors import openai_error, stream_error
from piagents.ai.events import StreamEvent
from piagents.ai.messages import (
    AssistantMessage,
    Message,
    StopReason,
    TextContent,
    ToolCall,
    Usage,
    UserContent,
    UserMessage,
)
from piagents.ai.model_options import Compat, ProviderOptions
from piagents.ai.models import OPENAI_EFFORTS, ModelInfo
from piagents.ai.provider import ModelRequest, ToolSpec

API = "openai-responses"


class OpenAIResponsesProvider(SDKProvider[AsyncOpenAI]):
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
            AsyncOpenAI(**client_options(base_url=base_url, api_key=api_key, headers=headers)),
            options=options,
            base_url=base_url,
            probe_headers={"Authorization": f"Bearer {api_key}", **headers},
        )

    def _stream(
        self, request: ModelRequest, info: ModelInfo, compat: Compat
    ) -> AsyncGenerator[StreamEvent, None]:
        params = _params(request, info, compat)
        reader = _EventReader(request, self.name)
        create = self._client.responses.create
        if request.tools and compat.stream_tools is False:
            return complete_sdk(self.name, lambda: create(**params), reader, openai_error)
        return stream_sdk(self.name, lambda: create(**params, stream=True), reader, openai_error)


def _params(request: ModelRequest, info: ModelInfo, compat: Compat) -> dict[str, Any]:
    params: dict[str, Any] = {
        "model": request.model.model_id,
        "input": response_input(request.messages),
        "max_output_tokens": max_output(request, info),
        "store": False,  # each request carries the whole conversation
    }
    if request.system_prompt:
        params["instructions"] = request.system_prompt
    if request.tools:
        params["tools"] = [_tool(t) for t in request.tools]
        if compat.tool_choice is not None:
            params["tool_choice"] = compat.tool_choice
    if request.thinking != "off":
        params["reasoning"] = {"effort": OPENAI_EFFORTS[request.thinking], "summary": "auto"}
    return params


class _EventReader:
    """Turns the events of one streamed response into our events and the final message."""

    def __init__(self, request: ModelRequest, provider: str) -> None:
        self.request = request
        self.provider = provider
        self.content = ContentBuilder()
        self.final: AssistantMessage | None = None
        self._summary_index: dict[str, int] = {}

    def read(self, event: ResponseStreamEvent) -> Iterator[StreamEvent]:
        if isinstance(event, ResponseTextDeltaEvent) and event.delta:
            yield self.content.text(event.item_id, event.delta)
        elif isinstance(event, ResponseReasoningSummaryTextDeltaEvent) and event.delta:
            # Summary parts of one reasoning item read as paragraphs.
            last = self._summary_index.setdefault(event.item_id, event.summary_index)
            if event.summary_index != last:
                self._summary_index[event.item_id] = event.summary_index
                yield self.content.thinking(event.item_id, "\n\n")
            yield self.content.thinking(event.item_id, event.delta)
        elif isinstance(event, ResponseReasoningTextDeltaEvent) and event.delta:
            yield self.content.thinking(event.item_id, event.delta)
        elif isinstance(event, ResponseOutputItemAddedEvent):
            item = event.item
            if isinstance(item, ResponseFunctionToolCall):
                yield self.content.start_tool(
                    _item_key(item, event.output_index), item.call_id, item.name
                )
        elif isinstance(event, ResponseFunctionCallArgumentsDeltaEvent) and event.delta:
            if self.content.has_tool(event.item_id):
                yield self.content.tool_args(event.item_id, event.delta)
        elif isinstance(event, ResponseOutputItemDoneEvent):
            item = event.item
            if isinstance(item, ResponseFunctionToolCall):
                key = _item_key(item, event.output_index)
                if not self.content.has_tool(key):
                    yield self.content.start_tool(key, item.call_id, item.name)
                self.content.set_tool_args(key, item.arguments)
        elif isinstance(event, ResponseCompletedEvent | ResponseIncompleteEvent):
            self.final = self._message(event.response)
        elif isinstance(event, ResponseFailedEvent):
            error = event.response.error
            code = error.code if error is not None else None
            message = error.message if error is not None else "the response failed"
            raise stream_error(self.provider, code, message, code)
        elif isinstance(event, ResponseErrorEvent):
            raise stream_error(self.provider, event.code, event.message)

    def complete(self, body: dict[str, Any]) -> Iterator[StreamEvent]:
        """A whole response: its output items in order, then its final state."""
        response = Response.model_validate(body)
        for index, item in enumerate(response.output):
            key = item.id or f"output-{index}"
            if isinstance(item, ResponseFunctionToolCall):
                yield self.content.start_tool(key, item.call_id, item.name)
                self.content.set_tool_args(key, item.arguments)
            elif isinstance(item, ResponseReasoningItem):
                summary = "\n\n".join(part.text for part in item.summary)
                if summary:
                    yield self.content.thinking(key, summary)
            elif isinstance(item, ResponseOutputMessage):
                text = "".join(p.text for p in item.content if isinstance(p, ResponseOutputText))
                if text:
                    yield self.content.text(key, text)
        if response.status == "failed":
            error = response.error
            code = error.code if error is not None else None
            message = error.message if error is not None else "the response failed"
            raise stream_error(self.provider, code, message, code)
        self.final = self._message(response)

    def result(self) -> AssistantMessage | None:
        return self.final

    def _message(self, response: Response) -> AssistantMessage:
        stop: StopReason = "toolUse" if self.content.has_tool_calls else "stop"
        error = None
        if response.status == "incomplete":
            details = response.incomplete_details
            reason = details.reason if details is not None else None
            if reason == "max_output_tokens":
                stop = "length"
            else:
                stop, error = "error", f"the response is incomplete: {reason or 'unknown reason'}"
        return AssistantMessage(
            self.content.content(),
            stop,
            self._usage(response),
            self.request.model.provider,
            self.request.model.model_id,
            error,
            api=API,
        )

    def _usage(self, response: Response) -> Usage:
        usage = response.usage
        if usage is None:
            return priced_usage(self.request.model, 0, 0)
        # Cached and cache-written tokens are part of input_tokens; we count them apart.
        details = getattr(usage, "input_tokens_details", None)
        cached = getattr(details, "cached_tokens", None) or 0
        written = getattr(details, "cache_write_tokens", None) or 0
        return priced_usage(
            self.request.model,
            usage.input_tokens - cached - written,
            usage.output_tokens,
            cached,
            written,
        )


def _item_key(item: ResponseFunctionToolCall, output_index: int) -> str:
    # Deltas name their item by id; an item without one falls back to its position.
    return item.id or f"output-{output_index}"


# ---- our messages in Responses form -------------------------------------------


def response_input(messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    """Every item says its type: servers such as llama-server read an untyped item only as
    an input message. Thinking is dropped: without stored reasoning items it cannot be
    sent back."""
    out: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        if isinstance(message, UserMessage):
            content = [_part(c) for c in message.content]
            out.append({"type": "message", "role": "user", "content": content})
        elif isinstance(message, AssistantMessage):
            texts = 0
            for c in message.content:
                if isinstance(c, TextContent) and c.text:
                    item_id = f"msg_{index}" if texts == 0 else f"msg_{index}_{texts}"
                    out.append(_output_message(c.text, item_id))
                    texts += 1
                elif isinstance(c, ToolCall):
                    out.append(_function_call(c))
        else:
            output: str | list[dict[str, Any]] = message.text
            if any(not isinstance(c, TextContent) for c in message.content):
                output = [_part(c) for c in message.content]
            out.append(
                {"type": "function_call_output", "call_id": message.tool_call_id, "output": output}
            )
    return out


def _output_message(text: str, item_id: str) -> dict[str, Any]:
    """An earlier answer as the output message it was (OpenAI wants its id and status)."""
    part = {"type": "output_text", "text": text, "annotations": []}
    return {
        "type": "message",
        "role": "assistant",
        "content": [part],
        "status": "completed",
        "id": item_id,
    }


def _part(c: UserContent) -> dict[str, Any]:
    if isinstance(c, TextContent):
        return {"type": "input_text", "text": c.text}
    return {"type": "input_image", "image_url": data_url(c), "detail": "auto"}


def _function_call(call: ToolCall) -> dict[str, Any]:
    return {
        "type": "function_call",
        "call_id": call.id,
        "name": call.name,
        "arguments": json.dumps(call.args),
    }


def _tool(spec: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "name": spec.name,
        "description": spec.description,
        "parameters": spec.parameters,
        "strict": False,
    }
