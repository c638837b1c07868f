"""What makes a panel read the read model again: the runtime's events, not a turn's deltas."""

from __future__ import annotations

from collections.abc import Callable

from piagents.events import AgentLoopEvent, RuntimeEvent
from piagents.harness.events import AssistantDelta
from piagents.read_model import ReadModel


def shows_change(event: RuntimeEvent) -> bool:
    """False for the streaming deltas of a turn (the transcript follows those itself)."""
    return not (isinstance(event, AgentLoopEvent) and isinstance(event.event, AssistantDelta))


def follow_changes(model: ReadModel, poke: Callable[[], None]) -> Callable[[], None]:
    """Call `poke` on every event that may change what a panel shows; returns what stops it."""

    def on_event(event: RuntimeEvent) -> None:
        if shows_change(event):
            poke()

    return model.subscribe(on_event)
