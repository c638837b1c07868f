"""The line that shows an Agent at work: a spinner, what it is doing, and for how long.

It follows the Agent's loop events; while a run goes on a timer turns the spinner
and counts the seconds, and when the Agent is idle the timer is stopped, so an idle
UI does nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from rich.text import Text
from textual.timer import Timer
from textual.widgets import Static

from piagents.agent import Agent
from piagents.ai.messages import AssistantMessage, ToolResultMessage, now_ms
from piagents.harness.events import (
    AssistantDelta,
    AssistantRetry,
    LoopEvent,
    MessageCommitted,
    PhaseChanged,
    ToolStarted,
    TurnStarted,
)
from piagents.read_model import ReadModel
from piagents.tui.frames import FrameScheduler
from piagents.tui.message_text import one_line, tool_arguments
from piagents.tui.supervision_rows import elapsed
from piagents.tui.supervision_status import Clock

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
TICK_S = 0.1
WAITING = "Waiting for the model"
WRITING_A_CALL = "Writing a tool call"
TOOL_WIDTH = 48


@dataclass(frozen=True, slots=True)
class Activity:
    """What a busy Agent is doing, since when (ms), and how much of a tool call it wrote."""

    started: int
    doing: str = WAITING
    call_bytes: int = 0
    tools: tuple[tuple[str, str], ...] = ()  # (call id, what it runs), in the order started


def next_activity(current: Activity | None, event: LoopEvent, now: int) -> Activity | None:
    """The activity after `event` (pure); None when the Agent is idle."""
    if isinstance(event, PhaseChanged):
        if event.phase == "idle":
            return None
        doing = "Waiting for a slot" if event.phase == "queued" else WAITING
        return replace(current, doing=doing) if current is not None else Activity(now, doing)
    if current is None:
        return None
    if isinstance(event, TurnStarted):
        return replace(current, doing=WAITING, call_bytes=0, tools=())
    if isinstance(event, AssistantDelta):
        if event.kind == "thinking":
            return replace(current, doing="Thinking")
        if event.kind == "text":
            return replace(current, doing="Writing")
        size = current.call_bytes + len(event.text.encode("utf-8"))
        doing = f"Writing a call of {event.tool}" if event.tool else WRITING_A_CALL
        return replace(current, doing=doing, call_bytes=size)
    if isinstance(event, AssistantRetry):
        why = one_line(event.error, 60)
        return replace(
            current, doing=f"Retrying in {event.delay_s:.0f}s (attempt {event.attempt}: {why})"
        )
    if isinstance(event, ToolStarted):
        call = event.call
        what = one_line(f"{call.name} {tool_arguments(call.name, call.args)}", TOOL_WIDTH)
        tools = (*current.tools, (call.id, what))
        return replace(current, doing=_running(tools), tools=tools)
    if isinstance(event, MessageCommitted):
        message = event.message
        if isinstance(message, ToolResultMessage):
            tools = tuple(t for t in current.tools if t[0] != message.tool_call_id)
            return replace(current, doing=_running(tools) if tools else WAITING, tools=tools)
        if isinstance(message, AssistantMessage) and not message.tool_calls:
            return replace(current, doing=WAITING, call_bytes=0)
    return current


def _running(tools: tuple[tuple[str, str], ...]) -> str:
    shown = tools[0][1]
    return f"Running {shown}" + (f" and {len(tools) - 1} more" if len(tools) > 1 else "")


def progress_text(activity: Activity, now: int) -> str:
    """`⠙ Writing… 12s  (Esc interrupts)` at `now` (pure: the spinner turns with the clock)."""
    writing_call = activity.doing.startswith(("Writing a call of ", WRITING_A_CALL))
    size = f" · {_size(activity.call_bytes)}" if writing_call else ""
    spinner = SPINNER[(now // int(TICK_S * 1000)) % len(SPINNER)]
    took = elapsed(now - activity.started)
    return f"{spinner} {activity.doing}… {took}{size}  (Esc interrupts)"


def _size(n: int) -> str:
    return f"{n} B" if n < 1000 else f"{n / 1000:.1f} kB"


class ProgressLine(Static):
    """Shows the activity of the Agent it follows while it is busy; hidden when idle."""

    DEFAULT_CSS = """
    ProgressLine { height: 1; padding: 0 1; color: $text-accent; display: none; }
    """

    def __init__(self, *, id: str | None = None, clock: Clock = now_ms) -> None:
        super().__init__(id=id)
        self.clock = clock
        self.activity: Activity | None = None
        self.text = ""
        self._unfollow: Callable[[], None] | None = None
        self._timer: Timer | None = None
        self._frames = FrameScheduler(self, self._repaint)

    @property
    def ticking(self) -> bool:
        """Whether the timer runs (only while the Agent is busy)."""
        return self._timer is not None

    def follow(self, model: ReadModel, agent: Agent) -> None:
        self.unfollow()
        self._unfollow = model.follow(agent.id, self._on_event)
        phase = model.phase(agent.id)
        if phase != "idle":  # opened mid-run: the start is not known, count from now
            self._set(
                Activity(self.clock(), "Waiting for a slot" if phase == "queued" else "Working")
            )

    def unfollow(self) -> None:
        if self._unfollow is not None:
            self._unfollow()
            self._unfollow = None
        self._set(None)

    def on_mount(self) -> None:
        if self.activity is not None and self._timer is None:
            self._timer = self.set_interval(TICK_S, self._repaint)
        self._repaint()

    def on_unmount(self) -> None:
        self.unfollow()

    def _on_event(self, event: LoopEvent) -> None:
        self._set(next_activity(self.activity, event, self.clock()))

    def _set(self, activity: Activity | None) -> None:
        if activity == self.activity:
            return
        self.activity = activity
        if activity is None and self._timer is not None:
            self._timer.stop()
            self._timer = None
        elif activity is not None and self._timer is None and self.is_attached:
            self._timer = self.set_interval(TICK_S, self._repaint)
        self._frames.poke()

    def _repaint(self) -> None:
        activity = self.activity
        self.display = activity is not None
        text = "" if activity is None else progress_text(activity, self.clock())
        if text != self.text:
            self.text = text
            self.update(Text(text))
