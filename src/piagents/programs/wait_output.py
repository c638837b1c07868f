"""What the `program` tool's `wait` returns (pure): one block per ended Program, the
ones still running, and truncation as the `agent` tool's `wait` does it (Pi's output
limits): blocks are kept while they fit, the one that crosses the limit is cut but
keeps its closing tag, later ones are omitted and stay unreturned."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from piagents.agents.wait_output import truncation_notice
from piagents.harness.tools.truncation import (
    MAX_BYTES,
    MAX_LINES,
    Truncation,
    split_lines,
    truncate_head,
)
from piagents.programs import texts


@dataclass(frozen=True, slots=True)
class ProgramItem:
    program_id: str
    short_id: str
    outcome: str  # completed | failed | stopped
    text: str


@dataclass(frozen=True, slots=True)
class ProgramWait:
    text: str
    returned: tuple[str, ...]  # Program IDs whose results were given (cut ones too)
    full_text: str | None  # set when truncated: saved to the file the notice names


def _size(text: str) -> tuple[int, int]:
    return text.count("\n") + 1, len(text.encode("utf-8"))


def render_program_wait(
    items: Sequence[ProgramItem],
    running: Sequence[str],
    *,
    full_output_path: str = "",
    max_lines: int = MAX_LINES,
    max_bytes: int = MAX_BYTES,
) -> ProgramWait:
    """`running`: the short IDs of the selected Programs still running."""
    if not items and not running:
        return ProgramWait(texts.NO_RESULTS, (), None)
    tail = texts.still_running(running) if running else None
    if len(items) == 1 and items[0].outcome == "completed" and tail is None:
        blocks = [items[0].text]
        alone = True
    else:
        blocks = [texts.program_result(i.short_id, i.outcome, i.text) for i in items]
        alone = False
    full = "\n\n".join([*blocks, *([tail] if tail else [])])
    lines, size = _size(full)
    if lines <= max_lines and size <= max_bytes:
        return ProgramWait(full, tuple(i.program_id for i in items), None)

    # Room kept for what follows the blocks: the running line and the omitted line
    # (measured as if it named every later result, so it always fits).
    kept: list[str] = []
    used_lines = used_bytes = 0
    omitted: list[ProgramItem] = []
    for index, item in enumerate(items):
        if omitted:
            omitted.append(item)
            continue
        later = items[index + 1 :]
        after = [
            *([tail] if tail else []),
            *([texts.results_omitted([i.short_id for i in later])] if later else []),
        ]
        after_lines = sum(_size(a)[0] + 1 for a in after)
        after_bytes = sum(_size(a)[1] + 2 for a in after)
        sep_lines, sep_bytes = (1, 2) if kept else (0, 0)
        block_lines, block_bytes = _size(blocks[index])
        room_lines = max_lines - used_lines - sep_lines - after_lines
        room_bytes = max_bytes - used_bytes - sep_bytes - after_bytes
        if block_lines <= room_lines and block_bytes <= room_bytes:
            kept.append(blocks[index])
            used_lines += sep_lines + block_lines
            used_bytes += sep_bytes + block_bytes
            continue
        block = _cut(item, alone, room_lines, room_bytes, max_bytes, full_output_path)
        if block is None:
            omitted.append(item)
            continue
        kept.append(block)
        used_lines += sep_lines + _size(block)[0]
        used_bytes += sep_bytes + _size(block)[1]
        omitted.extend(later)
        break
    parts = [*kept, *([tail] if tail else [])]
    if omitted:
        parts.append(texts.results_omitted([i.short_id for i in omitted]))
    returned = tuple(i.program_id for i in items if i not in omitted)
    return ProgramWait("\n\n".join(parts), returned, full)


def _cut(
    item: ProgramItem,
    alone: bool,
    room_lines: int,
    room_bytes: int,
    max_bytes: int,
    full_output_path: str,
) -> str | None:
    """The result cut to the room left, with the notice and its tags; None when not
    even the notice fits."""
    opening = texts.program_result(item.short_id, item.outcome, "").split("\n")[0]
    closing = "</program-result>"
    frame_lines = 0 if alone else 2
    frame_bytes = 0 if alone else len(opening.encode()) + len(closing) + 2
    # The notice (one line, at most this wide) and the blank line before it.
    total = len(split_lines(item.text))
    widest = truncation_notice(
        Truncation("", True, "bytes", total, 0, 0, 0, total, total), max_bytes, full_output_path
    )
    notice_lines, notice_bytes = 2, len(widest.encode()) + 2
    text_lines = room_lines - frame_lines - notice_lines
    text_bytes = room_bytes - frame_bytes - notice_bytes
    if text_lines < 1 or text_bytes < 1:
        return None
    cut = truncate_head(item.text, text_lines, text_bytes)
    body = f"{cut.text}\n\n{truncation_notice(cut, max_bytes, full_output_path)}"
    return body if alone else f"{opening}\n{body}\n{closing}"
