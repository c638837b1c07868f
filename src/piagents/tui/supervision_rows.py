"""The supervision status widget's lines, from a snapshot of one lead's managed agents (pure).

```text
Agents: 2 working · 1 blocked (/agents to manage)
● generalist-1  1m05s  faux/function · off · 1.2k/128k 0.9%
  ◌ scout-1  12s  openai/gpt-5 · low · 300/400k 0.1%
◐ reviewer-1  3m00s  anthropic/claude-sonnet-4 · high · 20k/200k 10.0%
```
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from piagents.read_model import ManagedAgent  # the read model's record, shown here
from piagents.tui.message_text import compact_number

INDENT = "  "
# The states counted in the header, in the order they are shown.
COUNTED = ("working", "blocked", "settling", "starting", "unknown", "lost")
MARKERS = {
    "working": "●",
    "blocked": "◐",
    "settling": "◌",
    "starting": "◌",
    "unknown": "?",
    "lost": "×",
}


@dataclass(frozen=True, slots=True)
class SupervisionSnapshot:
    """The managed agents of one lead, oldest first."""

    lead_id: str
    agents: tuple[ManagedAgent, ...] = ()


def marker(state: str) -> str:
    return MARKERS.get(state, "?")


def counts(agents: Iterable[ManagedAgent]) -> str:
    """`2 working · 1 lost`: the non-zero counts, in the order of COUNTED."""
    states = [a.state for a in agents]
    return " · ".join(f"{states.count(s)} {s}" for s in COUNTED if states.count(s))


def elapsed(ms: int) -> str:
    """`42s`, `3m05s`, `1h02m`."""
    seconds = max(0, ms) // 1000
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def context_use(tokens: int | None, window: int) -> str:
    """`1.2k/128k 0.9%`; `?` when the tokens are not known."""
    if tokens is None:
        return "?"
    if not window:
        return compact_number(tokens)
    return f"{compact_number(tokens)}/{compact_number(window)} {100 * tokens / window:.1f}%"


def header(agents: Iterable[ManagedAgent]) -> str:
    return f"Agents: {counts(agents)} (/agents to manage)"


def agent_row(agent: ManagedAgent, depth: int, now_ms: int) -> str:
    facts = " · ".join(
        (agent.model, agent.thinking, context_use(agent.tokens, agent.context_window))
    )
    since = elapsed(now_ms - agent.created)
    return f"{INDENT * depth}{marker(agent.state)} {agent.label}  {since}  {facts}"


def tree_order(snapshot: SupervisionSnapshot) -> list[tuple[ManagedAgent, int]]:
    """Owners before the agents they delegated to, depth-first, oldest first.

    An agent whose owner is not in the snapshot hangs under the lead."""
    by_session = {a.session_id: a for a in snapshot.agents}
    children: dict[str, list[ManagedAgent]] = {}
    for agent in snapshot.agents:
        owner = agent.owner_id if agent.owner_id in by_session else snapshot.lead_id
        children.setdefault(owner, []).append(agent)
    out: list[tuple[ManagedAgent, int]] = []
    seen: set[str] = set()

    def visit(owner_id: str, depth: int) -> None:
        for child in children.get(owner_id, []):
            if child.request in seen:
                continue
            seen.add(child.request)
            out.append((child, depth))
            visit(child.session_id, depth + 1)

    visit(snapshot.lead_id, 0)
    return out


def status_rows(
    snapshot: SupervisionSnapshot, now_ms: int, max_rows: int | None = None
) -> list[str]:
    """The header and at most `max_rows` agent rows; [] when the lead has no agent."""
    ordered = tree_order(snapshot)
    if not ordered:
        return []
    rows = [agent_row(a, depth, now_ms) for a, depth in ordered]
    if max_rows is not None and len(rows) > max(max_rows, 1):
        keep = max(max_rows, 1) - 1
        rows = [*rows[:keep], f"+{len(rows) - keep} more"]
    return [header(snapshot.agents), *rows]


# ---- /agents: the Definitions section ---------------------------------------------------


def definition_row(record: Mapping[str, Any]) -> str:
    """One definition of the effective roster as `Roster.records()` gives it:

    `[x] generalist  model default · thinking default  bundled`
    """
    name = str(record["name"])
    if not record.get("trusted", True):
        return f"[ ] {name}  untrusted project: not used ({record.get('path') or ''})"
    box = "[x]" if record.get("enabled", True) else "[ ]"
    model = record.get("model") or "default"
    thinking = record.get("thinking") or "default"
    state = "" if record.get("enabled", True) else "  disabled"
    return f"{box} {name}  model {model} · thinking {thinking}  {record.get('layer') or ''}{state}"


def running_row(agent: ManagedAgent, depth: int, now_ms: int) -> str:
    """A row of the Running section: the status row and the state in words."""
    return f"{agent_row(agent, depth, now_ms)}  {agent.state}"
