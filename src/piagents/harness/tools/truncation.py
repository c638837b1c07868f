"""Pi's output limits: 2000 lines or 50 KiB, whichever comes first.

`truncate_head` keeps the start (for reading files), `truncate_tail` keeps the
end (for command output). Both are pure and cut only between lines, except
when the one line they would show is itself larger than the byte limit; they
never split a UTF-8 character. A trailing newline ends the last line and does
not count as another one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

MAX_LINES = 2000
MAX_BYTES = 50 * 1024

TruncatedBy = Literal["lines", "bytes"]


@dataclass(frozen=True, slots=True)
class Truncation:
    """The kept text and what was cut; line numbers are 1-based and 0 when none is shown."""

    text: str
    truncated: bool
    truncated_by: TruncatedBy | None
    total_lines: int
    total_bytes: int
    output_lines: int
    output_bytes: int
    first_line: int
    last_line: int
    line_cut: bool = False  # the one line shown is only part of a line over the byte limit
    max_lines: int = MAX_LINES
    max_bytes: int = MAX_BYTES

    def to_json(self) -> dict[str, Any]:
        """The record as tool details carry it (camelCase, like Pi's)."""
        return {
            "truncated": self.truncated,
            "truncatedBy": self.truncated_by,
            "totalLines": self.total_lines,
            "totalBytes": self.total_bytes,
            "outputLines": self.output_lines,
            "outputBytes": self.output_bytes,
            "firstLine": self.first_line,
            "lastLine": self.last_line,
            "lineCut": self.line_cut,
            "maxLines": self.max_lines,
            "maxBytes": self.max_bytes,
        }


def format_size(n_bytes: int) -> str:
    """`512B`, `50.0KB`, `1.5MB` — the sizes Pi's notices show."""
    if n_bytes < 1024:
        return f"{n_bytes}B"
    if n_bytes < 1024 * 1024:
        return f"{n_bytes / 1024:.1f}KB"
    return f"{n_bytes / (1024 * 1024):.1f}MB"


def split_lines(text: str) -> list[str]:
    """Lines without their terminators; a trailing newline adds no empty line."""
    if not text:
        return []
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


def _byte_len(text: str) -> int:
    return len(text.encode("utf-8"))


def _fits(lines: list[str], text: str, max_lines: int, max_bytes: int) -> bool:
    body = text[:-1] if text.endswith("\n") else text
    return len(lines) <= max_lines and _byte_len(body) <= max_bytes


def _untruncated(text: str, lines: list[str], max_lines: int, max_bytes: int) -> Truncation:
    n = len(lines)
    size = _byte_len(text)
    return Truncation(
        text, False, None, n, size, n, size, 1 if n else 0, n, False, max_lines, max_bytes
    )


def _take_lines(lines: list[str], max_lines: int, max_bytes: int) -> tuple[list[str], TruncatedBy]:
    """Whole lines from the front of `lines` that fit both limits, and which limit stopped them."""
    kept: list[str] = []
    used = 0
    for line in lines:
        if len(kept) == max_lines:
            return kept, "lines"
        size = _byte_len(line) + (1 if kept else 0)
        if used + size > max_bytes:
            return kept, "bytes"
        kept.append(line)
        used += size
    return kept, "lines"  # only reached when the caller knew the whole text did not fit


def truncate_head(text: str, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES) -> Truncation:
    """Keep the first lines that fit; a first line over `max_bytes` keeps its start."""
    lines = split_lines(text)
    if _fits(lines, text, max_lines, max_bytes):
        return _untruncated(text, lines, max_lines, max_bytes)
    kept, by = _take_lines(lines, max_lines, max_bytes)
    line_cut = not kept
    if line_cut:
        kept = [lines[0].encode("utf-8")[:max_bytes].decode("utf-8", errors="ignore")]
    out = "\n".join(kept)
    return Truncation(
        out,
        True,
        by,
        len(lines),
        _byte_len(text),
        len(kept),
        _byte_len(out),
        1,
        len(kept),
        line_cut,
        max_lines,
        max_bytes,
    )


def truncate_tail(text: str, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES) -> Truncation:
    """Keep the last lines that fit; a last line over `max_bytes` keeps its end."""
    lines = split_lines(text)
    if _fits(lines, text, max_lines, max_bytes):
        return _untruncated(text, lines, max_lines, max_bytes)
    kept, by = _take_lines(lines[::-1], max_lines, max_bytes)
    kept.reverse()
    line_cut = not kept
    if line_cut:
        kept = [lines[-1].encode("utf-8")[-max_bytes:].decode("utf-8", errors="ignore")]
    out = "\n".join(kept)
    total = len(lines)
    return Truncation(
        out,
        True,
        by,
        total,
        _byte_len(text),
        len(kept),
        _byte_len(out),
        total - len(kept) + 1,
        total,
        line_cut,
        max_lines,
        max_bytes,
    )
