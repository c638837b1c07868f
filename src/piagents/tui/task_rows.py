"""The task panel's lines (spec §7), computed from a snapshot of one tree (pure).

```text
Tasks (<N> live, /tasks to view)
  Agent <name> (<id>)  <state>  [<N> queued]
    Agent <name> (<id>)  <state>
  Program <id>  running
    Agent <name> (<id>)  <state>
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
    program_id: str | None = None  # the Program it belongs to (its own Agents and those under)

    @property
    def live(self) -> bool:
        return self.state != "idle"


@dataclass(frozen=True, slots=True)
class ProgramTask:
    """A background Program: shown under its caller, with its live Agents under it."""

    id: str
    state: str = "running"
    caller_id: str | None = None  # None: under the root, after the Agents
    short_id: str | None = None  # shown; its first 8 characters when not given
    background: bool = True  # a foreground Program has a row only while it has live Agents

    @property
    def shown_id(self) -> str:
        return self.short_id or self.id[:8]


@dataclass(frozen=True, slots=True)
class TaskSnapshot:
    """The owned Agents of one root, in start order, and its background Programs."""

    root_id: str
    agents: tuple[AgentTask, ...] = ()
    programs: tuple[ProgramTask, ...] = ()


Task = AgentTask | ProgramTask


def header(live: int) -> str:
    return f"Tasks ({live} live, /tasks to view)"


def agent_row(task: AgentTask, depth: int) -> str:
    parts = [f"{INDENT * depth}Agent {label(Shown(task.name, task.short_id))}", task.state]
    if task.queued:
        parts.append(f"{task.queued} queued")
    return "  ".join(parts)


def program_row(program: ProgramTask, depth: int = 1) -> str:
    return f"{INDENT * depth}Program {program.shown_id}  {program.state}"


def more_row(hidden: int) -> str:
    return f"{INDENT}+{hidden} more"


def _programs(snapshot: TaskSnapshot) -> dict[str, ProgramTask]:
    """The running background Programs, and a row for each Program with live Agents of
    its own (its record's, when given)."""
    given = {p.id: p for p in snapshot.programs if p.state != "idle"}
    programs = {i: p for i, p in given.items() if p.background}
    for task in snapshot.agents:
        if task.live and task.program_id is not None and task.program_id not in programs:
            programs[task.program_id] = given.get(task.program_id) or ProgramTask(task.program_id)
    return programs


def tree_order(snapshot: TaskSnapshot) -> list[tuple[Task, int]]:
    """Live Agents and running Programs with the owners needed to keep the tree,
    depth-first in start order; a Program's own Agents under their Program, the
    Program under its caller."""
    by_id = {t.id: t for t in snapshot.agents}
    programs = _programs(snapshot)
    root = snapshot.root_id

    def parent(task: Task) -> str:
        if isinstance(task, ProgramTask):
            caller = task.caller_id or next(
                (t.owner_id for t in snapshot.agents if _parent_program(t, by_id) == task.id), None
            )
            return caller if caller in by_id else root
        program_id = _parent_program(task, by_id)
        if program_id is not None and program_id in programs:
            return _key(programs[program_id])
        return task.owner_id if task.owner_id in by_id else root

    def node(key: str) -> Task | None:
        if key.startswith(PROGRAM_KEY):
            return programs.get(key[len(PROGRAM_KEY) :])
        return by_id.get(key)

    shown: set[str] = set()
    starts = [t for t in snapshot.agents if t.live] + list(programs.values())
    for start in starts:
        current: Task | None = start
        while current is not None and _key(current) not in shown:
            shown.add(_key(current))
            up = parent(current)
            current = node(up) if up != root else None
    children: dict[str, list[Task]] = {}
    # Under each owner: its Agents in start order, then its Programs in theirs (their
    # IDs are time-ordered), then, under each Program, the Program's own Agents.
    everything: list[Task] = [
        *(t for t in snapshot.agents if _parent_program(t, by_id) not in programs),
        *sorted(programs.values(), key=lambda p: p.id),
        *(t for t in snapshot.agents if _parent_program(t, by_id) in programs),
    ]
    for task in everything:
        if _key(task) in shown:
            children.setdefault(parent(task), []).append(task)
    out: list[tuple[Task, int]] = []

    def visit(parent_key: str, depth: int) -> None:
        for child in children.get(parent_key, []):
            out.append((child, depth))
            visit(_key(child), depth + 1)

    visit(root, 1)
    return out


PROGRAM_KEY = "program:"


def _key(task: Task) -> str:
    return PROGRAM_KEY + task.id if isinstance(task, ProgramTask) else task.id


def _parent_program(task: AgentTask, by_id: dict[str, AgentTask]) -> str | None:
    """The Program `task` is one of the own Agents of (not an Agent under one)."""
    if task.program_id is None:
        return None
    owner = by_id.get(task.owner_id or "")
    if owner is not None and owner.program_id == task.program_id:
        return None
    return task.program_id


def live_count(snapshot: TaskSnapshot) -> int:
    return sum(t.live for t in snapshot.agents) + len(_programs(snapshot))


def task_rows(snapshot: TaskSnapshot, max_rows: int | None = None) -> list[str]:
    """The panel's lines: the header and at most `max_rows` rows; [] when it has no row."""
    rows = [
        agent_row(t, depth) if isinstance(t, AgentTask) else program_row(t, depth)
        for t, depth in tree_order(snapshot)
    ]
    if not rows:
        return []
    if max_rows is not None and len(rows) > max(max_rows, 1):
        keep = max(max_rows, 1) - 1
        rows = [*rows[:keep], more_row(len(rows) - keep)]
    return [header(live_count(snapshot)), *rows]
