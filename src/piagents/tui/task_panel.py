"""The task panel above the editor: the current Agent's live work (spec §7)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import Static

from piagents.agent import Agent
from piagents.agents.coordinator import Coordinator
from piagents.tui.task_rows import AgentTask, TaskSnapshot


def take_snapshot(coordinator: Coordinator, root: Agent) -> TaskSnapshot:
    """The loaded owned Agents of `root`'s tree, in the order they were loaded (started)."""
    shorts = coordinator.short_map(root.session.record)
    tasks = []
    for agent in list(root.runtime.agents.values()):
        record = agent.session.record
        if record.root_id != root.id or record.is_root:
            continue
        tasks.append(
            AgentTask(
                id=agent.id,
                owner_id=record.owner_id,
                name=record.name,
                short_id=shorts.get(agent.id, agent.id[:8]),
                state=coordinator.state_of(agent.id),
                queued=len(agent.loop.queued_inputs()),
            )
        )
    return TaskSnapshot(root.id, tuple(tasks))


class TaskPanel(Static):
    """Shows the rows it is given; hidden while it has none or the user hid it."""

    DEFAULT_CSS = """
    TaskPanel {
        height: auto; padding: 0 1; margin: 0 0 0 0;
        border-top: solid $primary 40%;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.lines: tuple[str, ...] = ()
        self.enabled = True
        self.display = False

    def show_rows(self, lines: Sequence[str]) -> None:
        """Repaint only when a row changed, so updates do not flicker."""
        lines = tuple(lines)
        if lines != self.lines:
            self.lines = lines
            if lines:
                text = Text(lines[0], style="bold", no_wrap=True, overflow="ellipsis")
                for line in lines[1:]:
                    text.append("\n" + line)
                self.update(text)
        self._sync_display()

    def set_enabled(self, enabled: bool) -> None:
        self.enabled = enabled
        self._sync_display()

    def _sync_display(self) -> None:
        visible = self.enabled and bool(self.lines)
        if self.display != visible:
            self.display = visible
