"""The `read` tool: a text file's lines (from an offset, up to Pi's limits) or an image."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from piagents.ai.messages import ImageContent
from piagents.harness.tools.base import ToolContext, ToolError, ToolResult, resolve_path
from piagents.harness.tools.threads import run_blocking
from piagents.harness.tools.truncation import (
    MAX_BYTES,
    MAX_LINES,
    Truncation,
    format_size,
    split_lines,
    truncate_head,
)
from piagents.regular_file import NotARegularFile, read_whole_regular_file

DESCRIPTION = (
    "Read the contents of a file. Supports text files and images (jpg, png, gif, webp). "
    "Images are sent as attachments. For text files, output is truncated to "
    f"{MAX_LINES} lines or {MAX_BYTES // 1024}KB (whichever is hit first). Use offset/limit "
    "for large files. When you need the full file, continue with offset until complete."
)
PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "minLength": 1,
            "description": "Path to the file to read (relative or absolute)",
        },
        "offset": {
            "type": "integer",
            "minimum": 1,
            "description": "Line number to start reading from (1-indexed)",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "description": "Maximum number of lines to read",
        },
    },
    "required": ["path"],
    "additionalProperties": False,
}


def line_too_long_notice(line: int, size: int, path: str) -> str:
    return (
        f"[Line {line} is {format_size(size)}, exceeds {format_size(MAX_BYTES)} limit. "
        f"Use bash: sed -n '{line}p' {path} | head -c {MAX_BYTES}]"
    )


def continue_notice(first: int, last: int, total: int, by: str | None) -> str:
    limit = f" ({format_size(MAX_BYTES)} limit)" if by == "bytes" else ""
    return f"[Showing lines {first}-{last} of {total}{limit}. Use offset={last + 1} to continue.]"


def more_lines_notice(remaining: int, next_offset: int) -> str:
    return f"[{remaining} more lines in file. Use offset={next_offset} to continue.]"


def image_mime_type(head: bytes) -> str | None:
    """The MIME type of a PNG, JPEG, GIF or WebP image, from its first bytes."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def _load(path: Path, shown: str) -> bytes:
    try:
        return read_whole_regular_file(path)  # never blocks on a FIFO, never reads a device
    except FileNotFoundError:
        raise ToolError(f"File not found: {shown}") from None
    except IsADirectoryError:
        raise ToolError(f"Is a directory: {shown}") from None
    except NotARegularFile:
        raise ToolError(f"Not a regular file: {shown} (a FIFO, device or socket)") from None
    except OSError as exc:
        raise ToolError(f"Cannot read {shown}: {exc.strerror or exc}") from exc


def _read_text(data: bytes, shown: str, offset: int | None, limit: int | None) -> ToolResult:
    lines = split_lines(data.decode("utf-8", errors="replace").removeprefix("\ufeff"))
    total = len(lines)
    start = max((offset or 1) - 1, 0)
    if start > 0 and start >= total:
        raise ToolError(f"Offset {offset} is beyond end of file ({total} lines total)")
    end = total if limit is None else min(start + limit, total)
    truncation = truncate_head("\n".join(lines[start:end]))
    first = start + 1
    if truncation.line_cut:
        size = len(lines[start].encode("utf-8"))
        return ToolResult(line_too_long_notice(first, size, shown), _details(truncation))
    if truncation.truncated:
        last = start + truncation.output_lines
        notice = continue_notice(first, last, total, truncation.truncated_by)
        return ToolResult(f"{truncation.text}\n\n{notice}", _details(truncation))
    if end < total:
        return ToolResult(f"{truncation.text}\n\n{more_lines_notice(total - end, end + 1)}")
    return ToolResult(truncation.text)


def _details(truncation: Truncation) -> dict[str, Any]:
    return {"truncation": truncation.to_json()}


class ReadTool:
    name = "read"
    description = DESCRIPTION
    parameters: dict[str, Any] = PARAMETERS
    prompt_snippet = "Read file contents"
    prompt_guidelines: Sequence[str] = (
        "Use read to examine files before editing them, instead of cat or sed.",
    )

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        shown: str = args["path"]
        data = await run_blocking(_load, resolve_path(ctx, shown), shown)
        mime_type = image_mime_type(data[:16])
        if mime_type is not None:
            image = ImageContent(base64.b64encode(data).decode("ascii"), mime_type)
            return ToolResult(f"Read image file [{mime_type}]", images=(image,))
        offset, limit = args.get("offset"), args.get("limit")
        return _read_text(
            data,
            shown,
            None if offset is None else int(offset),
            None if limit is None else int(limit),
        )
