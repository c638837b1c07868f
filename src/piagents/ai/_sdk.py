"""What the three SDK adapters share: assembling streamed content, usage, and error mapping."""

from __future__ import annotations

import asyncio
import json
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    AsyncIterator,
    Awaitable,
    Callable,
    Iterator,
    Mapping,
)
from contextlib import AbstractAsyncContextManager, aclosing
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Protocol, TypeVar

from piagents.ai.arguments import loads_arguments
from piagents.ai.discovery import ServerLimits, discover
from piagents.ai.errors import body_error, incomplete_stream
from piagents.ai.events import StreamEnd, StreamEvent, TextDelta, ThinkingDelta, ToolCallDelta
from piagents.ai.messages import (
    AssistantContent,
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
)
from piagents.ai.model_options import Compat, ProviderOptions, effective_info
from piagents.ai.models import ModelInfo, ModelRef, cost_parts, model_info
from piagents.ai.provider import ModelRequest, ProviderError

# ---- the provider skeleton -----------------------------------------------------

_Event = TypeVar("_Event")
_EventContra = TypeVar("_EventContra", contravariant=True)


class _Client(Protocol):
    async def close(self) -> None: ...


_ClientT = TypeVar("_ClientT", bound=_Client)


class SDKProvider(Generic[_ClientT]):
    """Holds a provider's name, SDK client and options, and what its server said of its
    models' limits; subclasses build the client and stream one answer (`_stream`)."""

    api = ""

    def __init__(
        self,
        name: str,
        client: _ClientT,
        *,
        options: ProviderOptions | None = None,
        base_url: str | None = None,
        probe_headers: Mapping[str, str] | None = None,
    ) -> None:
        self.name = name
        self._client = client
        self.options = options or ProviderOptions()
        self._base_url = base_url
        self._probe_headers = dict(probe_headers or {})
        self._discovered: dict[str, ServerLimits] = {}
        self._discovering = asyncio.Lock()

    def model_info(self, model_id: str) -> ModelInfo:
        """The model's facts: settings first, then what the server said, then the table."""
        return effective_info(
            model_info(ModelRef(self.name, model_id)),
            self.options.for_model(model_id),
            self._discovered.get(model_id),
        )

    def compat(self, model_id: str) -> Compat:
        return self.options.for_model(model_id).compat

    async def discover(self, model_id: str) -> None:
        """Ask the server once for the model's limits, when settings do not give them all."""
        if not self.options.discover or self._base_url is None or model_id in self._discovered:
            return
        given = self.options.for_model(model_id)
        if given.context_window is not None and given.max_tokens is not None:
            return
        async with self._discovering:
            if model_id not in self._discovered:
                try:
                    found = await discover(self._base_url, model_id, self._probe_headers)
                except Exception:  # unknown limits never fail a request
                    found = ServerLimits()
                self._discovered[model_id] = found

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        model_id = request.model.model_id
        await self.discover(model_id)
        answer = self._stream(request, self.model_info(model_id), self.compat(model_id))
        async with aclosing(answer) as events:
            async for event in events:
                yield event

    def _stream(
        self, request: ModelRequest, info: ModelInfo, compat: Compat
    ) -> AsyncGenerator[StreamEvent, None]:
        raise NotImplementedError

    async def aclose(self) -> None:
        await self._client.close()


def client_options(
    *, base_url: str | None, api_key: str, headers: dict[str, str]
) -> dict[str, Any]:
    """Keyword arguments for an SDK client."""
    # Our retry layer (retry.py) retries; the SDK must not retry underneath it.
    return {
        "api_key": api_key,
        "base_url": base_url,
        "max_retries": 0,
        "default_headers": headers,
    }


class EventReader(Protocol[_EventContra]):
    """Turns the SDK events of one streamed answer into our events and the final message."""

    def read(self, event: _EventContra) -> Iterator[StreamEvent]: ...

    def complete(self, body: dict[str, Any]) -> Iterator[StreamEvent]:
        """Read a whole (not streamed) answer, given as its JSON object."""
        ...

    def result(self) -> AssistantMessage | None:
        """The final message, or None if the stream ended before the answer was complete."""
        ...


def _wrap(
    provider: str, exc: Exception, map_error: Callable[[str, Exception], ProviderError | None]
) -> Exception:
    if isinstance(exc, ProviderError):
        return exc
    return map_error(provider, exc) or exc


async def stream_sdk(
    provider: str,
    open_stream: Callable[[], Awaitable[AbstractAsyncContextManager[AsyncIterable[_Event]]]],
    reader: EventReader[_Event],
    map_error: Callable[[str, Exception], ProviderError | None],
) -> AsyncGenerator[StreamEvent, None]:
    """Open an SDK stream, feed its events to `reader`, map SDK failures to `ProviderError`,
    and end with `StreamEnd` once the answer is complete. A server that answers the
    streaming request with one JSON object is read as that whole answer."""
    received: str | None = None
    try:
        async with await open_stream() as events:
            response = getattr(events, "response", None)
            kind = _content_type(response)
            # A stream without a content type is still read as one.
            if response is not None and kind not in ("", "text/event-stream"):
                body = (await response.aread()).decode("utf-8", "replace")
                whole = _json_object(body)
                if whole is None:
                    received = f"a {kind} body: {body.strip()[:200]!r}"
                else:
                    for out in _complete(provider, reader, whole):
                        yield out
            else:
                async for event in events:
                    for out in reader.read(event):
                        yield out
    except Exception as exc:
        error = _wrap(provider, exc, map_error)
        if error is exc:
            raise
        raise error from exc
    message = reader.result()
    if message is None:
        raise incomplete_stream(provider, received)
    yield StreamEnd(message)


