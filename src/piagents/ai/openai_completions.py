"""Chat Completions streaming, for OpenAI and OpenAI-compatible servers (Ollama, vLLM, llama.cpp,
LM Studio)."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Iterator
from typing import Any
from urllib.parse import urlparse

from openai import AsyncOpenAI
from openai.types.chat import ChatCompletionChunk

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
from piagents.ai.errors import openai_error
from piagents.ai.events import StreamEvent
from piagents.ai.messages import (
    AssistantMessage,
    ImageContent,
    Message,
    StopReason,
    TextContent,
    ToolResultMessage,
    UserContent,
    UserMessage,
)
from piagents.ai.model_options import Compat, ProviderOptions
from piagents.ai.models import OPENAI_EFFORTS, ModelInfo
from piagents.ai.provider import ModelRequest, ToolSpec

_STOP_REASONS: dict[str, StopReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "toolUse",
    "function_call": "toolUse",
}


API = "openai-completions"


class OpenAICompletionsProvider(SDKProvider[AsyncOpenAI]):
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
        self._official = is_openai(base_url)

    def _stream(
        self, request: ModelRequest, info: ModelInfo, compat: Compat
    ) -> AsyncGenerator[StreamEvent, None]:
        params = self._params(request, info, compat)
        create = self._client.chat.completions.create
        if request.tools and compat.stream_tools is False:
            return complete_sdk(
                self.name, lambda: create(**params), _ChunkReader(request), openai_error
            )
        return stream_sdk(
            self.name,
            lambda: create(**params, stream=True, stream_options={"include_usage": True}),
            _ChunkReader(request),
            openai_error,
        )

    def _params(self, request: ModelRequest, info: ModelInfo, compat: Compat) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": request.model.model_id,
            "messages": chat_messages(request.system_prompt, request.messages),
        }
        # OpenAI's reasoning models only take `max_completion_tokens`; other servers know
        # `max_tokens` best.
        limit_field = "max_completion_tokens" if self._official else "max_tokens"
        params[limit_field] = max_output(request, info)
        if request.tools:
            params["tools"] = [_tool(t) for t in request.tools]
            if compat.tool_choice is not None:
                params["tool_choice"] = compat.tool_choice
        if request.thinking != "off":
            params["reasoning_effort"] = OPENAI_EFFORTS[request.thinking]
        return params


def is_openai(base_url: str | None) -> bool:
    """Whether requests go to OpenAI itself rather than to a compatible server."""
    return base_url is None or urlparse(base_url).hostname == "api.openai.com"


class _ChunkReader:
    """Turns chunks of one streamed completion into events and, at the end, the message."""

    def __init__(self, request: ModelRequest) -> None:
        self.request = request
        self.content = ContentBuilder()
        self.finish_reason: str | None = None
        self.usage = priced_usage(request.model, 0, 0)

    def read(self, chunk: ChatCompletionChunk) -> Iterator[StreamEvent]:
        if chunk.usage is not None:
            # Cached and cache-written tokens are part of prompt_tokens; we count them apart.
            details = chunk.usage.prompt_tokens_details
            cached = getattr(details, "cached_tokens", None) or 0
            written = getattr(details, "cache_write_tokens", None) or 0
            self.usage = priced_usage(
                self.request.model,
                chunk.usage.prompt_tokens - cached - written,
                chunk.usage.completion_tokens,
                cached,
                written,
            )
        for choice in chunk.choices[:1]:
            delta = choice.delta
            # Ollama, vLLM and DeepSeek stream reasoning as a non-standard delta field.
            reasoning = getattr(delta, "reasoning_content", None) or getattr(
                delta, "reasoning", None
            )
            if isinstance(reasoning, str) and reasoning:
                yield self.content.thinking("thinking", reasoning)
            if delta.content:
                yield self.content.text("text", delta.content)
            for call in delta.tool_calls or ():
                yield from self._tool_call(call.index, call.id, call.function)
            if choice.finish_reason is not None:
                self.finish_reason = choice.finish_reason

    def _tool_call(self, index: int, call_id: str | None, function: Any) -> Iterator[StreamEvent]:
        key = ("tool", index)
        name = getattr(function, "name", None) or ""
        args = getattr(function, "arguments", None) or ""
        # A new id at a known index means a server that numbers every call 0.
        if not self.content.has_tool(key) or (
            call_id and call_id != self.content.tool_call_id(key)
        ):
            yield self.content.start_tool(key, call_id or f"call_{index}", name)
        if args:
            yield self.content.tool_args(key, args)

    def complete(self, body: dict[str, Any]) -> Iterator[StreamEvent]:
        """A whole completion, read as the one chunk that would carry all of it."""
        choices = body.get("choices") if isinstance(body.get("choices"), list) else []
        assert isinstance(choices, list)
        chunk_choices = []
        for choice in choices[:1]:
            message = choice.get("message") if isinstance(choice, dict) else None
            delta = dict(message) if isinstance(message, dict) else {}
            calls = delta.get("tool_calls")
            if isinstance(calls, list):
                delta["tool_calls"] = [
                    {**call, "index": i} for i, call in enumerate(calls) if isinstance(call, dict)
                ]
            finish = choice.get("finish_reason") or "stop"
            chunk_choices.append({"index": 0, "delta": delta, "finish_reason": finish})
        chunk = ChatCompletionChunk.model_validate(
            {
                "id": body.get("id") or "chatcmpl",
                "object": "chat.completion.chunk",
                "created": body.get("created") or 0,
                "model": body.get("model") or self.request.model.model_id,
                "choices": chunk_choices,
                "usage": body.get("usage"),
            }
        )
        yield from self.read(chunk)

    def result(self) -> AssistantMessage | None:
        return None if self.finish_reason is None else self.message()

    def message(self) -> AssistantMessage:
        reason = self.finish_reason or "stop"
        stop = _STOP_REASONS.get(reason)
        error = None
        if stop is None:
            stop, error = "error", f"the model stopped: {reason}"
        elif self.content.has_tool_calls and stop == "stop":
            stop = "toolUse"  # some servers say "stop" even when they call tools
        return AssistantMessage(
            self.content.content(),
            stop,
            self.usage,
            self.request.model.provider,
            self.request.model.model_id,
            error,
            api=API,
        )


# ---- our messages in Chat Completions form -----------------------------------


def chat_messages(system_prompt: str, messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if system_prompt:
        out.append({"role": "system", "content": system_prompt})
    # Tool messages take text only, so their images follow as one user message.
    pending_images: list[ImageContent] = []
    for message in messages:
        if not isinstance(message, ToolResultMessage) and pending_images:
            out.append(_tool_images(pending_images))
            pending_images = []
        if isinstance(message, UserMessage):
            out.append({"role": "user", "content": _user_content(message.content)})
        elif isinstance(message, AssistantMessage):
            converted = _assistant(message)
            if converted is not None:
                out.append(converted)
        else:
            images = [c for c in message.content if isinstance(c, ImageContent)]
            pending_images.extend(images)
            text = message.text or ("(see the attached image)" if images else "")
            out.append({"role": "tool", "tool_call_id": message.tool_call_id, "content": text})
    if pending_images:
        out.append(_tool_images(pending_images))
    return out


def _user_content(content: tuple[UserContent, ...]) -> str | list[dict[str, Any]]:
    if all(isinstance(c, TextContent) for c in content):
        return "\n".join(c.text for c in content if isinstance(c, TextContent))
    return [_part(c) for c in content]


def _part(c: UserContent) -> dict[str, Any]:
    if isinstance(c, TextContent):
        return {"type": "text", "text": c.text}
    return {"type": "image_url", "image_url": {"url": data_url(c)}}


def _tool_images(images: list[ImageContent]) -> dict[str, Any]:
    parts = [{"type": "text", "text": "Images from the tool results above:"}]
    return {"role": "user", "content": parts + [_part(i) for i in images]}


def _assistant(message: AssistantMessage) -> dict[str, Any] | None:
    """Thinking is dropped: Chat Completions has no way to send it back."""
    out: dict[str, Any] = {"role": "assistant", "content": message.text or None}
    if message.tool_calls:
        out["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.args)},
            }
            for call in message.tool_calls
        ]
    elif not message.text:
        return None
    return out


def _tool(spec: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": spec.parameters,
        },
    }
