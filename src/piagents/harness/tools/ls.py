"""The `ls` tool: one directory's entries, sorted case-insensitively."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from piagents.harness.tools.base import ToolContext, ToolError, ToolResult
from piagents.harness.tools.find import search_root
from piagents.harness.tools.threads import run_blocking
from piagents.harness.tools.truncation import MAX_BYTES, format_size, truncate_head

DEFAULT_LIMIT = 500

DESCRIPTION = (
    "List directory contents. Returns entries sorted alphabetically, with '/' suffix for "
    f"directories. Includes dotfiles. Output is truncated to {DEFAULT_LIMIT} entries or "
    f"{MAX_BYTES // 1024}KB (whichever is hit first)."
)
PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "description": "Directory to list (default: current directory)",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "description": f"Maximum number of entries to return (default: {DEFAULT_LIMIT})",
        },
    },
    "required": [],
    "additionalProperties": False,
}


def entry_limit_notice(limit: int) -> str:
    return f"{limit} entries limit reached. Use limit={limit * 2} for more"


def byte_limit_notice() -> str:
    return f"{format_size(MAX_BYTES)} limit reached"


def _list(directory: Path, shown: str) -> list[str]:
    try:
        with os.scandir(directory) as it:
            entries = list(it)
    except OSError as exc:
        raise ToolError(f"Cannot read directory {shown}: {exc.strerror or exc}") from exc
    entries.sort(key=lambda e: (e.name.lower(), e.name))
    return [e.name + "/" if _is_dir(e) else e.name for e in entries]


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


class LsTool:
    name = "ls"
    description = DESCRIPTION
    parameters: dict[str, Any] = PARAMETERS
    prompt_snippet = "List directory contents"
    prompt_guidelines: Sequence[str] = ()

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        shown = args.get("path") or "."
        directory = search_root(ctx, shown, dirs_only=True)
        limit = int(args.get("limit", DEFAULT_LIMIT))
        names = await run_blocking(_list, directory, shown)
        if not names:
            return ToolResult("(empty directory)")
        truncation = truncate_head("\n".join(names[:limit]), max_lines=sys.maxsize)
        notices: list[str] = []
        details: dict[str, Any] = {}
        if len(names) > limit:
            notices.append(entry_limit_notice(limit))
            details["entryLimitReached"] = limit
        if truncation.truncated:
            notices.append(byte_limit_notice())
            details["truncation"] = truncation.to_json()
        text = truncation.text
        if notices:
            text += f"\n\n[{'. '.join(notices)}]"
        return ToolResult(text, details or None)
