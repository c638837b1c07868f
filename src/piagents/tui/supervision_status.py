"""The supervision status widget: a lead's managed agents, their states and their context."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from textual.timer import Timer

from piagents.agent import Agent
from piagents.ai.messages import now_ms
from piagents.ai.models import ModelRef
from piagents.runtime import Runtime
from piagents.store.records import GenerationRecord
from piagents.tui.footer import context_window
from piagents.tui.rows_panel import RowsPanel
from piagents.tui.supervision_rows import ManagedAgent, SupervisionSnapshot, status_rows

Clock = Callable[[], int]  # ms since the epoch


def is_lead(runtime: Runtime, agent: Agent) -> bool:
    """True when `agent` is a root of the supervision face (a lead)."""
    record = agent.session.record
    return record.is_root and runtime.supervisor.face(record) == "supervision"


def managed_agent(runtime: Runtime, g: GenerationRecord) -> ManagedAgent:
    """One generation with what the supervisor observes of it and its session's model."""
    observed = runtime.supervisor.observe(g)
    agent = runtime.agents.get(g.session_id)
    if agent is not None:
        model, thinking = str(agent.model), str(agent.thinking)
    else:
        record = runtime.store.get_session(g.session_id)
        model = record.model if record is not None else ""
        thinking = record.thinking if record is not None else ""
    window = 0
    if model:
        try:
            window = context_window(runtime.providers, ModelRef.parse(model))
        except ValueError:
            window = 0
    return ManagedAgent(
        request=g.id,
        session_id=g.session_id,
        owner_id=g.owner_id,
        label=g.label,
        state=observed.state,
        created=g.created,
        model=model or "?",
        thinking=thinking or "?",
        tokens=observed.tokens,
        context_window=window,
    )


def take_supervision_snapshot(runtime: Runtime, lead: Agent) -> SupervisionSnapshot:
    """The lead's generations not yet ended (lost and unknown ones included)."""
    gens = runtime.store.generations(root_id=lead.id, live=True)
    return SupervisionSnapshot(lead.id, tuple(managed_agent(runtime, g) for g in gens))


class SupervisionStatus(RowsPanel):
    """Shows a snapshot's rows; hidden while the lead has no managed agent or the user
    hid it. While it shows agents a one-second timer refreshes their elapsed times
    (from the same snapshot: the timer reads nothing from the runtime)."""

    DEFAULT_CSS = """
    SupervisionStatus {
        height: auto; padding: 0 1;
        border-top: solid $primary 40%;
    }
    """

    def __init__(self, *, id: str | None = None, clock: Clock = now_ms) -> None:
        super().__init__(id=id)
        self.clock = clock
        self.snapshot: SupervisionSnapshot | None = None
        self.max_rows: int | None = None
        self._ticker: Timer | None = None

    def show_snapshot(self, snapshot: SupervisionSnapshot | None, max_rows: int | None) -> None:
        """Show `snapshot` (None: not a lead); repaints only when a line changed."""
        self.snapshot = snapshot
        self.max_rows = max_rows
        self._render_lines()

    def _render_lines(self) -> None:
        snapshot = self.snapshot
        lines: Sequence[str] = (
            status_rows(snapshot, self.clock(), self.max_rows) if snapshot is not None else ()
        )
        self.show_rows(lines)

    def _sync_display(self) -> None:
        super()._sync_display()
        if self.display and self._ticker is None:
            self._ticker = self.set_interval(1.0, self._render_lines)
        elif not self.display and self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
