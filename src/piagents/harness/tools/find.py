"""The `find` tool, and the tree walk it shares with `grep`.

A walk skips `.git`, `node_modules` and whatever the `.gitignore` files it
meets exclude (plain patterns, `*`, `?`, `[...]`, `**`, a trailing `/` for
directories, a leading `/` or an inner `/` to anchor, `!` to re-include).
"""

from __future__ import annotations

import os
import re
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from piagents.harness.tools.base import ToolContext, ToolError, ToolResult, resolve_path
from piagents.harness.tools.threads import run_blocking
from piagents.harness.tools.truncation import MAX_BYTES, format_size, truncate_head

DEFAULT_LIMIT = 1000
SKIPPED_DIRS = frozenset({".git", "node_modules"})

DESCRIPTION = (
    "Search for files by glob pattern. Returns matching paths relative to the search "
    "directory, sorted; directories end with '/'. Respects .gitignore. Output is truncated "
    f"to {DEFAULT_LIMIT} results or {MAX_BYTES // 1024}KB (whichever is hit first)."
)
PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {
            "type": "string",
            "minLength": 1,
            "description": "Glob pattern, e.g. '*.py', '**/*.json' or 'src/**/test_*.py'",
        },
        "path": {
            "type": "string",
            "description": "Directory to search in (default: current directory)",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "description": f"Maximum number of results (default: {DEFAULT_LIMIT})",
        },
    },
    "required": ["pattern"],
    "additionalProperties": False,
}


def result_limit_notice(limit: int) -> str:
    return f"{limit} results limit reached. Use limit={limit * 2} for more, or refine pattern"


def byte_limit_notice() -> str:
    return f"{format_size(MAX_BYTES)} limit reached"


# ---- globs -------------------------------------------------------------------


