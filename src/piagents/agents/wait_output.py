"""What `wait` returns: result blocks, pending Agents, and truncation (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from piagents.agents import texts
from piagents.agents.texts import Shown
from piagents.harness.tools.truncation import (
    MAX_BYTES,
    MAX_LINES,
    Truncation,
    format_size,
    split_lines,
    truncate_head,
)


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


def truncation_notice(cut: Truncation, max_bytes: int, full_output_path: str) -> str:
    """Pi's native notice: the byte limit is named only when bytes stopped the text."""
    span = f"lines {cut.first_line}-{cut.last_line} of {cut.total_lines}"
    limit = f" ({format_size(max_bytes)} limit)" if cut.truncated_by == "bytes" else ""
    return f"[Showing {span}{limit}. Full output: {full_output_path}]"


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
        {
            "id": i.agent_id,
            "name": i.shown.name,
            "state": i.outcome,
            "history": i.history,
            "result": i.text,
        }
        for i in items
    ]
    if lines <= max_lines and size <= max_bytes:
        details = {"results": results_json, "pending": pending_json}
        if interrupted:
            details["interrupted"] = True
        return WaitOutput(full, details, tuple(i.input_id for i in items), None)

    # Over the limit: add blocks while they fit (leaving room for the lines after
    # them); cut the one that crosses it.
    tail_sizes = [_size("\n".join(tail))] if tail else []
    omitted_sizes = _omitted_line_sizes(items)
    kept: list[str] = []
    kept_total = _Sizes()
    truncation_json: dict[str, Any] | None = None
    omitted: list[int] = []
    for index, item in enumerate(items):
        if truncation_json is not None:
            omitted.append(index)
            continue
        later = [omitted_sizes[index + 1]] if index + 1 < len(items) else []
        after = [*tail_sizes, *later]
        block_size = _size(blocks[index])
        block_lines, block_bytes = kept_total.joined(block_size, after)
        if block_lines <= max_lines and block_bytes <= max_bytes:
            kept.append(blocks[index])
            kept_total.add(block_size)
            continue
        # Room left for the cut block: what the other parts and separators leave.
        other_lines, other_bytes = kept_total.joined((0, 0), after)
        cut, block = _cut_block(
            item,
            alone,
            max_lines - other_lines,
            max_bytes - other_bytes,
            max_bytes,
            full_output_path,
        )
        truncation_json = cut.to_json()
        if block is None:  # not even its notice fits: it is omitted with the later ones
            omitted.append(index)
            continue
        kept.append(block)
        results_json[index]["result"] = cut.text
    returned = [i.input_id for index, i in enumerate(items) if index not in omitted]
    text = "\n\n".join([*kept, "\n".join(tail)] if tail else kept)
    if omitted:
        text += "\n\n" + texts.results_omitted([items[i].shown for i in omitted])
    for index in omitted:
        results_json[index].pop("result", None)
    details = {
        "results": results_json,
        "pending": pending_json,
        "truncation": truncation_json,
        "fullOutputPath": full_output_path,
    }
    if interrupted:
        details["interrupted"] = True
    return WaitOutput(text, details, tuple(returned), full)


class _Sizes:
    """Running lines/bytes of the blocks kept so far (so each step costs O(1))."""

    def __init__(self) -> None:
        self.count = self.lines = self.bytes = 0

    def add(self, size: tuple[int, int]) -> None:
        self.count += 1
        self.lines += size[0]
        self.bytes += size[1]

    def joined(self, extra: tuple[int, int], after: Sequence[tuple[int, int]]) -> tuple[int, int]:
        """Lines and bytes of the kept blocks, `extra` and `after`, joined by blank lines."""
        lines, size = _measure([extra, *after])
        if self.count:
            lines += self.lines + 1 + (self.count - 1)
            size += self.bytes + 2 + 2 * (self.count - 1)
        return lines, size


def _omitted_line_sizes(items: Sequence[ResultItem]) -> list[tuple[int, int]]:
    """Size of the `[Results omitted: …]` line naming items[i:], for each i."""
    frame = len(texts.results_omitted([]).encode("utf-8"))
    sizes: list[tuple[int, int]] = [(0, 0)] * (len(items) + 1)
    labels_bytes = 0
    for i in range(len(items) - 1, -1, -1):
        labels_bytes += len(texts.label(items[i].shown).encode("utf-8"))
        separators = 2 * (len(items) - 1 - i)
        sizes[i] = (1, frame + labels_bytes + separators)
    return sizes


def _measure(parts: Sequence[tuple[int, int]]) -> tuple[int, int]:
    """Lines and bytes of parts joined by blank lines."""
    separators = max(0, len(parts) - 1)
    return (
        sum(n for n, _ in parts) + separators,
        sum(b for _, b in parts) + 2 * separators,
    )


def _cut_block(
    item: ResultItem,
    alone: bool,
    room_lines: int,
    room_bytes: int,
    max_bytes: int,
    full_output_path: str,
) -> tuple[Truncation, str | None]:
    """The result cut to `room_lines`/`room_bytes`, with the notice and its closing tag;
    None when not even the notice fits."""
    opening = texts.agent_result(item.shown, item.outcome, "", item.history).split("\n")[0]
    closing = "</agent-result>"
    total_lines = len(split_lines(item.text))
    widest = truncation_notice(
        Truncation("", True, "bytes", total_lines, 0, 0, 0, total_lines, total_lines),
        max_bytes,
        full_output_path,
    )
    # Around the kept text: the notice, `\n\n` before it, and the tags with their newlines.
    frame_lines, frame_bytes = 1, len(widest.encode("utf-8"))
    if not alone:
        frame_lines += 2
        frame_bytes += len(opening.encode("utf-8")) + len(closing) + 2
    text_lines, text_bytes = room_lines - frame_lines - 1, room_bytes - frame_bytes - 2
    if text_lines >= 1 and text_bytes >= 1:
        cut = truncate_head(item.text, text_lines, text_bytes)
    else:  # not even one line fits: the notice alone, if that fits
        cut = Truncation(
            "",
            True,
            "lines" if text_lines < 1 else "bytes",
            total_lines,
            len(item.text.encode("utf-8")),
            0,
            0,
            0,
            0,
            False,
            max(0, text_lines),
            max(0, text_bytes),
        )
        if frame_lines > room_lines or frame_bytes > room_bytes:
            return cut, None
    notice = truncation_notice(cut, max_bytes, full_output_path)
    body = f"{cut.text}\n\n{notice}" if cut.text else notice
    return cut, body if alone else f"{opening}\n{body}\n{closing}"
