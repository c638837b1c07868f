from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from piagents.harness.system_prompt import (
    CONTEXT_FILE_LIMIT_BYTES,
    build_system_prompt,
    find_context_files,
)
from piagents.harness.tools.base import ToolContext, ToolResult

NOW = datetime(2026, 1, 5, 14, 3, 9, tzinfo=UTC)
CWD = Path("/work/project")


@dataclass
class FakeTool:
    name: str
    prompt_snippet: str = ""
    prompt_guidelines: Sequence[str] = ()
    description: str = "A tool."
    parameters: dict[str, Any] = field(default_factory=dict)

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult("")


READ = FakeTool("read", "Read file contents", ["Use read to look at files, not cat."])
EDIT = FakeTool("edit", "Replace exact text in a file", ["Keep edits small."])
WRITE = FakeTool("write", "Create or overwrite a file", ["Keep edits small."])
BASH = FakeTool("bash", "", description="Run a shell command.\nMore details here.")
TOOLS = [READ, EDIT, WRITE, BASH]


def prompt(**kwargs: Any) -> str:
    args: dict[str, Any] = {"tools": TOOLS, "cwd": CWD, "now": NOW, "context_files": []}
    args.update(kwargs)
    return build_system_prompt(**args)


def positions(text: str, *needles: str) -> list[int]:
    return [text.index(n) for n in needles]


# ---- find_context_files ----------------------------------------------------------------


def under(root: Path, files: list[tuple[Path, str]]) -> list[tuple[Path, str]]:
    """Only the files inside the test's directory (the real root may hold its own)."""
    return [(p, t) for p, t in files if p.is_relative_to(root)]


