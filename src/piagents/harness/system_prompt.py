"""The system prompt of a coding agent, and the project context files it includes."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

from piagents.harness.tools.base import Tool
from piagents.regular_file import read_regular_prefix

CONTEXT_FILE_NAMES = ("AGENTS.md", "CLAUDE.md")  # per directory, the first readable one counts

INTRO = (
    "You are an expert coding assistant working in the user's project. You help with "
    "software engineering tasks: you read and understand code, run commands, make careful "
    "edits and write new files, and you explain what you did."
)


# A project's instruction file beyond this is cut: a hostile or generated file must not
# fill the context (or the memory) before the first model call.
CONTEXT_FILE_LIMIT_BYTES = 256 * 1024


def _read(path: Path) -> str | None:
    """The text of a regular file, cut at its limit; None for anything else (a FIFO would
    block, a device never ends, a procfs file is not what its size says) and for text
    that is not UTF-8."""
    try:
        data, whole = read_regular_prefix(path, CONTEXT_FILE_LIMIT_BYTES)
        if whole:
            return data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    text = data.decode("utf-8", errors="ignore")
    return text + f"\n[{path.name} cut at {CONTEXT_FILE_LIMIT_BYTES // 1024} KiB]"


def _context_file_in(directory: Path) -> tuple[Path, str] | None:
    for name in CONTEXT_FILE_NAMES:
        path = directory / name
        text = _read(path)
        if text is not None:
            return path, text
    return None


def find_context_files(cwd: Path, home: Path | None = None) -> list[tuple[Path, str]]:
    """Project instruction files that apply in `cwd`, outermost first.

    `<home>/AGENTS.md` (when `home` is given) comes first, then one file per
    directory from the filesystem root down to `cwd`: its `AGENTS.md`, or its
    `CLAUDE.md` when there is no readable `AGENTS.md`. Unreadable files are skipped.
    """
    found: list[tuple[Path, str]] = []
    if home is not None:
        path = home.resolve() / "AGENTS.md"
        text = _read(path)
        if text is not None:
            found.append((path, text))
    cwd = cwd.resolve()
    for directory in (*reversed(cwd.parents), cwd):
        hit = _context_file_in(directory)
        if hit is not None and all(hit[0] != path for path, _ in found):
            found.append(hit)
    return found


# ---- the prompt ---------------------------------------------------------------


def _tools_section(tools: Sequence[Tool]) -> str | None:
    if not tools:
        return None
    lines = ["Available tools:"]
    for tool in tools:
        summary = tool.prompt_snippet or tool.description.strip().split("\n", 1)[0]
        lines.append(f"- {tool.name}: {summary}" if summary else f"- {tool.name}")
    return "\n".join(lines)


def _guidelines(tools: Sequence[Tool]) -> list[str]:
    names = {t.name for t in tools}
    guidelines: list[str] = []
    for tool in tools:
        for line in tool.prompt_guidelines:
            if line not in guidelines:
                guidelines.append(line)
    if "edit" in names:
        if "read" in names:
            guidelines.append(
                "Read a file before you edit it, so your change matches what is really there."
            )
        rewrite = "; use write only for new files or complete rewrites" if "write" in names else ""
        guidelines.append(f"Use edit for precise, targeted changes to existing files{rewrite}.")
    guidelines.append("Be concise: say what you did and what matters, without filler.")
    guidelines.append("Show file paths clearly whenever you refer to or change a file.")
    return guidelines


def default_body(tools: Sequence[Tool]) -> str:
    """The introduction, the tools and the guidelines: what `custom` replaces."""
    parts = [INTRO]
    tools_section = _tools_section(tools)
    if tools_section is not None:
        parts.append(tools_section)
    parts.append("Guidelines:\n" + "\n".join(f"- {g}" for g in _guidelines(tools)))
    return "\n\n".join(parts)


def _context_section(context_files: Sequence[tuple[Path, str]]) -> str:
    parts = ["# Project Context", "Project-specific instructions and guidelines:"]
    for path, text in context_files:
        parts.append(f"## {path}\n\n{text.strip()}")
    return "\n\n".join(parts)


@functools.lru_cache(maxsize=4)  # one new time a second; a burst of spawns asks often
def format_now(now: datetime) -> str:
    """`Monday, January 5, 2026, 14:03:09 CET` (the zone only when `now` has one)."""
    zone = now.tzname()
    text = f"{now:%A, %B} {now.day}, {now:%Y, %H:%M:%S}"
    return f"{text} {zone}" if zone else text


_clock: list[tuple[int, datetime]] = [(-1, datetime.min)]  # (second, local time); none yet


def _now() -> datetime:
    """The local time to the second, made once a second (looking up the local zone
    costs more than the rest of a prompt; a burst of spawns asks many times a second)."""
    second = int(time.time())
    known, now = _clock[0]
    if known != second:
        now = datetime.fromtimestamp(second).astimezone()
        _clock[0] = (second, now)
    return now


def build_system_prompt(
    *,
    tools: Sequence[Tool],
    cwd: Path,
    now: datetime,
    context_files: Sequence[tuple[Path, str]],
    custom: str | None = None,
    append: str | None = None,
) -> str:
    """The system prompt: body, project context, date and working directory, then `append`.

    `custom` replaces the default body (introduction, tools, guidelines); the
    rest is added either way.
    """
    parts = [custom.strip() if custom is not None else default_body(tools)]
    if context_files:
        parts.append(_context_section(context_files))
    parts.append(f"Current date and time: {format_now(now)}\nCurrent working directory: {cwd}")
    if append:
        parts.append(append.strip())
    return "\n\n".join(parts)


def prompt_for_cwd(
    cwd: Path,
    tools: Sequence[Tool],
    home: Path | None,
    *,
    custom: str | None = None,
    append: str | None = None,
    find: Callable[[Path, Path | None], list[tuple[Path, str]]] = find_context_files,
) -> str:
    """The system prompt of an Agent working in `cwd` now, with the context files
    `find` finds there (none when `cwd` is gone)."""
    return build_system_prompt(
        tools=tools,
        cwd=cwd,
        now=_now(),
        context_files=find(cwd, home) if cwd.exists() else [],
        custom=custom,
        append=append,
    )
