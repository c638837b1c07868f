"""The one interface every model provider implements."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from piagents.ai.events import StreamEvent
from piagents.ai.messages import Message
from piagents.ai.models import ModelRef, ThinkingLevel


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ModelRequest:
    model: ModelRef
    system_prompt: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    thinking: ThinkingLevel = "off"
    max_output: int | None = None
    # Who asks: the faux model routes on these; real providers ignore them.
    agent_id: str = ""
    agent_name: str | None = None
    aborted: asyncio.Event = field(default_factory=asyncio.Event)


class ProviderError(Exception):
    """A failed request; `retryable` marks rate limits, overload, 5xx and dropped connections;
    `retry_after_s` is the delay the server asked for (`retry-after`), if it named one."""

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        status: int | None = None,
        retry_after_s: float | None = None,
    ):
        super().__init__(message)
        self.retryable = retryable
        self.status = status
        self.retry_after_s = retry_after_s


class Provider(Protocol):
    name: str
    api: str  # the wire API its messages name (`openai-completions`, …)

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream one model response.

        Implementations may raise `ProviderError` (the retry layer turns it into
        an error message); cancellation of the consuming task must close the
        underlying HTTP stream.
        """
        ...
