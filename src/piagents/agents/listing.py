"""`list`: query parsing, excerpts and the page of entries (pure)."""

from __future__ import annotations

import datetime
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from piagents.agents import texts
from piagents.agents.texts import Shown

REQUEST_WIDTH = 200
_MESSAGE_WRAPPER = re.compile(r"^<agent-message\b[^>]*>\n(.*)\n</agent-message>$", re.DOTALL)


def parse_query(query: str) -> list[list[str]]:
    """`a b|c` → [[a, b], [c]]: spaces mean AND, `|` means OR; lower-cased."""
    groups = []
    for part in query.split("|"):
        terms = [t.lower() for t in part.split()]
        if terms:
            groups.append(terms)
    return groups


def matches(text: str, groups: Sequence[Sequence[str]]) -> bool:
    lowered = text.lower()
    return any(all(t in lowered for t in g) for g in groups)


def unwrap(text: str) -> str:
    """The body of an `agent-message` element, or the text itself."""
    m = _MESSAGE_WRAPPER.match(text)
    return m.group(1) if m else text


def one_line(text: str, width: int = REQUEST_WIDTH) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def excerpt(text: str, groups: Sequence[Sequence[str]], width: int = REQUEST_WIDTH) -> str:
    """A one-line window of `text` around its first matching term."""
    flat = " ".join(unwrap(text).split())
    if len(flat) <= width:
        return flat
    lowered = flat.lower()
    positions = [lowered.find(t) for g in groups for t in g if t in lowered]
    at = min(positions) if positions else 0
    start = max(0, at - width // 3)
    end = min(len(flat), start + width - 2)
    start = max(0, end - (width - 2))
    return ("…" if start > 0 else "") + flat[start:end] + ("…" if end < len(flat) else "")


def stamp(ms: int) -> str:
    return datetime.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M")


@dataclass(frozen=True, slots=True)
class ListRow:
    id: str
    shown: Shown
    owner_id: str | None
    state: str
    cwd: str
    request: tuple[int, str] | None  # (time, text) shown under the entry


def render_page(rows: Sequence[ListRow], total: int, offset: int) -> tuple[str, dict[str, Any]]:
    """The text and details of one page of `list`."""
    if not rows:
        return texts.NO_MATCHING_AGENTS, {"total": total, "agents": []}
    lines: list[str] = []
    for r in rows:
        lines.append(texts.list_entry(r.shown, r.state, r.cwd))
        if r.request is not None:
            lines.append(texts.list_request(stamp(r.request[0]), r.request[1]))
    remaining = total - offset - len(rows)
    if remaining > 0:
        lines.append("")
        lines.append(texts.more_results(remaining, offset + len(rows)))
    agents: list[dict[str, Any]] = []
    for r in rows:
        entry: dict[str, Any] = {"id": r.id}
        if r.shown.name is not None:
            entry["name"] = r.shown.name
        if r.owner_id is not None:
            entry["ownerId"] = r.owner_id
        entry["state"] = r.state
        agents.append(entry)
    return "\n".join(lines), {"total": total, "agents": agents}
