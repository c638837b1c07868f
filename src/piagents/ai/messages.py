"""Typed, immutable conversation messages and their JSON forms.

Messages are frozen msgspec Structs, so the store can decode a long session
straight into them in C. They have two JSON forms:

- the store's own (`msgspec.json.encode(message)`): tagged by `role` and `type`,
  camelCase keys, defaults omitted; compact and fast to decode;
- Pi's session format (`message_to_json` / `message_from_json`), for export and
  for reading sessions other tools wrote.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar, Literal, TypeAlias

from msgspec import Struct, field

StopReason: TypeAlias = Literal["stop", "length", "toolUse", "error", "aborted"]
STOP_REASONS: tuple[str, ...] = ("stop", "length", "toolUse", "error", "aborted")


def now_ms() -> int:
    return int(time.time() * 1000)


class _Block(Struct, frozen=True, gc=False, rename="camel", omit_defaults=True, tag_field="type"):
    """A content block; its JSON form is tagged by `type`."""


class TextContent(_Block, frozen=True, tag="text"):
    text: str


class ThinkingContent(_Block, frozen=True, tag="thinking"):
    thinking: str
    signature: str | None = field(default=None, name="thinkingSignature")


class ImageContent(_Block, frozen=True, tag="image"):
    data: str  # base64
    mime_type: str


class ToolCall(_Block, frozen=True, tag="toolCall"):
    """A tool call a model makes; `id` is the provider's call id."""

    name: str
    args: dict[str, Any] = field(default_factory=dict, name="arguments")
    id: str = ""


