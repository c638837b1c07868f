"""The `write` tool: create or overwrite a file, making parent directories."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from piagents.harness.tools.base import ToolContext, ToolError, ToolResult, resolve_path
from piagents.harness.tools.threads import run_blocking

DESCRIPTION = (
    "Write content to a file. Creates the file if it doesn't exist, overwrites it if it does. "
    "Automatically creates parent directories."
)
PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "minLength": 1,
            "description": "Path to the file to write (relative or absolute)",
        },
        "content": {"type": "string", "description": "Content to write to the file"},
    },
    "required": ["path", "content"],
    "additionalProperties": False,
}


def wrote_text(n_bytes: int, path: str) -> str:
    return f"Successfully wrote {n_bytes} bytes to {path}"


def _write(target: Path, data: bytes, shown: str) -> None:
    if target.is_dir():
        raise ToolError(f"Is a directory: {shown}")
    if target.exists() and not target.is_file():  # opening a FIFO to write would block
        raise ToolError(f"Not a regular file: {shown} (a FIFO, device or socket)")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    except OSError as exc:
        raise ToolError(f"Cannot write {shown}: {exc.strerror or exc}") from exc


class WriteTool:
    name = "write"
    description = DESCRIPTION
    parameters: dict[str, Any] = PARAMETERS
    prompt_snippet = "Create or overwrite files"
    prompt_guidelines: Sequence[str] = ("Use write only for new files or complete rewrites.",)

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        shown: str = args["path"]
        data = str(args["content"]).encode("utf-8")
        await run_blocking(_write, resolve_path(ctx, shown), data, shown)
        return ToolResult(wrote_text(len(data), shown))