async def complete_sdk(
    provider: str,
    create: Callable[[], Awaitable[Any]],
    reader: EventReader[Any],
    map_error: Callable[[str, Exception], ProviderError | None],
) -> AsyncGenerator[StreamEvent, None]:
    """Make a request without streaming and turn its whole answer into the same events."""
    try:
        answer = await create()
        body = answer.model_dump(mode="json") if hasattr(answer, "model_dump") else answer
        events = list(_complete(provider, reader, body))
    except Exception as exc:
        error = _wrap(provider, exc, map_error)
        if error is exc:
            raise
        raise error from exc
    for event in events:
        yield event
    message = reader.result()
    if message is None:
        raise incomplete_stream(provider, "a whole answer without its final state")
    yield StreamEnd(message)


def _complete(provider: str, reader: EventReader[Any], body: Any) -> Iterator[StreamEvent]:
    if not isinstance(body, dict):
        raise incomplete_stream(provider, f"a JSON {type(body).__name__} instead of an answer")
    if body.get("error"):
        raise body_error(provider, body, "the server answered with an error")
    yield from reader.complete(body)


def _content_type(response: Any) -> str:
    headers = getattr(response, "headers", None)
    value = headers.get("content-type", "") if headers is not None else ""
    return str(value).split(";")[0].strip().lower()


def _json_object(text: str) -> Any:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


# ---- assembling the streamed message ----------------------------------------


@dataclass(slots=True)
class _Block:
    kind: Literal["text", "thinking", "tool"]
    parts: list[str] = field(default_factory=list)
    signature: str | None = None
    call_id: str = ""
    name: str = ""
    tool_index: int = 0
    whole_args: str | None = None  # arguments the server sent complete, which win over parts


class ContentBuilder:
    """Collects streamed text, thinking and tool calls into blocks, in the order they start.

    Each API names its blocks differently (an index, an item id); callers pass that
    name as `key`, and every method returns the event to yield.
    """

    def __init__(self) -> None:
        self._blocks: list[_Block] = []
        self._keyed: dict[object, _Block] = {}
        self._tool_count = 0

    def text(self, key: object, delta: str) -> TextDelta:
        self._block(key, "text").parts.append(delta)
        return TextDelta(delta)

    def thinking(self, key: object, delta: str) -> ThinkingDelta:
        self._block(key, "thinking").parts.append(delta)
        return ThinkingDelta(delta)

    def sign(self, key: object, signature: str) -> None:
        block = self._block(key, "thinking")
        block.signature = (block.signature or "") + signature

    def has_tool(self, key: object) -> bool:
        block = self._keyed.get(key)
        return block is not None and block.kind == "tool"

    def start_tool(self, key: object, call_id: str, name: str) -> ToolCallDelta:
        block = _Block("tool", call_id=call_id, name=name, tool_index=self._tool_count)
        self._tool_count += 1
        self._blocks.append(block)
        self._keyed[key] = block
        return ToolCallDelta(block.tool_index, call_id, name, "")

    def tool_args(self, key: object, fragment: str) -> ToolCallDelta:
        block = self._keyed[key]
        block.parts.append(fragment)
        return ToolCallDelta(block.tool_index, block.call_id, block.name, fragment)

    def set_tool_args(self, key: object, arguments: str) -> None:
        self._keyed[key].whole_args = arguments

    def tool_call_id(self, key: object) -> str:
        return self._keyed[key].call_id

    @property
    def has_tool_calls(self) -> bool:
        return self._tool_count > 0

    def content(self) -> tuple[AssistantContent, ...]:
        out: list[AssistantContent] = []
        for block in self._blocks:
            joined = "".join(block.parts)
            if block.kind == "text" and joined:
                out.append(TextContent(joined))
            elif block.kind == "thinking" and (joined or block.signature):
                out.append(ThinkingContent(joined, block.signature))
            elif block.kind == "tool":
                args = block.whole_args if block.whole_args is not None else joined
                out.append(ToolCall(block.name, parse_args(args), block.call_id))
        return tuple(out)

    def _block(self, key: object, kind: Literal["text", "thinking"]) -> _Block:
        block = self._keyed.get(key)
        if block is None or block.kind != kind:
            block = _Block(kind)
            self._blocks.append(block)
            self._keyed[key] = block
        return block


def parse_args(raw: str) -> dict[str, Any]:
    """Tool arguments as a dict; JSON that is not an object (or not JSON, or not plain
    JSON: NaN, unpaired surrogates, deep nesting) gives `{}`."""
    if not raw.strip():
        return {}
    try:
        value = loads_arguments(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


# ---- request helpers ----------------------------------------------------------


def max_output(request: ModelRequest, info: ModelInfo) -> int:
    return request.max_output or info.max_output


def data_url(image: ImageContent) -> str:
    return f"data:{image.mime_type};base64,{image.data}"


def priced_usage(
    ref: ModelRef, inp: int, out: int, cache_read: int = 0, cache_write: int = 0
) -> Usage:
    parts = cost_parts(model_info(ref), inp, out, cache_read, cache_write)
    return Usage(inp, out, cache_read, cache_write, sum(parts), *parts)
