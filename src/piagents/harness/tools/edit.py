"""The `edit` tool: replace one exact, unique piece of text in a file.

Matching happens on the file with `\n` line endings and without a BOM; the
file's own line ending (CRLF when it has any) and BOM are restored on write.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from piagents.harness.tools.base import ToolContext, ToolError, ToolResult, resolve_path
from piagents.harness.tools.threads import run_blocking
from piagents.regular_file import NotARegularFile, read_whole_regular_file

BOM = "\ufeff"

DESCRIPTION = (
    "Edit a file by replacing exact text. The oldText must match exactly (including "
    "whitespace) and occur once. Use this for precise, surgical edits."
)
PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "minLength": 1,
            "description": "Path to the file to edit (relative or absolute)",
        },
        "oldText": {
            "type": "string",
            "minLength": 1,
            "description": "Exact text to find and replace (must match exactly)",
        },
        "newText": {"type": "string", "description": "New text to replace the old text with"},
    },
    "required": ["path", "oldText", "newText"],
    "additionalProperties": False,
}


def not_found_text(path: str) -> str:
    return (
        f"Could not find the exact text in {path}. The old text must match exactly "
        "including all whitespace and newlines."
    )


def ambiguous_text(count: int, path: str) -> str:
    return (
        f"Found {count} occurrences of the text in {path}. The text must be unique. "
        "Please provide more context to make it unique."
    )


def unchanged_text(path: str) -> str:
    return f"No changes made to {path}. The replacement produced identical content."


def replaced_text(path: str) -> str:
    return f"Successfully replaced text in {path}."


def _lf(text: str) -> str:
    return text.replace("\r\n", "\n")


def _load(target: Path, shown: str) -> str:
    if not target.exists():
        raise ToolError(f"File not found: {shown}")
    if target.is_dir():
        raise ToolError(f"Is a directory: {shown}")
    try:
        return read_whole_regular_file(target).decode("utf-8")
    except NotARegularFile:
        raise ToolError(f"Not a regular file: {shown} (a FIFO, device or socket)") from None
    except UnicodeDecodeError as exc:
        raise ToolError(f"Cannot edit {shown}: it is not UTF-8 text") from exc
    except OSError as exc:
        raise ToolError(f"Cannot read {shown}: {exc.strerror or exc}") from exc


def _store(target: Path, text: str, shown: str) -> None:
    try:
        target.write_bytes(text.encode("utf-8"))
    except OSError as exc:
        raise ToolError(f"Cannot write {shown}: {exc.strerror or exc}") from exc


def unified_diff(before: str, after: str, path: str) -> tuple[str, int]:
    """A unified diff of two texts and the first changed line (1-based) of `after`."""
    old_lines, new_lines = before.split("\n"), after.split("\n")
    first = next(
        (i for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=False)) if a != b),
        min(len(old_lines), len(new_lines)),
    )
    diff = difflib.unified_diff(old_lines, new_lines, f"a/{path}", f"b/{path}", lineterm="")
    return "\n".join(diff), first + 1


def replace_once(content: str, old: str, new: str, shown: str) -> str:
    """`content` with its one occurrence of `old` replaced, or a ToolError saying why not."""
    count = content.count(old)
    if count == 0:
        raise ToolError(not_found_text(shown))
    if count > 1:
        raise ToolError(ambiguous_text(count, shown))
    result = content.replace(old, new, 1)
    if result == content:
        raise ToolError(unchanged_text(shown))
    return result


class EditTool:
    name = "edit"
    description = DESCRIPTION
    parameters: dict[str, Any] = PARAMETERS
    prompt_snippet = "Make surgical edits to files (find exact text and replace)"
    prompt_guidelines: Sequence[str] = (
        "Use edit for precise changes; oldText must match the file exactly and be unique.",
    )

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        shown: str = args["path"]
        target = resolve_path(ctx, shown)
        raw = await run_blocking(_load, target, shown)
        bom = BOM if raw.startswith(BOM) else ""
        eol = "\r\n" if "\r\n" in raw else "\n"
        before = _lf(raw.removeprefix(BOM))
        after = replace_once(before, _lf(args["oldText"]), _lf(args["newText"]), shown)
        await run_blocking(_store, target, bom + after.replace("\n", eol), shown)
        diff, first_changed = unified_diff(before, after, shown)
        return ToolResult(replaced_text(shown), {"diff": diff, "firstChangedLine": first_changed})
