"""The context-file cache answers as `find_context_files` does, reading files only
when one that could count has changed."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from piagents.harness import context_files, context_watch
from piagents.harness.context_files import ContextFileCache
from piagents.harness.system_prompt import find_context_files


@pytest.fixture(autouse=True, params=["watched", "unwatched"])
def watching(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every answer must be the same with the kernel's notices of changes and without."""
    if request.param == "unwatched":
        monkeypatch.setattr(context_files, "shared_watch", lambda: None)
    elif context_watch.shared_watch() is None:
        pytest.skip("no inotify here")
    return str(request.param)


class Looks:
    """Counts the looks at the disk (status checks of candidate paths)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = context_files._stamp

        def stamp(path: str) -> context_files.Stamp:
            self.count += 1
            return real(path)

        monkeypatch.setattr(context_files, "_stamp", stamp)


@pytest.fixture
def looks(monkeypatch: pytest.MonkeyPatch) -> Looks:
    return Looks(monkeypatch)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    """The cache's monotonic clock, moved by the test."""
    at = [1000.0]
    monkeypatch.setattr(context_files, "now", lambda: at[0])
    yield at


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


# ---- with the kernel's notices (inotify) --------------------------------------------


def test_a_watched_answer_stands_without_a_look_at_the_disk(
    tmp_path: Path, watching: str, looks: Looks, clock: list[float]
) -> None:
    cwd, home = project(tmp_path)
    cache = ContextFileCache()
    first = cache.find(cwd, home)
    looks.count = 0
    assert cache.find(cwd, home) == first
    if watching == "unwatched":
        assert looks.count > 0
        return
    assert looks.count == 0
    clock[0] += context_watch.MAX_TRUST_S  # a second on: looked at in full again
    assert cache.find(cwd, home) == first
    assert looks.count > 0


def test_writes_to_other_files_beside_them_do_not_make_it_look_again(
    tmp_path: Path, watching: str, looks: Looks, clock: list[float]
) -> None:
    """The store's log lives in home, beside home's AGENTS.md, and is written all the time."""
    cwd, home = project(tmp_path)
    cache = ContextFileCache()
    first = cache.find(cwd, home)
    log = home / "store.db-wal"
    log.write_text("x")
    cache.find(cwd, home)  # a new entry beside AGENTS.md: no change to the answer
    looks.count = 0
    with log.open("a") as f:
        f.write("more")
    (cwd / "notes.txt").write_text("not a context file")
    assert cache.find(cwd, home) == first
    if watching == "watched":
        assert looks.count == 0


def test_every_change_is_seen_at_once(tmp_path: Path, clock: list[float]) -> None:
    """The clock stands still: only the kernel's notices can make it look again."""
    cwd, home = project(tmp_path)
    cache = ContextFileCache()
    rules = cwd.parent / "AGENTS.md"

    def last() -> tuple[Path, str]:
        return only_under(tmp_path, cache.find(cwd, home))[-1]

    assert last() == (rules, "repo rules")
    before = rules.stat()
    rules.write_text("REPO RULES")  # in place, same size, old times put back
    os.utime(rules, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert last() == (rules, "REPO RULES")
    (cwd / "CLAUDE.md").write_text("pkg rules")
    assert last() == (cwd / "CLAUDE.md", "pkg rules")
    elsewhere = tmp_path.resolve() / "shared" / "rules.md"
    elsewhere.parent.mkdir()
    elsewhere.write_text("shared rules")
    (cwd / "AGENTS.md").symlink_to(elsewhere)
    assert last() == (cwd / "AGENTS.md", "shared rules")
    elsewhere.write_text("shared rules, edited where the link points")
    assert last() == (cwd / "AGENTS.md", "shared rules, edited where the link points")
    replacement = elsewhere.with_name("new.md")
    replacement.write_text("saved by renaming over it")
    replacement.replace(elsewhere)
    assert last() == (cwd / "AGENTS.md", "saved by renaming over it")
    (cwd / "AGENTS.md").unlink()
    (cwd / "CLAUDE.md").unlink()
    assert last() == (rules, "REPO RULES")
    (home / "AGENTS.md").unlink()
    assert (home / "AGENTS.md", "home rules") not in cache.find(cwd, home)


def test_a_directory_on_the_way_replaced_is_seen_at_once(
    tmp_path: Path, clock: list[float]
) -> None:
    root = tmp_path.resolve()
    cwd = root / "repo" / "pkg"
    cwd.mkdir(parents=True)
    (root / "repo" / "AGENTS.md").write_text("first repo")
    cache = ContextFileCache()
    assert only_under(tmp_path, cache.find(cwd)) == [(root / "repo" / "AGENTS.md", "first repo")]
    (root / "repo").rename(root / "old")  # the path now leads to another directory
    (root / "repo" / "pkg").mkdir(parents=True)
    (root / "repo" / "AGENTS.md").write_text("second repo")
    assert only_under(tmp_path, cache.find(cwd)) == [(root / "repo" / "AGENTS.md", "second repo")]
    (root / "old" / "AGENTS.md").write_text("the moved one, edited")  # no longer on the way
    (root / "repo" / "AGENTS.md").write_text("second repo, edited")
    assert only_under(tmp_path, cache.find(cwd)) == [
        (root / "repo" / "AGENTS.md", "second repo, edited")
    ]


def test_a_path_given_through_a_link_is_looked_at_each_time(
    tmp_path: Path, looks: Looks, clock: list[float]
) -> None:
    root = tmp_path.resolve()
    (root / "real").mkdir()
    (root / "link").symlink_to(root / "real")
    cache = ContextFileCache()
    cache.find(root / "link")
    looks.count = 0
    cache.find(root / "link")
    assert looks.count > 0


def test_a_forked_child_makes_a_watch_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    mine = context_watch.shared_watch()
    monkeypatch.setattr(context_watch.os, "getpid", lambda: -1)
    theirs = context_watch.shared_watch()
    assert theirs is not None and theirs is not mine