def test_context_files_run_from_the_outermost_directory_down_to_cwd(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    cwd = root / "repo" / "pkg"
    cwd.mkdir(parents=True)
    (root / "AGENTS.md").write_text("outer")
    (root / "repo" / "AGENTS.md").write_text("repo")
    (cwd / "AGENTS.md").write_text("pkg")

    assert under(root, find_context_files(cwd)) == [
        (root / "AGENTS.md", "outer"),
        (root / "repo" / "AGENTS.md", "repo"),
        (cwd / "AGENTS.md", "pkg"),
    ]


def test_claude_md_counts_only_where_there_is_no_agents_md(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    cwd = root / "repo"
    cwd.mkdir()
    (root / "AGENTS.md").write_text("agents")
    (root / "CLAUDE.md").write_text("ignored")
    (cwd / "CLAUDE.md").write_text("claude")

    assert under(root, find_context_files(cwd)) == [
        (root / "AGENTS.md", "agents"),
        (cwd / "CLAUDE.md", "claude"),
    ]


def test_the_global_file_in_home_comes_first(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    home = root / "home"
    cwd = root / "repo"
    home.mkdir()
    cwd.mkdir()
    (home / "AGENTS.md").write_text("global")
    (cwd / "AGENTS.md").write_text("project")

    files = find_context_files(cwd, home=home)

    assert files[0] == (home / "AGENTS.md", "global")
    assert under(root, files) == [(home / "AGENTS.md", "global"), (cwd / "AGENTS.md", "project")]


def test_a_home_that_is_also_an_ancestor_is_listed_once(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    cwd = root / "repo"
    cwd.mkdir()
    (root / "AGENTS.md").write_text("home and ancestor")

    files = under(root, find_context_files(cwd, home=root))

    assert files == [(root / "AGENTS.md", "home and ancestor")]


def test_unreadable_context_files_are_skipped(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    cwd = root / "repo"
    cwd.mkdir()
    (root / "AGENTS.md").mkdir()  # a directory, not a file
    (cwd / "AGENTS.md").write_bytes(b"\xff\xfe not utf-8 \xc3")
    (cwd / "CLAUDE.md").write_text("fallback")

    assert under(root, find_context_files(cwd)) == [(cwd / "CLAUDE.md", "fallback")]


def test_a_fifo_a_device_or_a_pseudo_file_is_skipped_without_blocking(
    tmp_path: Path,
) -> None:
    import os

    root = tmp_path.resolve()
    a, b, c = root / "a", root / "a" / "b", root / "a" / "b" / "c"
    c.mkdir(parents=True)
    os.mkfifo(a / "AGENTS.md")  # opening it to read would wait for a writer for ever
    (b / "AGENTS.md").symlink_to("/dev/zero")  # never ends
    (c / "AGENTS.md").symlink_to("/proc/self/environ")  # says 0 bytes, holds secrets
    (c / "CLAUDE.md").write_text("the real one")

    assert under(root, find_context_files(c)) == [(c / "CLAUDE.md", "the real one")]


# ---- build_system_prompt -------------------------------------------------------------------


def test_the_prompt_lists_tools_guidelines_context_date_and_cwd_in_that_order() -> None:
    files = [(Path("/AGENTS.md"), "Outer rules."), (Path("/work/project/AGENTS.md"), "Inner.")]

    text = prompt(context_files=files)

    order = positions(
        text,
        "expert coding assistant",
        "Available tools:",
        "Guidelines:",
        "# Project Context",
        "## /AGENTS.md\n\nOuter rules.",
        "## /work/project/AGENTS.md\n\nInner.",
        "Current date and time: Monday, January 5, 2026, 14:03:09 UTC",
        "Current working directory: /work/project",
    )
    assert order == sorted(order)
    assert text.endswith("Current working directory: /work/project")


def test_tools_are_listed_with_their_snippets() -> None:
    text = prompt()

    assert (
        "Available tools:\n"
        "- read: Read file contents\n"
        "- edit: Replace exact text in a file\n"
        "- write: Create or overwrite a file\n"
        "- bash: Run a shell command.\n\n"
    ) in text


def test_guidelines_are_the_union_of_the_tools_then_the_general_ones() -> None:
    text = prompt()
    guidelines = text.split("Guidelines:\n", 1)[1].split("\n\n", 1)[0].splitlines()

    assert guidelines[:2] == ["- Use read to look at files, not cat.", "- Keep edits small."]
    assert any("Read a file before you edit it" in g for g in guidelines)
    assert any("Use edit for precise" in g and "write only for new files" in g for g in guidelines)
    assert any("concise" in g for g in guidelines)
    assert any("file paths" in g for g in guidelines)


def test_without_tools_there_is_no_tools_section() -> None:
    text = prompt(tools=[])

    assert "Available tools" not in text
    assert "Use edit" not in text
    assert "Guidelines:" in text


def test_without_context_files_there_is_no_project_context() -> None:
    assert "# Project Context" not in prompt()


def test_a_custom_prompt_replaces_the_body_but_keeps_context_date_and_cwd() -> None:
    files = [(Path("/work/project/AGENTS.md"), "Use tabs.")]

    text = prompt(custom="You are a release bot.", context_files=files)

    assert text.startswith("You are a release bot.\n\n# Project Context")
    assert "Available tools" not in text
    assert "Guidelines:" not in text
    assert "## /work/project/AGENTS.md\n\nUse tabs." in text
    assert text.endswith(
        "Current date and time: Monday, January 5, 2026, 14:03:09 UTC\n"
        "Current working directory: /work/project"
    )


def test_appended_text_comes_last_with_or_without_a_custom_prompt() -> None:
    assert prompt(append="Answer in French.").endswith(
        "Current working directory: /work/project\n\nAnswer in French."
    )
    assert prompt(custom="Custom.", append="Answer in French.").endswith(
        "Current working directory: /work/project\n\nAnswer in French."
    )


def test_the_prompt_is_the_same_for_the_same_inputs() -> None:
    assert prompt() == prompt()


def test_a_naive_time_is_shown_without_a_zone() -> None:
    text = prompt(now=datetime(2025, 12, 24, 9, 0, 0))

    assert "Current date and time: Wednesday, December 24, 2025, 09:00:00\n" in text


def test_an_instruction_file_that_is_a_fifo_or_a_directory_is_skipped_without_blocking(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    os.mkfifo(project / "AGENTS.md")  # opening it for reading would wait for a writer
    (project / "CLAUDE.md").write_text("claude")
    (tmp_path / "AGENTS.md").mkdir()
    assert under(tmp_path, find_context_files(project)) == [(project / "CLAUDE.md", "claude")]


def test_a_huge_instruction_file_is_cut_at_its_limit(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("x" * (CONTEXT_FILE_LIMIT_BYTES * 4))
    [(_, text)] = under(tmp_path, find_context_files(tmp_path))
    assert text == "x" * CONTEXT_FILE_LIMIT_BYTES + "\n[AGENTS.md cut at 256 KiB]"