class Usage(Struct, frozen=True, gc=False, rename="camel", omit_defaults=True):
    """Tokens of each kind, and their cost in dollars: `cost` is the total, the `cost_*`
    fields its parts (as Pi's session format keeps them)."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0
    cost_input: float = 0.0
    cost_output: float = 0.0
    cost_cache_read: float = 0.0
    cost_cache_write: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.input + self.output + self.cache_read + self.cache_write

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input + other.input,
            self.output + other.output,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
            self.cost + other.cost,
            self.cost_input + other.cost_input,
            self.cost_output + other.cost_output,
            self.cost_cache_read + other.cost_cache_read,
            self.cost_cache_write + other.cost_cache_write,
        )


NO_USAGE = Usage()  # the usage of a message that reported none

UserContent: TypeAlias = TextContent | ImageContent
AssistantContent: TypeAlias = TextContent | ThinkingContent | ToolCall


class _Message(Struct, frozen=True, gc=False, rename="camel", omit_defaults=True, tag_field="role"):
    """A message; its JSON form is tagged by `role`."""


class UserMessage(_Message, frozen=True, tag="user"):
    content: tuple[UserContent, ...]
    timestamp: int = field(default_factory=now_ms)
    role: ClassVar[Literal["user"]] = "user"

    @classmethod
    def of(cls, text: str) -> UserMessage:
        return cls((TextContent(text),))

    @property
    def text(self) -> str:
        return "\n".join(c.text for c in self.content if isinstance(c, TextContent))

    @property
    def tool_calls(self) -> list[ToolCall]:
        return []


class AssistantMessage(_Message, frozen=True, tag="assistant"):
    content: tuple[AssistantContent, ...]
    stop_reason: StopReason = "stop"
    usage: Usage = NO_USAGE  # shared: most messages of a long session have none stored
    provider: str = ""
    model: str = ""
    error_message: str | None = None
    timestamp: int = field(default_factory=now_ms)
    api: str = ""  # the wire API that produced it (openai-completions, ...), "" if none
    role: ClassVar[Literal["assistant"]] = "assistant"

    @property
    def text(self) -> str:
        return "".join(c.text for c in self.content if isinstance(c, TextContent))

    @property
    def thinking(self) -> str:
        return "".join(c.thinking for c in self.content if isinstance(c, ThinkingContent))

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [c for c in self.content if isinstance(c, ToolCall)]


class ToolResultMessage(_Message, frozen=True, tag="toolResult"):
    tool_call_id: str
    tool_name: str
    content: tuple[UserContent, ...]
    details: Any = None
    is_error: bool = False
    timestamp: int = field(default_factory=now_ms)
    role: ClassVar[Literal["toolResult"]] = "toolResult"

    @property
    def text(self) -> str:
        return "\n".join(c.text for c in self.content if isinstance(c, TextContent))

    @property
    def tool_calls(self) -> list[ToolCall]:
        return []


Message: TypeAlias = UserMessage | AssistantMessage | ToolResultMessage


# ---- JSON form -------------------------------------------------------------


def content_to_json(c: AssistantContent | UserContent) -> dict[str, Any]:
    if isinstance(c, TextContent):
        return {"type": "text", "text": c.text}
    if isinstance(c, ThinkingContent):
        d: dict[str, Any] = {"type": "thinking", "thinking": c.thinking}
        if c.signature is not None:
            d["thinkingSignature"] = c.signature
        return d
    if isinstance(c, ImageContent):
        return {"type": "image", "data": c.data, "mimeType": c.mime_type}
    return {"type": "toolCall", "id": c.id, "name": c.name, "arguments": c.args}


def content_from_json(d: dict[str, Any]) -> AssistantContent | UserContent:
    """One content block from its JSON form; malformed input raises ValueError."""
    d = _object(d, "content block")
    kind = d.get("type")
    if kind == "text":
        return TextContent(_string(d, "text"))
    if kind == "thinking":
        return ThinkingContent(_string(d, "thinking"), _optional_string(d, "thinkingSignature"))
    if kind == "image":
        return ImageContent(_string(d, "data"), _string(d, "mimeType"))
    if kind == "toolCall":
        args = d.get("arguments")
        if args is not None and not isinstance(args, dict):
            raise ValueError(f"toolCall arguments must be an object, got {type(args).__name__}")
        return ToolCall(_string(d, "name"), dict(args or {}), _string(d, "id", ""))
    raise ValueError(f"unknown content type {kind!r}")


def _object(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"{what} must be a JSON object, got {type(value).__name__}")
    return value


def _string(d: dict[str, Any], key: str, default: str | None = None) -> str:
    value = d.get(key, default)
    if not isinstance(value, str):
        raise ValueError(f"{key!r} must be a string, got {value!r}")
    return value


def _optional_string(d: dict[str, Any], key: str) -> str | None:
    return None if d.get(key) is None else _string(d, key)


def _number(d: dict[str, Any], key: str, kind: type[int] | type[float]) -> Any:
    value = d.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{key!r} must be a number, got {value!r}")
    return kind(value)


def usage_to_json(u: Usage) -> dict[str, Any]:
    return {
        "input": u.input,
        "output": u.output,
        "cacheRead": u.cache_read,
        "cacheWrite": u.cache_write,
        "totalTokens": u.total_tokens,
        "cost": {
            "input": u.cost_input,
            "output": u.cost_output,
            "cacheRead": u.cost_cache_read,
            "cacheWrite": u.cost_cache_write,
            "total": u.cost,
        },
    }


def usage_from_json(d: dict[str, Any]) -> Usage:
    d = _object(d, "usage")
    cost = d.get("cost", 0.0)
    tokens = (
        _number(d, "input", int),
        _number(d, "output", int),
        _number(d, "cacheRead", int),
        _number(d, "cacheWrite", int),
    )
    if not isinstance(cost, dict):
        return Usage(*tokens, _number(d, "cost", float))
    parts = (_number(cost, key, float) for key in ("input", "output", "cacheRead", "cacheWrite"))
    return Usage(*tokens, _number(cost, "total", float), *parts)


def message_to_json(m: Message) -> dict[str, Any]:
    content = [content_to_json(c) for c in m.content]
    if isinstance(m, UserMessage):
        return {"role": "user", "content": content, "timestamp": m.timestamp}
    if isinstance(m, AssistantMessage):
        d: dict[str, Any] = {
            "role": "assistant",
            "content": content,
            "api": m.api,
            "provider": m.provider,
            "model": m.model,
            "usage": usage_to_json(m.usage),
            "stopReason": m.stop_reason,
            "timestamp": m.timestamp,
        }
        if m.error_message is not None:
            d["errorMessage"] = m.error_message
        return d
    return {
        "role": "toolResult",
        "toolCallId": m.tool_call_id,
        "toolName": m.tool_name,
        "content": content,
        "details": m.details,
        "isError": m.is_error,
        "timestamp": m.timestamp,
    }


def message_from_json(d: dict[str, Any]) -> Message:
    """A message from its Pi-style JSON form; malformed input raises ValueError."""
    d = _object(d, "message")
    role = d.get("role")
    raw = d.get("content", [])
    if isinstance(raw, str):
        raw = [{"type": "text", "text": raw}]
    if not isinstance(raw, list):
        raise ValueError(f"message content must be a list, got {type(raw).__name__}")
    content = tuple(content_from_json(c) for c in raw)
    ts = _number(d, "timestamp", int)
    if role == "user":
        return UserMessage(_user_content(content), ts)
    if role == "assistant":
        stop = d.get("stopReason", "stop")
        if stop not in STOP_REASONS:
            raise ValueError(f"unknown stop reason {stop!r}")
        usage = d.get("usage")
        return AssistantMessage(
            tuple(c for c in content if not isinstance(c, ImageContent)),
            stop,
            usage_from_json(usage) if usage is not None else NO_USAGE,
            _string(d, "provider", ""),
            _string(d, "model", ""),
            _optional_string(d, "errorMessage"),
            ts,
            _string(d, "api", ""),
        )
    if role == "toolResult":
        is_error = d.get("isError", False)
        if not isinstance(is_error, bool):
            raise ValueError(f"'isError' must be true or false, got {is_error!r}")
        return ToolResultMessage(
            _string(d, "toolCallId"),
            _string(d, "toolName", ""),
            _user_content(content),
            d.get("details"),
            is_error,
            ts,
        )
    raise ValueError(f"unknown message role {role!r}")


def _user_content(content: tuple[AssistantContent | UserContent, ...]) -> tuple[UserContent, ...]:
    return tuple(c for c in content if isinstance(c, TextContent | ImageContent))
