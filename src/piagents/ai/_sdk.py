"""What the three SDK adapters share: assembling streamed content, usage, and error mapping."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Protocol, TypeVar

from piagents.ai.arguments import loads_arguments
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
from piagents.ai.models import ModelRef, cost_of, model_info
from piagents.ai.provider import ModelRequest, ProviderError

# ---- the provider skeleton -----------------------------------------------------

_Event = TypeVar("_Event")
_EventContra = TypeVar("_EventContra", contravariant=True)


class _Client(Protocol):
    async def close(self) -> None: ...


_ClientT = TypeVar("_ClientT", bound=_Client)


class SDKProvider(Generic[_ClientT]):
    """Holds a provider's name and SDK client; subclasses build the client and stream."""

    def __init__(self, name: str, client: _ClientT) -> None:
        self.name = name
        self._client = client

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

    def result(self) -> AssistantMessage | None:
        """The final message, or None if the stream ended before the answer was complete."""
        ...


async def stream_sdk(
    provider: str,
    open_stream: Callable[[], Awaitable[AbstractAsyncContextManager[AsyncIterable[_Event]]]],
    reader: EventReader[_Event],
    map_error: Callable[[str, Exception], ProviderError | None],
) -> AsyncIterator[StreamEvent]:
    """Open an SDK stream, feed its events to `reader`, map SDK failures to `ProviderError`,
    and end with `StreamEnd` once the answer is complete."""
    try:
        async with await open_stream() as events:
            async for event in events:
                for out in reader.read(event):
                    yield out
    except ProviderError:
        raise
    except Exception as exc:
        error = map_error(provider, exc)
        if error is None:
            raise
        raise error from exc
    message = reader.result()
    if message is None:
        raise incomplete_stream(provider)
    yield StreamEnd(message)


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


def max_output(request: ModelRequest) -> int:
    return request.max_output or model_info(request.model).max_output


def data_url(image: ImageContent) -> str:
    return f"data:{image.mime_type};base64,{image.data}"


def priced_usage(
    ref: ModelRef, inp: int, out: int, cache_read: int = 0, cache_write: int = 0
) -> Usage:
    cost = cost_of(model_info(ref), inp, out, cache_read, cache_write)
    return Usage(inp, out, cache_read, cache_write, cost)


# ---- errors --------------------------------------------------------------------

# Error types and codes that APIs report in a body or mid-stream for transient trouble.
_TRANSIENT_KINDS = frozenset(
    {
        "api_error",
        "overloaded_error",
        "rate_limit_error",
        "timeout_error",
        "server_error",
        "server_is_overloaded",
        "rate_limit_exceeded",
        "slow_down",
    }
)


def is_retryable_status(status: int) -> bool:
    return status in (408, 429) or status >= 500


def status_error(provider: str, status: int, body: object, fallback: str) -> ProviderError:
    """An HTTP error answer (`body` is its decoded JSON, if any)."""
    detail = _error_detail(body)
    message = detail.get("message")
    text = message if isinstance(message, str) and message else fallback
    kind = _error_kind(detail)
    if status < 400:  # an error event inside a 200 stream
        return stream_error(provider, kind, text)
    retryable = is_retryable_status(status) or kind in _TRANSIENT_KINDS
    return ProviderError(
        f"{provider} returned HTTP {status}: {text}", retryable=retryable, status=status
    )


def stream_error(provider: str, kind: str | None, message: str) -> ProviderError:
    """An error the server reported inside an otherwise successful stream."""
    label = f" ({kind})" if kind else ""
    return ProviderError(
        f"{provider} reported an error mid-stream{label}: {message}",
        retryable=kind in _TRANSIENT_KINDS,
    )


def body_error(provider: str, body: object, fallback: str) -> ProviderError:
    """An error object in place of a stream chunk."""
    detail = _error_detail(body)
    code = detail.get("code")
    if isinstance(code, int) and code >= 400:  # a proxy passing on an upstream HTTP status
        return status_error(provider, code, body, fallback)
    message = detail.get("message")
    text = message if isinstance(message, str) and message else fallback
    return stream_error(provider, _error_kind(detail), text)


def connection_error(provider: str, exc: BaseException) -> ProviderError:
    """A failed connection or a stream that broke off; always worth retrying."""
    cause = exc.__cause__ or exc
    detail = str(cause) or type(cause).__name__
    return ProviderError(f"{provider}: connection error: {detail}", retryable=True)


def incomplete_stream(provider: str) -> ProviderError:
    return ProviderError(
        f"{provider}: the stream ended before the response was complete", retryable=True
    )


def _error_detail(body: object) -> dict[str, Any]:
    if not isinstance(body, dict):
        return {"message": body.strip()[:500]} if isinstance(body, str) else {}
    inner = body.get("error")
    return inner if isinstance(inner, dict) else body


def _error_kind(detail: dict[str, Any]) -> str | None:
    for key in ("type", "code"):
        value = detail.get(key)
        if isinstance(value, str) and value and value != "error":
            return value
    return None


def openai_error(provider: str, exc: Exception) -> ProviderError | None:
    """Map an OpenAI SDK or transport failure to a `ProviderError` (None if it is neither)."""
    import httpx2
    import openai

    if isinstance(exc, openai.APIStatusError):
        return status_error(provider, exc.status_code, exc.body, exc.message)
    if isinstance(exc, openai.APIConnectionError):
        return connection_error(provider, exc)
    if isinstance(exc, openai.APIError):  # an error object inside the stream
        return body_error(provider, exc.body, exc.message)
    if isinstance(exc, httpx2.TransportError):
        return connection_error(provider, exc)
    return None


def anthropic_error(provider: str, exc: Exception) -> ProviderError | None:
    """Map an Anthropic SDK or transport failure to a `ProviderError` (None if it is neither)."""
    import anthropic
    import httpx2

    if isinstance(exc, anthropic.APIStatusError):
        return status_error(provider, exc.status_code, exc.body, exc.message)
    if isinstance(exc, anthropic.APIConnectionError):
        return connection_error(provider, exc)
    if isinstance(exc, anthropic.APIError):
        return body_error(provider, exc.body, exc.message)
    if isinstance(exc, httpx2.TransportError):
        return connection_error(provider, exc)
    return None
