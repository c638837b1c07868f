"""The task panel above the editor: the current Agent's live work (spec §7)."""

from __future__ import annotations

from collections.abc import Mapping

from piagents.agent import Agent
from piagents.agents.coordinator import Coordinator
from piagents.tui.rows_panel import RowsPanel
from piagents.tui.task_rows import AgentTask, TaskSnapshot


def take_snapshot(
    coordinator: Coordinator, agents: Mapping[str, Agent], root: Agent
) -> TaskSnapshot:
    """The loaded owned Agents of `root`'s tree, in the order they were loaded (started)."""
    shorts = coordinator.short_map(root.session.record)
    tasks = []
    for agent in list(agents.values()):
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


class TaskPanel(RowsPanel):
    """Shows the rows it is given; hidden while it has none or the user hid it."""

    DEFAULT_CSS = """
    TaskPanel {
        height: auto; padding: 0 1; margin: 0 0 0 0;
        border-top: solid $primary 40%;
    }
    """
