"""The task panel's lines (spec §7), computed from a snapshot of one tree (pure).

```text
Tasks (<N> live, /tasks to view)
  Agent <name> (<id>)  <state>  [<N> queued]
    Agent <name> (<id>)  <state>
  Program <id>  running
  +<N> more
```
"""

from __future__ import annotations

from dataclasses import dataclass

from piagents.agents.texts import Shown, label

INDENT = "  "


@dataclass(frozen=True, slots=True)
class AgentTask:
    """One loaded Agent of the tree as the panel needs it."""

    id: str
    owner_id: str | None
    name: str | None
    short_id: str
    state: str  # running, waiting, queued or idle
    queued: int = 0  # inputs accepted and not started

    @property
    def live(self) -> bool:
        return self.state != "idle"


@dataclass(frozen=True, slots=True)
class ProgramTask:
    id: str
    state: str = "running"


@dataclass(frozen=True, slots=True)
class TaskSnapshot:
    """The owned Agents of one root, in start order, and its background Programs."""

    root_id: str
    agents: tuple[AgentTask, ...] = ()
    programs: tuple[ProgramTask, ...] = ()


def header(live: int) -> str:
    return f"Tasks ({live} live, /tasks to view)"


def agent_row(task: AgentTask, depth: int) -> str:
    parts = [f"{INDENT * depth}Agent {label(Shown(task.name, task.short_id))}", task.state]
    if task.queued:
        parts.append(f"{task.queued} queued")
    return "  ".join(parts)


def program_row(program: ProgramTask) -> str:
    return f"{INDENT}Program {program.id}  {program.state}"


def more_row(hidden: int) -> str:
    return f"{INDENT}+{hidden} more"


def tree_order(snapshot: TaskSnapshot) -> list[tuple[AgentTask, int]]:
    """Live Agents and the owners needed to keep the tree, depth-first in start order."""
    by_id = {t.id: t for t in snapshot.agents}
    shown: set[str] = set()
    for task in snapshot.agents:
        if not task.live:
            continue
        current: AgentTask | None = task
        while current is not None and current.id not in shown:
            shown.add(current.id)
            current = by_id.get(current.owner_id or "")
    children: dict[str, list[AgentTask]] = {}
    for task in snapshot.agents:
        if task.id in shown:
            parent = task.owner_id if task.owner_id in by_id else snapshot.root_id
            children.setdefault(parent or snapshot.root_id, []).append(task)
    out: list[tuple[AgentTask, int]] = []

    def visit(parent_id: str, depth: int) -> None:
        for child in children.get(parent_id, []):
            out.append((child, depth))
            visit(child.id, depth + 1)

    visit(snapshot.root_id, 1)
    return out


def live_count(snapshot: TaskSnapshot) -> int:
    return sum(t.live for t in snapshot.agents) + sum(p.state != "idle" for p in snapshot.programs)


def task_rows(snapshot: TaskSnapshot, max_rows: int | None = None) -> list[str]:
    """The panel's lines: the header and at most `max_rows` rows; [] when it has no row."""
    rows = [agent_row(t, depth) for t, depth in tree_order(snapshot)]
    rows.extend(program_row(p) for p in snapshot.programs if p.state != "idle")
    if not rows:
        return []
    if max_rows is not None and len(rows) > max(max_rows, 1):
        keep = max(max_rows, 1) - 1
        rows = [*rows[:keep], more_row(len(rows) - keep)]
    return [header(live_count(snapshot)), *rows]
