"""Trusted projects: kept in the home, canonical, written atomically, never lost."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from piagents.supervision.trust import (
    TRUST_FILE,
    TrustError,
    is_trusted,
    trust,
    trusted_projects,
    untrust,
)


def test_no_project_is_trusted_in_a_fresh_home(home: Path, work: Path) -> None:
    assert trusted_projects(home) == ()
    assert not is_trusted(home, work)


def test_a_trusted_project_is_stored_as_its_real_path(home: Path, tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    assert trust(home, link) == os.path.realpath(real)
    assert trusted_projects(home) == (os.path.realpath(real),)
    assert is_trusted(home, real) and is_trusted(home, link)
    data = json.loads((home / TRUST_FILE).read_text(encoding="utf-8"))
    assert data == {"version": 1, "projects": [os.path.realpath(real)]}


def test_trusting_twice_lists_the_project_once(home: Path, work: Path) -> None:
    trust(home, work)
    trust(home, work)
    assert len(trusted_projects(home)) == 1


def test_the_home_is_created_when_first_trusting(tmp_path: Path, work: Path) -> None:
    home = tmp_path / "new-home"
    trust(home, work)
    assert is_trusted(home, work)


def test_a_directory_inside_a_trusted_project_is_trusted(home: Path, work: Path) -> None:
    inner = work / "pkg" / "sub"
    inner.mkdir(parents=True)
    trust(home, work)
    assert is_trusted(home, inner)
    assert not is_trusted(home, work.parent)


def test_untrust_removes_the_project_and_says_whether_it_was_listed(home: Path, work: Path) -> None:
    trust(home, work)
    assert untrust(home, work) is True
    assert not is_trusted(home, work)
    assert untrust(home, work) is False


def test_a_project_whose_directory_is_gone_can_still_be_untrusted(
    home: Path, tmp_path: Path
) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    trust(home, gone)
    gone.rmdir()
    assert untrust(home, gone) is True
    assert trusted_projects(home) == ()


def test_only_an_existing_directory_can_be_trusted(home: Path, tmp_path: Path) -> None:
    with pytest.raises(TrustError, match="not a directory"):
        trust(home, tmp_path / "missing")
    assert not (home / TRUST_FILE).exists()


@pytest.mark.parametrize("text", ["{not json", '["/a"]', '{"projects": "/a"}', '{"projects": [1]}'])
def test_a_corrupt_trust_file_is_a_clear_error_and_is_left_as_it_is(
    home: Path, work: Path, text: str
) -> None:
    path = home / TRUST_FILE
    path.write_text(text, encoding="utf-8")
    for attempt in (
        lambda: trusted_projects(home),
        lambda: is_trusted(home, work),
        lambda: trust(home, work),
        lambda: untrust(home, work),
    ):
        with pytest.raises(TrustError, match="left as it is"):
            attempt()
    assert path.read_text(encoding="utf-8") == text


def test_writes_leave_no_temporary_files(home: Path, work: Path) -> None:
    trust(home, work)
    untrust(home, work)
    assert [p.name for p in home.iterdir()] == [TRUST_FILE]
