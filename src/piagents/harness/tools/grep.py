"""The `grep` tool: search file contents with Python regular expressions."""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from piagents.harness.tools.base import ToolContext, ToolError, ToolResult
from piagents.harness.tools.find import Entry, PathGlob, in_thread, search_root, walk
from piagents.harness.tools.truncation import MAX_BYTES, format_size, split_lines, truncate_head
from piagents.regular_file import read_whole_regular_file

DEFAULT_LIMIT = 100
MAX_LINE_CHARS = 500
BINARY_SNIFF_BYTES = 8192

DESCRIPTION = (
    "Search file contents for a pattern. Returns matching lines with file paths and line "
    "numbers. Respects .gitignore; skips binary files. Output is truncated to "
    f"{DEFAULT_LIMIT} matches or {MAX_BYTES // 1024}KB (whichever is hit first). "
    f"Long lines are truncated to {MAX_LINE_CHARS} chars."
)
PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {
            "type": "string",
            "minLength": 1,
            "description": "Search pattern (regex or literal string)",
        },
        "path": {
            "type": "string",
            "description": "Directory or file to search (default: current directory)",
        },
        "glob": {
            "type": "string",
            "description": "Filter files by glob pattern, e.g. '*.py' or '**/test_*.py'",
        },
        "ignoreCase": {
            "type": "boolean",
            "description": "Case-insensitive search (default: false)",
        },
        "literal": {
            "type": "boolean",
            "description": "Treat pattern as a literal string instead of a regex (default: false)",
        },
        "context": {
            "type": "integer",
            "minimum": 0,
            "description": "Number of lines to show before and after each match (default: 0)",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "description": f"Maximum number of matches to return (default: {DEFAULT_LIMIT})",
        },
    },
    "required": ["pattern"],
    "additionalProperties": False,
}


def match_limit_notice(limit: int) -> str:
    return f"{limit} matches limit reached. Use limit={limit * 2} for more, or refine pattern"


def byte_limit_notice() -> str:
    return f"{format_size(MAX_BYTES)} limit reached"


def long_lines_notice() -> str:
    return f"Some lines truncated to {MAX_LINE_CHARS} chars. Use read tool to see full lines"


@dataclass(frozen=True, slots=True)
class _Query:
    regex: re.Pattern[str]
    glob: PathGlob | None
    context: int
    limit: int


@dataclass(slots=True)
class _Found:
    lines: list[str] = field(default_factory=list)
    matches: int = 0
    limit_reached: bool = False
    lines_cut: bool = False


def _compile(args: dict[str, Any]) -> re.Pattern[str]:
    pattern: str = args["pattern"]
    source = re.escape(pattern) if args.get("literal") else pattern
    try:
        return re.compile(source, re.IGNORECASE if args.get("ignoreCase") else 0)
    except re.error as exc:
        raise ToolError(f"Invalid regex pattern '{pattern}': {exc}") from exc


def _text_lines(path: Path) -> list[str] | None:
    """The file's lines, or None for a binary or unreadable file."""
    try:
        data = read_whole_regular_file(path)  # a FIFO in the tree must not hang the search
    except OSError:  # unreadable, or not a regular file
        return None
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        return None
    return [line.removesuffix("\r") for line in split_lines(data.decode("utf-8", "replace"))]


def _windows(hits: list[int], context: int, n_lines: int) -> Iterator[range]:
    """Line ranges around the hits, overlapping ones merged."""
    start, end = hits[0] - context, hits[0] + context
    for hit in hits[1:]:
        if hit - context <= end + 1:
            end = hit + context
        else:
            yield range(max(start, 0), min(end, n_lines - 1) + 1)
            start, end = hit - context, hit + context
    yield range(max(start, 0), min(end, n_lines - 1) + 1)


def _search_file(shown: str, lines: list[str], query: _Query, found: _Found) -> None:
    hits: list[int] = []
    for number, line in enumerate(lines):
        if query.regex.search(line):
            if found.matches + len(hits) == query.limit:
                found.limit_reached = True
                break
            hits.append(number)
    if not hits:
        return
    found.matches += len(hits)
    hit_set = set(hits)
    for window in _windows(hits, query.context, len(lines)):
        for number in window:
            text = lines[number]
            if len(text) > MAX_LINE_CHARS:
                text = text[:MAX_LINE_CHARS] + "... [truncated]"
                found.lines_cut = True
            sep = ":" if number in hit_set else "-"
            found.lines.append(f"{shown}{sep}{number + 1}{sep} {text}")


def _grep(root: Path, query: _Query, stop: threading.Event) -> _Found:
    found = _Found()
    if root.is_dir():
        files: Iterator[Entry] = (e for e in walk(root, stop) if not e.is_dir)
    else:
        files = iter([Entry(root.name, root, False)])
    for entry in files:
        if query.glob is not None and not query.glob.matches(entry.rel):
            continue
        lines = _text_lines(entry.path)
        if lines is not None:
            _search_file(entry.rel, lines, query, found)
        if found.limit_reached or stop.is_set():
            break
    return found


class GrepTool:
    name = "grep"
    description = DESCRIPTION
    parameters: dict[str, Any] = PARAMETERS
    prompt_snippet = "Search file contents for patterns (respects .gitignore)"
    prompt_guidelines: Sequence[str] = (
        "Prefer grep over bash `grep`/`rg` to search code (respects .gitignore, bounded output).",
    )

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        root = search_root(ctx, args.get("path") or ".", dirs_only=False)
        glob = args.get("glob")
        limit = int(args.get("limit", DEFAULT_LIMIT))
        query = _Query(
            _compile(args),
            PathGlob.parse(glob) if glob else None,
            int(args.get("context", 0)),
            limit,
        )
        found = await in_thread(lambda stop: _grep(root, query, stop))
        if not found.matches:
            return ToolResult("No matches found")
        truncation = truncate_head("\n".join(found.lines), max_lines=sys.maxsize)
        notices: list[str] = []
        details: dict[str, Any] = {}
        if found.limit_reached:
            notices.append(match_limit_notice(limit))
            details["matchLimitReached"] = limit
        if truncation.truncated:
            notices.append(byte_limit_notice())
            details["truncation"] = truncation.to_json()
        if found.lines_cut:
            notices.append(long_lines_notice())
            details["linesTruncated"] = True
        text = truncation.text
        if notices:
            text += f"\n\n[{'. '.join(notices)}]"
        return ToolResult(text, details or None)
