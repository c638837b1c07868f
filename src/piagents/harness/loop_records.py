"""The agent loop's records: how it is configured, what an abort did, and the user
message an input becomes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from piagents.ai.messages import TextContent, UserMessage
from piagents.ai.retry import RetryPolicy
from piagents.harness.events import Input
from piagents.harness.loop_guard import DEFAULT_MAX_MODEL_CALLS

QueueMode = Literal["one-at-a-time", "all"]


@dataclass(frozen=True, slots=True)
class LoopConfig:
    tool_execution: Literal["parallel", "sequential"] = "parallel"
    steering_mode: QueueMode = "one-at-a-time"
    follow_up_mode: QueueMode = "one-at-a-time"
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    max_model_calls: int | None = DEFAULT_MAX_MODEL_CALLS  # per run; None: no bound


DEFAULT_CONFIG = LoopConfig()


@dataclass(frozen=True, slots=True)
class AbortResult:
    withdrawn: tuple[Input, ...]
    had_work: bool
    stopped: bool  # False when the turn did not stop within the timeout and was abandoned


def render(inp: Input) -> UserMessage:
    """The user message an input is in the conversation."""
    text = inp.rendered if inp.rendered is not None else inp.text
    return UserMessage((TextContent(text), *inp.images))
