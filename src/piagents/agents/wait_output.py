"""What `wait` returns: result blocks, pending Agents, and truncation (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from piagents.agents import texts
from piagents.agents.texts import Shown
from piagents.harness.tools.truncation import MAX_BYTES, MAX_LINES, format_size, truncate_head


@dataclass(frozen=True, slots=True)
class ResultItem:
    input_id: str
    agent_id: str
    shown: Shown
    outcome: str  # completed | failed | aborted
    text: str
    history: bool


@dataclass(frozen=True, slots=True)
class WaitOutput:
    text: str
    details: dict[str, Any]
    returned: tuple[str, ...]  # input IDs returned (truncated ones included): now read
    full_text: str | None  # set when truncated: saved to a file named in the notice


def _size(text: str) -> tuple[int, int]:
    return text.count("\n") + 1, len(text.encode("utf-8"))


def render_wait(
    items: Sequence[ResultItem],
    pending: Sequence[tuple[str, Shown]],
    interrupted: bool,
    *,
    full_output_path: str = "",
    max_lines: int = MAX_LINES,
    max_bytes: int = MAX_BYTES,
) -> WaitOutput:
    """Blocks in order; the one crossing the limit is cut but keeps its closing tag."""
    tail: list[str] = []
    if pending:
        tail.append(texts.still_pending([s for _, s in pending]))
    if interrupted:
        tail.append(texts.STOPPED_WAITING)
    pending_json = [{"id": agent_id, "name": s.name} for agent_id, s in pending]

    if not items and not pending:
        details: dict[str, Any] = {"results": [], "pending": []}
        if interrupted:
            details["interrupted"] = True
            return WaitOutput(texts.STOPPED_WAITING, details, (), None)
        return WaitOutput(texts.NO_RESULTS, details, (), None)

    unread = [i for i in items if not i.history]
    alone = len(items) == 1 and len(unread) == 1 and unread[0].outcome == "completed" and not tail
    if alone:
        blocks = [unread[0].text]  # a single unread completed result is the answer alone
    else:
        blocks = [texts.agent_result(i.shown, i.outcome, i.text, i.history) for i in items]
    full = "\n\n".join([*blocks, *(["\n".join(tail)] if tail else [])])
    lines, size = _size(full)
    results_json: list[dict[str, Any]] = [
        {"id": i.agent_id, "name": i.shown.name, "state": i.outcome, "history": i.history,
         "result": i.text}
        for i in items
    ]
    if lines <= max_lines and size <= max_bytes:
        details = {"results": results_json, "pending": pending_json}
        if interrupted:
            details["interrupted"] = True
        return WaitOutput(full, details, tuple(i.input_id for i in items), None)

    # Over the limit: add blocks while they fit; cut the one that crosses it.
    tail_text = "\n".join(tail)
    kept: list[str] = []
    returned: list[str] = []
    truncation_json: dict[str, Any] | None = None
    omitted: list[int] = []
    used_lines, used_bytes = 0, 0
    reserve_lines, reserve_bytes = _size(tail_text) if tail else (0, 0)
    reserve_lines += 4  # separators, the notice and the omitted line
    reserve_bytes += 400 + sum(len(i.shown.short_id) + len(i.shown.name or "") + 4 for i in items)
    for index, item in enumerate(items):
        if truncation_json is not None:
            omitted.append(index)
            continue
        block = blocks[index]
        b_lines, b_bytes = _size(block)
        room_lines = max_lines - used_lines - reserve_lines
        room_bytes = max_bytes - used_bytes - reserve_bytes
        if b_lines <= room_lines and b_bytes <= room_bytes:
            kept.append(block)
            returned.append(item.input_id)
            used_lines += b_lines + 1
            used_bytes += b_bytes + 2
            continue
        cut = truncate_head(item.text, max(1, room_lines - 3), max(0, room_bytes - 200))
        notice = (
            f"[Showing lines {cut.first_line}-{cut.last_line} of {cut.total_lines} "
            f"({format_size(max_bytes)} limit). Full output: {full_output_path}]"
        )
        body = f"{cut.text}\n\n{notice}" if cut.text else notice
        if alone:
            kept.append(body)
        else:
            opening = texts.agent_result(item.shown, item.outcome, "", item.history).split("\n")[0]
            kept.append(f"{opening}\n{body}\n</agent-result>")
        returned.append(item.input_id)
        truncation_json = cut.to_json()
        results_json[index]["result"] = cut.text
    for index in omitted:
        results_json[index].pop("result", None)
    text = "\n\n".join([*kept, tail_text] if tail else kept)
    if omitted:
        text += "\n\n" + texts.results_omitted([items[i].shown for i in omitted])
    details = {
        "results": results_json,
        "pending": pending_json,
        "truncation": truncation_json,
        "fullOutputPath": full_output_path,
    }
    if interrupted:
        details["interrupted"] = True
    return WaitOutput(text, details, tuple(returned), full)
