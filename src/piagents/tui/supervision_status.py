"""The supervision status widget: a lead's managed agents, their states and their context."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from textual.timer import Timer

from piagents.agent import Agent
from piagents.ai.messages import now_ms
from piagents.read_model import ReadModel
from piagents.tui.rows_panel import RowsPanel
from piagents.tui.supervision_rows import SupervisionSnapshot, status_rows

Clock = Callable[[], int]  # ms since the epoch


def take_supervision_snapshot(model: ReadModel, lead: Agent) -> SupervisionSnapshot:
    """The lead's generations not yet ended (lost and unknown ones included)."""
    return SupervisionSnapshot(lead.id, model.managed_agents(lead))


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
