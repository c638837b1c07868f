"""The context-file cache answers as `find_context_files` does, reading files only
when one that could count has changed."""

from __future__ import annotations

import os
from pathlib import Path

from piagents.harness.context_files import ContextFileCache
from piagents.harness.system_prompt import find_context_files


class CountingFind:
    """`find_context_files`, counting how often the files are really looked up."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, cwd: Path, home: Path | None) -> list[tuple[Path, str]]:
        self.calls += 1
        return find_context_files(cwd, home)


def project(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path.resolve()
    cwd = root / "repo" / "pkg"
    cwd.mkdir(parents=True)
    home = root / "home"
    home.mkdir()
    (root / "repo" / "AGENTS.md").write_text("repo rules")
    (home / "AGENTS.md").write_text("home rules")
    return cwd, home


def only_under(root: Path, files: list[tuple[Path, str]]) -> list[tuple[Path, str]]:
    return [(p, t) for p, t in files if p.is_relative_to(root.resolve())]


def test_an_unchanged_directory_is_read_once(tmp_path: Path) -> None:
    cwd, home = project(tmp_path)
    find = CountingFind()
    cache = ContextFileCache(find)
    first = cache.find(cwd, home)
    assert only_under(tmp_path, first) == [
        (home / "AGENTS.md", "home rules"),
        (cwd.parent / "AGENTS.md", "repo rules"),
    ]
    for _ in range(3):
        assert cache.find(cwd, home) == first
    assert find.calls == 1


def test_an_edited_file_is_read_fresh_even_at_the_same_size_and_time(tmp_path: Path) -> None:
    cwd, home = project(tmp_path)
    find = CountingFind()
    cache = ContextFileCache(find)
    cache.find(cwd, home)
    rules = cwd.parent / "AGENTS.md"
    before = rules.stat()
    rules.write_text("REPO RULES")  # same size; put the old modification time back
    os.utime(rules, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (cwd.parent / "AGENTS.md", "REPO RULES") in cache.find(cwd, home)
    assert find.calls == 2


def test_a_file_added_removed_or_replaced_is_seen(tmp_path: Path) -> None:
    cwd, home = project(tmp_path)
    cache = ContextFileCache()
    cache.find(cwd, home)
    (cwd / "CLAUDE.md").write_text("pkg rules")
    assert only_under(tmp_path, cache.find(cwd, home))[-1] == (cwd / "CLAUDE.md", "pkg rules")
    (cwd / "AGENTS.md").write_text("pkg agents")  # AGENTS.md beats CLAUDE.md
    assert only_under(tmp_path, cache.find(cwd, home))[-1] == (cwd / "AGENTS.md", "pkg agents")
    (home / "AGENTS.md").unlink()
    assert (home / "AGENTS.md", "home rules") not in cache.find(cwd, home)
    (cwd / "AGENTS.md").unlink()
    (cwd / "AGENTS.md").symlink_to(home / "elsewhere.md")
    (home / "elsewhere.md").write_text("linked")
    assert only_under(tmp_path, cache.find(cwd, home))[-1] == (cwd / "AGENTS.md", "linked")


def test_each_directory_and_home_has_its_own_answer(tmp_path: Path) -> None:
    cwd, home = project(tmp_path)
    cache = ContextFileCache()
    with_home = cache.find(cwd, home)
    without = cache.find(cwd, None)
    assert (home / "AGENTS.md", "home rules") in with_home
    assert (home / "AGENTS.md", "home rules") not in without
    assert cache.find(cwd.parent, home) == with_home  # the same files apply one level up


def test_a_caller_changing_its_answer_does_not_change_the_cache(tmp_path: Path) -> None:
    cwd, home = project(tmp_path)
    cache = ContextFileCache()
    cache.find(cwd, home).clear()
    assert cache.find(cwd, home) != []


def test_a_symlinked_cwd_pointed_elsewhere_finds_the_files_there(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    for name in ("one", "two"):
        (root / name / "pkg").mkdir(parents=True)
        (root / name / "AGENTS.md").write_text(f"{name} rules")
    link = root / "link"
    link.symlink_to(root / "one" / "pkg")
    cache = ContextFileCache()
    assert only_under(tmp_path, cache.find(link)) == [(root / "one" / "AGENTS.md", "one rules")]
    link.unlink()
    link.symlink_to(root / "two" / "pkg")
    assert only_under(tmp_path, cache.find(link)) == [(root / "two" / "AGENTS.md", "two rules")]


def test_a_directory_moved_under_another_parent_finds_that_parents_files(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    (root / "a" / "pkg").mkdir(parents=True)
    (root / "b").mkdir()
    (root / "b" / "AGENTS.md").write_text("b rules")
    link = root / "link"
    link.symlink_to(root / "a" / "pkg")
    cache = ContextFileCache()
    assert only_under(tmp_path, cache.find(link)) == []
    (root / "a" / "pkg").rename(root / "b" / "pkg")  # the same directory, elsewhere
    link.unlink()
    link.symlink_to(root / "b" / "pkg")
    assert only_under(tmp_path, cache.find(link)) == [(root / "b" / "AGENTS.md", "b rules")]


def test_paths_resolve_as_pythons_realpath_does(tmp_path: Path) -> None:
    from piagents.harness.context_files import _realpath

    root = tmp_path.resolve()
    (root / "real" / "deep").mkdir(parents=True)
    (root / "link").symlink_to(root / "real")
    (root / "loop").symlink_to(root / "loop")
    for given in (
        root / "link" / "deep",
        root / "link" / ".." / "real" / "." / "deep",
        root / "link" / "missing" / "tail",  # a part that does not exist
        root / "loop",  # a link to itself
        Path("/"),
    ):
        assert _realpath(str(given)) == os.path.realpath(given), given
