"""The task panel above the editor: the current Agent's live work (spec §7)."""

from __future__ import annotations

from piagents.agent import Agent
from piagents.read_model import ReadModel
from piagents.tui.rows_panel import RowsPanel
from piagents.tui.task_rows import AgentTask, ProgramTask, TaskSnapshot


def take_snapshot(model: ReadModel, root: Agent) -> TaskSnapshot:
    """The loaded owned Agents of `root`'s tree, in the order they were loaded (started),
    and the Programs running for its Agents, each under its caller."""
    tasks = tuple(
        AgentTask(
            id=e.id,
            owner_id=e.owner_id,
            name=e.name,
            short_id=e.short_id,
            state=e.state,
            queued=e.queued,
            program_id=e.program_id,
        )
        for e in model.roster(root)
    )
    # An SDK scope has a row while it is open, as a background Program while it runs.
    programs = tuple(
        ProgramTask(
            p.id,
            caller_id=p.caller_id,
            short_id=p.short_id,
            background=p.background or p.kind == "scope",
        )
        for p in model.running_programs(root)
    )
    return TaskSnapshot(root.id, tasks, programs)


class TaskPanel(RowsPanel):
    """Shows the rows it is given; hidden while it has none or the user hid it."""

    DEFAULT_CSS = """
    TaskPanel {
        height: auto; padding: 0 1; margin: 0 0 0 0;
        border-top: solid $primary 40%;
    }
    """