def glob_regex(pattern: str) -> re.Pattern[str]:
    """`*`, `?` and `[...]` stay within one path segment, `**` spans segments, `{a,b}` picks one."""
    out: list[str] = []
    depth = 0
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[" and (end := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : end]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            i = end + 1
            continue
        elif c == "{":
            depth += 1
            out.append("(?:")
        elif c == "}" and depth:
            depth -= 1
            out.append(")")
        elif c == "," and depth:
            out.append("|")
        elif c == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 1
        else:
            out.append(re.escape(c))
        i += 1
    out.append(")" * depth)
    return re.compile("".join(out))


@dataclass(frozen=True, slots=True)
class PathGlob:
    """A glob for relative paths; one without a `/` matches names at any depth."""

    regex: re.Pattern[str]
    by_name: bool

    @classmethod
    def parse(cls, pattern: str) -> PathGlob:
        pattern = pattern.removeprefix("./")
        try:
            return cls(glob_regex(pattern.lstrip("/")), "/" not in pattern)
        except re.error as exc:
            raise ToolError(f"Invalid glob pattern '{pattern}': {exc}") from exc

    def matches(self, rel: str) -> bool:
        target = rel.rsplit("/", 1)[-1] if self.by_name else rel
        return self.regex.fullmatch(target) is not None


# ---- .gitignore --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Rule:
    base: str  # the directory holding the .gitignore, relative to the walk root
    glob: PathGlob
    negated: bool
    dirs_only: bool


def _parse_rule(base: str, line: str) -> _Rule | None:
    line = line.rstrip()
    if not line or line.startswith("#"):
        return None
    negated = line.startswith("!")
    if negated:
        line = line[1:]
    line = line.removeprefix("\\")
    dirs_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    try:
        regex = glob_regex(line.lstrip("/"))
    except re.error:
        return None
    return _Rule(base, PathGlob(regex, not anchored), negated, dirs_only)


@dataclass(frozen=True, slots=True)
class IgnoreRules:
    """The .gitignore rules in force in one directory; the last matching rule wins."""

    rules: tuple[_Rule, ...] = ()

    def entering(self, directory: Path, rel: str) -> IgnoreRules:
        try:
            text = (directory / ".gitignore").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return self
        added = tuple(r for line in text.splitlines() if (r := _parse_rule(rel, line)))
        return IgnoreRules(self.rules + added) if added else self

    def ignores(self, rel: str, is_dir: bool) -> bool:
        ignored = False
        for rule in self.rules:
            if rule.dirs_only and not is_dir:
                continue
            local = rel[len(rule.base) + 1 :] if rule.base else rel
            if rule.glob.matches(local):
                ignored = not rule.negated
        return ignored


# ---- walking -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Entry:
    rel: str  # relative to the walk root, with `/` separators
    path: Path
    is_dir: bool


def _sorted_entries(directory: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError:
        return []


def walk(root: Path, stop: threading.Event) -> Iterator[Entry]:
    """Every entry under `root` in sorted pre-order, without skipped or ignored ones.

    Symlinked directories are listed but not entered. Stops early once `stop` is set.
    """
    stack = [(iter(_sorted_entries(root)), IgnoreRules().entering(root, ""), "")]
    while stack and not stop.is_set():
        entries, rules, rel_dir = stack[-1]
        entry = next(entries, None)
        if entry is None:
            stack.pop()
            continue
        rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
        try:
            is_dir = entry.is_dir()
        except OSError:
            continue
        if (is_dir and entry.name in SKIPPED_DIRS) or rules.ignores(rel, is_dir):
            continue
        yield Entry(rel, Path(entry.path), is_dir)
        if is_dir and not entry.is_symlink():
            path = Path(entry.path)
            stack.append((iter(_sorted_entries(path)), rules.entering(path, rel), rel))


T = TypeVar("T")


async def in_thread(work: Callable[[threading.Event], T]) -> T:
    """Run blocking work in a thread; when the caller is cancelled the work is told to stop."""
    stop = threading.Event()
    try:
        return await run_blocking(work, stop)
    finally:
        stop.set()


def search_root(ctx: ToolContext, path: str, *, dirs_only: bool) -> Path:
    root = resolve_path(ctx, path)
    if not root.exists():
        raise ToolError(f"Path not found: {path}")
    if dirs_only and not root.is_dir():
        raise ToolError(f"Not a directory: {path}")
    return root


# ---- the tool ------------------------------------------------------------------


def _find(root: Path, glob: PathGlob, limit: int, stop: threading.Event) -> list[str]:
    found: list[str] = []
    for entry in walk(root, stop):
        if glob.matches(entry.rel):
            found.append(entry.rel + "/" if entry.is_dir else entry.rel)
            if len(found) > limit:
                break
    return found


class FindTool:
    name = "find"
    description = DESCRIPTION
    parameters: dict[str, Any] = PARAMETERS
    prompt_snippet = "Find files by glob pattern (respects .gitignore)"
    prompt_guidelines: Sequence[str] = (
        "Prefer find over bash `find` or `ls -R` to locate files (faster, respects .gitignore).",
    )

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        root = search_root(ctx, args.get("path") or ".", dirs_only=True)
        glob = PathGlob.parse(args["pattern"])
        limit = int(args.get("limit", DEFAULT_LIMIT))
        found = await in_thread(lambda stop: _find(root, glob, limit, stop))
        if not found:
            return ToolResult("No files found matching pattern")
        limit_reached = len(found) > limit
        found = sorted(found[:limit])
        truncation = truncate_head("\n".join(found), max_lines=sys.maxsize)
        notices: list[str] = []
        details: dict[str, Any] = {}
        if limit_reached:
            notices.append(result_limit_notice(limit))
            details["resultLimitReached"] = limit
        if truncation.truncated:
            notices.append(byte_limit_notice())
            details["truncation"] = truncation.to_json()
        text = truncation.text
        if notices:
            text += f"\n\n[{'. '.join(notices)}]"
        return ToolResult(text, details or None)
