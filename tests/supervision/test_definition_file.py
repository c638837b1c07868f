"""One definition file read and parsed with bounds: a hostile project cannot crash the lead."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from piagents.harness.tools import BUILTIN_TOOL_NAMES
from piagents.supervision.definitions import (
    DefinitionError,
    discover,
    parse_definition,
    survey,
)

BUNDLED = ("generalist", "implementer", "researcher", "reviewer", "scout")
ALIAS_BOMB = (
    "name: bomb\n"
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
    "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
    "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
    "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
    "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
    "tools: [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n"
)


def untrusted_file(project: Path, front: str, name: str = "evil.md") -> Path:
    folder = project / ".pi-agents" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"---\n{front}---\nPrompt.\n", encoding="utf-8")
    return path


def only_problem(home: Path, project: Path) -> str:
    roster = discover(home, project, trusted=False)
    assert sorted(roster.definitions) == list(BUNDLED)  # the lead goes on with the rest
    [problem] = roster.untrusted_problems
    return problem


def test_an_alias_bomb_in_an_untrusted_project_is_a_short_problem_naming_the_file(
    home: Path, work: Path
) -> None:
    path = untrusted_file(work, ALIAS_BOMB)
    problem = only_problem(home, work)
    assert problem.startswith(f"{os.path.realpath(path)}: front matter is not valid YAML")
    assert "expands to more than 10000 values" in problem
    assert "lol" not in problem and len(problem) < 400


def test_front_matter_nested_20000_deep_is_refused_not_a_recursion_error(
    home: Path, work: Path
) -> None:
    untrusted_file(work, "name: deep\ndescription: " + "[" * 20_000 + "]" * 20_000 + "\n")
    problem = only_problem(home, work)
    assert "nested deeper than 16 levels" in problem and "(line 3)" in problem


def test_a_deep_block_mapping_is_refused_too(home: Path, work: Path) -> None:
    deep = "".join(f"{' ' * i}k{i}:\n" for i in range(200))
    untrusted_file(work, f"name: deep\nx:\n{deep}")
    assert "nested deeper than 16 levels" in only_problem(home, work)


def test_a_long_value_is_described_not_echoed() -> None:
    with pytest.raises(DefinitionError) as caught:
        parse_definition(
            f"---\nname: {'x' * 5000}\nthinking: {'y' * 5000}\nmodel: {'z' * 5000}\n---\n",
            path="long.md",
            layer="project",
        )
    message = str(caught.value)
    assert "xxxxxxxxxx" not in message and "yyyyyyyyyy" not in message
    assert "zzzzzzzzzz" not in message
    assert "long.md: `name`: a str of 5002 characters must match" in message
    assert len(message) < 1000


def test_a_long_unknown_field_name_is_shortened() -> None:
    with pytest.raises(DefinitionError) as caught:
        parse_definition(f"---\nname: a\n{'k' * 5000}: 1\n---\n", path="f.md", layer="project")
    assert len(str(caught.value)) < 400


def test_an_integer_too_long_to_convert_is_a_problem_not_a_crash(home: Path, work: Path) -> None:
    untrusted_file(work, f"name: big\ndescription: {'9' * 5000}\n")
    assert "number too long" in only_problem(home, work)


def test_an_oversized_file_is_not_read(home: Path, work: Path) -> None:
    path = untrusted_file(work, "name: big\n")
    with path.open("a") as out:
        out.write("x" * 2_000_000)
    assert only_problem(home, work).endswith("is larger than 1 MiB; a definition is a short file")


def test_an_oversized_front_matter_is_refused(home: Path, work: Path) -> None:
    untrusted_file(work, "name: big\n" + "# comment\n" * 10_000)
    assert "the front matter is larger than 64 KiB" in only_problem(home, work)


def test_a_definition_linked_to_a_procfs_file_is_not_read(home: Path, work: Path) -> None:
    folder = work / ".pi-agents" / "agents"
    folder.mkdir(parents=True)
    (folder / "env.md").symlink_to("/proc/self/environ")
    assert only_problem(home, work).endswith("env.md: is not a regular file")


def test_a_fifo_among_the_definitions_does_not_block_discovery(home: Path, work: Path) -> None:
    folder = work / ".pi-agents" / "agents"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "pipe.md")
    untrusted_file(work, "name: fine\n", "fine.md")
    roster = discover(home, work, trusted=True)
    assert "fine" in roster.definitions


# ---- tools nobody provides ---------------------------------------------------------------


def test_an_unknown_tool_is_a_warning_naming_the_file_and_the_tool(home: Path) -> None:
    folder = home / "agents"
    folder.mkdir()
    path = folder / "t.md"
    path.write_text("---\nname: t\ntools: [read, raed, agent]\nexcludeTools: [bsh]\n---\nP.\n")
    roster = discover(home, None, trusted=False, tools=BUILTIN_TOOL_NAMES)
    assert roster.definitions["t"].tools == ("read", "raed", "agent")  # still usable
    texts = [w.text for w in roster.warnings]
    offered = ", ".join(sorted(BUILTIN_TOOL_NAMES))
    assert texts == [
        f"{path}: `tools`: unknown tool 'raed'; the tools are {offered}",
        f"{path}: `excludeTools`: unknown tool 'bsh'; the tools are {offered}",
    ]
    assert {(w.path, w.severity) for w in roster.warnings} == {(str(path), "warning")}
    assert discover(home, None, trusted=False).warnings == ()  # tools unknown: not checked


def test_survey_reports_errors_and_warnings_without_raising(home: Path, work: Path) -> None:
    (home / "agents").mkdir()
    broken = home / "agents" / "broken.md"
    broken.write_text("---\nname: broken\ncolor: red\n---\n")
    untrusted_file(work, "name: x\ncolor: blue\n")
    report = survey(home, work, trusted=False, tools=BUILTIN_TOOL_NAMES)
    assert report.roster is None
    [error] = report.errors
    assert (error.path, error.severity) == (str(broken), "error") and "`color`" in error.text
    [warning] = report.warnings  # the untrusted project's file, which is not used
    assert "`color`" in warning.text and warning.path.endswith("evil.md")


def test_an_untrusted_projects_definitions_are_listed_without_their_bodies(
    home: Path, work: Path
) -> None:
    untrusted_file(work, "name: tester\ndescription: Tests.\n")
    roster = discover(home, work, trusted=False)
    assert roster.untrusted["tester"].description == "Tests."
    assert roster.untrusted["tester"].system_prompt == ""
    assert discover(home, work, trusted=True).definitions["tester"].system_prompt == "Prompt."


def test_a_folder_of_too_many_definition_files_is_refused_not_read(home: Path, work: Path) -> None:
    for i in range(300):
        untrusted_file(work, f"name: d{i}\n", f"d{i}.md")
    problem = only_problem(home, work)
    assert problem.endswith("agents: holds more than 256 definition files")
