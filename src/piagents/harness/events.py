"""What an agent loop reports while it works; the UI and `--mode json` subscribe."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from piagents.ai.messages import ImageContent, Message, ToolCall, message_to_json
from piagents.store.records import new_id

Delivery: TypeAlias = Literal["steer", "followUp", "write"]
Outcome: TypeAlias = Literal["completed", "failed", "aborted"]
Phase: TypeAlias = Literal["idle", "queued", "running"]


@dataclass(frozen=True, slots=True)
class Input:
    """A message for an agent. `meta` carries what higher layers need (sender, …)."""

    text: str
    delivery: Delivery = "followUp"
    images: tuple[ImageContent, ...] = ()
    id: str = field(default_factory=new_id)
    meta: dict[str, Any] = field(default_factory=dict)
    rendered: str | None = None  # what its model reads, when not `text` (a sender's header)
    committed: bool = False  # its message is in the session already: the run only announces it


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """How a run ended for the inputs it handled; `answer` is the error text when failed."""

    inputs: tuple[Input, ...]
    status: Outcome
    answer: str


@dataclass(frozen=True, slots=True)
class PhaseChanged:
    phase: Phase


@dataclass(frozen=True, slots=True)
class RunStarted:
    inputs: tuple[Input, ...]


@dataclass(frozen=True, slots=True)
class TurnStarted:
    turn: int


@dataclass(frozen=True, slots=True)
class AssistantDelta:
    kind: Literal["text", "thinking", "toolCall"]
    text: str
    tool: str = ""  # for "toolCall": the name of the tool whose call is being written


@dataclass(frozen=True, slots=True)
class AssistantRetry:
    attempt: int
    delay_s: float
    error: str


@dataclass(frozen=True, slots=True)
class MessageCommitted:
    message: Message


@dataclass(frozen=True, slots=True)
class ToolStarted:
    call: ToolCall


@dataclass(frozen=True, slots=True)
class InputQueued:
    input: Input


@dataclass(frozen=True, slots=True)
class RunEnded:
    outcome: RunOutcome


@dataclass(frozen=True, slots=True)
class Compacted:
    summary: str
    tokens_before: int


LoopEvent: TypeAlias = (
    PhaseChanged
    | RunStarted
    | TurnStarted
    | AssistantDelta
    | AssistantRetry
    | MessageCommitted
    | ToolStarted
    | InputQueued
    | RunEnded
    | Compacted
)


def event_to_json(event: LoopEvent) -> dict[str, Any]:
    """The `--mode json` line of an event."""
    if isinstance(event, PhaseChanged):
        return {"type": "phase", "phase": event.phase}
    if isinstance(event, RunStarted):
        return {"type": "run_start", "inputs": [_input_json(i) for i in event.inputs]}
    if isinstance(event, TurnStarted):
        return {"type": "turn_start", "turn": event.turn}
    if isinstance(event, AssistantDelta):
        return {"type": "delta", "kind": event.kind, "delta": event.text}
    if isinstance(event, AssistantRetry):
        return {
            "type": "retry",
            "attempt": event.attempt,
            "delayS": event.delay_s,
            "error": event.error,
        }
    if isinstance(event, MessageCommitted):
        return {"type": "message", "message": message_to_json(event.message)}
    if isinstance(event, ToolStarted):
        return {
            "type": "tool_start",
            "id": event.call.id,
            "name": event.call.name,
            "arguments": event.call.args,
        }
    if isinstance(event, InputQueued):
        return {"type": "queued", "input": _input_json(event.input)}
    if isinstance(event, RunEnded):
        o = event.outcome
        return {
            "type": "run_end",
            "status": o.status,
            "answer": o.answer,
            "inputs": [i.id for i in o.inputs],
        }
    return {"type": "compaction", "summary": event.summary, "tokensBefore": event.tokens_before}


def _input_json(i: Input) -> dict[str, Any]:
    return {"id": i.id, "delivery": i.delivery, "text": i.text, "images": len(i.images)}
