"""Result blocks cut to Pi's output limits (pure): the truncation of spec §6 for every
face's `wait` (the `agent` tool's, the `program` tool's).

A face gives its results as `Block`s (the text between an opening and a closing tag
line, and the label its omitted line names it by), what follows them (`tail`), and
its omitted line. Blocks are kept while they fit, leaving room for what follows; the
one that crosses the limit is cut with Pi's notice but keeps its closing tag; later
ones are omitted (their results stay unreturned) and named by the omitted line. A
result shown `alone` (a single answer) is cut the same way, without tags.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from piagents.harness.tools.truncation import (
    MAX_BYTES,
    MAX_LINES,
    Truncation,
    format_size,
    split_lines,
    truncate_head,
)

LABEL_SEPARATOR = ", "  # how an omitted line joins the labels it names


@dataclass(frozen=True, slots=True)
class Block:
    """One result as its face writes it."""

    text: str
    opening: str  # the opening tag line, e.g. `<agent-result ... status="completed">`
    closing: str  # the closing tag, e.g. `</agent-result>`
    label: str  # how the omitted line names it (for its size)
    framed: str | None = None  # the block with its tags, when made ahead (`whole`)


@dataclass(frozen=True, slots=True)
class Rendered:
    """The blocks as the caller reads them. `truncated`: over the limits (then
    `full_text` is everything, untruncated, for the file the notice names); `cut`: the
    block that crossed the limit, by index, and how it was cut (also when not even its
    notice fit and it was omitted); `omitted`: the indexes of the blocks left out."""

    text: str
    truncated: bool = False
    full_text: str | None = None
    cut: tuple[int, Truncation] | None = None
    omitted: tuple[int, ...] = ()


def truncation_notice(cut: Truncation, max_bytes: int, full_output_path: str) -> str:
    """Pi's native notice: the byte limit is named only when bytes stopped the text."""
    span = f"lines {cut.first_line}-{cut.last_line} of {cut.total_lines}"
    limit = f" ({format_size(max_bytes)} limit)" if cut.truncated_by == "bytes" else ""
    return f"[Showing {span}{limit}. Full output: {full_output_path}]"


def whole(block: Block, alone: bool) -> str:
    if alone:
        return block.text
    if block.framed is not None:
        return block.framed
    return framed(block.opening, block.text, block.closing)


def framed(opening: str, text: str, closing: str) -> str:
    """A block's text between its tag lines."""
    return f"{opening}\n{text}\n{closing}"


def render_blocks(
    blocks: Sequence[Block],
    tail: str | None,
    omitted_line: Callable[[Sequence[int]], str],
    *,
    alone: bool = False,
    full_output_path: str = "",
    max_lines: int = MAX_LINES,
    max_bytes: int = MAX_BYTES,
) -> Rendered:
    """The blocks (all of them whole when they fit), then `tail`, joined by blank lines.
    `omitted_line(indexes)` names the omitted blocks by their labels, joined by ", ";
    `alone` (one block) shows its text without tags."""
    texts = [whole(b, alone) for b in blocks]
    full = "\n\n".join([*texts, *([tail] if tail else [])])
    if _fits(_size(full), max_lines, max_bytes):
        return Rendered(full)

    # Over the limit: add blocks while they fit (leaving room for the lines after
    # them); cut the one that crosses it.
    tail_sizes = [_size(tail)] if tail else []
    omitted_sizes = _omitted_line_sizes(blocks, omitted_line)
    kept: list[str] = []
    kept_total = _Sizes()
    cut: tuple[int, Truncation] | None = None
    omitted: list[int] = []
    for index, block in enumerate(blocks):
        if cut is not None:
            omitted.append(index)
            continue
        later = [omitted_sizes[index + 1]] if index + 1 < len(blocks) else []
        after = [*tail_sizes, *later]
        size = _size(texts[index])
        if _fits(kept_total.joined(size, after), max_lines, max_bytes):
            kept.append(texts[index])
            kept_total.add(size)
            continue
        # Room left for the cut block: what the other parts and separators leave.
        other_lines, other_bytes = kept_total.joined((0, 0), after)
        truncation, shown = _cut_block(
            block,
            alone,
            max_lines - other_lines,
            max_bytes - other_bytes,
            max_bytes,
            full_output_path,
        )
        cut = (index, truncation)
        if shown is None:  # not even its notice fits: omitted with the later ones
            omitted.append(index)
            continue
        kept.append(shown)
    parts = [*kept, *([tail] if tail else [])]
    if omitted:
        parts.append(omitted_line(omitted))
    return Rendered("\n\n".join(parts), True, full, cut, tuple(omitted))


def _size(text: str) -> tuple[int, int]:
    return text.count("\n") + 1, len(text.encode("utf-8"))


def _fits(size: tuple[int, int], max_lines: int, max_bytes: int) -> bool:
    return size[0] <= max_lines and size[1] <= max_bytes


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


def _omitted_line_sizes(
    blocks: Sequence[Block], omitted_line: Callable[[Sequence[int]], str]
) -> list[tuple[int, int]]:
    """Size of the omitted line naming blocks[i:], for each i (in one pass)."""
    frame = len(omitted_line([]).encode("utf-8"))
    separator = len(LABEL_SEPARATOR.encode("utf-8"))
    sizes: list[tuple[int, int]] = [(0, 0)] * (len(blocks) + 1)
    labels_bytes = 0
    for i in range(len(blocks) - 1, -1, -1):
        labels_bytes += len(blocks[i].label.encode("utf-8"))
        sizes[i] = (1, frame + labels_bytes + separator * (len(blocks) - 1 - i))
    return sizes


def _measure(parts: Sequence[tuple[int, int]]) -> tuple[int, int]:
    """Lines and bytes of parts joined by blank lines."""
    separators = max(0, len(parts) - 1)
    return (
        sum(n for n, _ in parts) + separators,
        sum(b for _, b in parts) + 2 * separators,
    )


def _cut_block(
    block: Block,
    alone: bool,
    room_lines: int,
    room_bytes: int,
    max_bytes: int,
    full_output_path: str,
) -> tuple[Truncation, str | None]:
    """The block's text cut to `room_lines`/`room_bytes`, with the notice and its
    closing tag; None when not even the notice fits."""
    total_lines = len(split_lines(block.text))
    widest = truncation_notice(
        Truncation("", True, "bytes", total_lines, 0, 0, 0, total_lines, total_lines),
        max_bytes,
        full_output_path,
    )
    # Around the kept text: the notice, `\n\n` before it, and the tags with their newlines.
    frame_lines, frame_bytes = 1, len(widest.encode("utf-8"))
    if not alone:
        frame_lines += 2
        frame_bytes += len(block.opening.encode("utf-8")) + len(block.closing.encode()) + 2
    text_lines, text_bytes = room_lines - frame_lines - 1, room_bytes - frame_bytes - 2
    if text_lines >= 1 and text_bytes >= 1:
        cut = truncate_head(block.text, text_lines, text_bytes)
    else:  # not even one line fits: the notice alone, if that fits
        cut = Truncation(
            "",
            True,
            "lines" if text_lines < 1 else "bytes",
            total_lines,
            len(block.text.encode("utf-8")),
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
    text = f"{cut.text}\n\n{notice}" if cut.text else notice
    return cut, text if alone else f"{block.opening}\n{text}\n{block.closing}"
