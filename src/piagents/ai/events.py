"""Streaming events a provider yields while a model answers.

Every stream ends with exactly one `StreamEnd` carrying the final assistant
message; failures are reported there with stop reason `error`, never raised.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from piagents.ai.messages import AssistantMessage


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A piece of a tool call: its name when it starts, then argument JSON fragments."""

    index: int
    id: str
    name: str
    args_fragment: str


@dataclass(frozen=True, slots=True)
class StreamRetry:
    """The attempt failed before it finished and will be retried; drop the partial output."""

    attempt: int
    delay_s: float
    error: str


@dataclass(frozen=True, slots=True)
class StreamEnd:
    message: AssistantMessage


StreamEvent: TypeAlias = TextDelta | ThinkingDelta | ToolCallDelta | StreamRetry | StreamEnd
