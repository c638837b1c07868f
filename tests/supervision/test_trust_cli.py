"""`pi-agents trust`: trust, list and remove projects from the command line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from piagents.cli import main
from piagents.supervision.trust import TRUST_FILE, is_trusted, trusted_projects


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_trust_without_a_path_trusts_the_current_directory(
    home: Path, work: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(work)
    code, out, _ = run(capsys, "trust", "--home", str(home))
    assert code == 0
    assert out == f"Trusted: {os.path.realpath(work)}\n"
    assert is_trusted(home, work)


def test_trust_a_path_then_list_then_remove(
    home: Path, work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    real = os.path.realpath(work)
    assert run(capsys, "trust", str(work), "--home", str(home))[:2] == (0, f"Trusted: {real}\n")
    assert run(capsys, "trust", "--list", "--home", str(home))[:2] == (0, f"{real}\n")
    assert run(capsys, "trust", "--remove", str(work), "--home", str(home))[:2] == (
        0,
        f"No longer trusted: {real}\n",
    )
    assert run(capsys, "trust", "--list", "--home", str(home))[:2] == (0, "No trusted projects.\n")


def test_home_may_come_before_the_trust_command(
    home: Path, work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "--home", str(home), "trust", str(work))[0] == 0
    assert trusted_projects(home) == (os.path.realpath(work),)


def test_removing_a_project_that_is_not_trusted_fails_clearly(
    home: Path, work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "trust", "--remove", str(work), "--home", str(home))
    assert code == 1
    assert err == f"pi-agents: {os.path.realpath(work)} is not a trusted project\n"


def test_trusting_a_missing_directory_fails_clearly(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "trust", str(tmp_path / "missing"), "--home", str(home))
    assert code == 1 and "not a directory" in err


def test_a_corrupt_trust_file_is_reported_and_kept(
    home: Path, work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (home / TRUST_FILE).write_text("{oops", encoding="utf-8")
    code, _, err = run(capsys, "trust", str(work), "--home", str(home))
    assert code == 1 and "left as it is" in err and "Traceback" not in err
    assert (home / TRUST_FILE).read_text(encoding="utf-8") == "{oops"


def test_path_list_and_remove_are_exclusive(
    home: Path, work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["trust", str(work), "--list", "--home", str(home)])
    assert exited.value.code == 2
    assert "one of PATH, --list or --remove" in capsys.readouterr().err


def test_the_installed_command_trusts_a_project(home: Path, work: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "piagents.cli", "trust", "--home", str(home)],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"Trusted: {os.path.realpath(work)}\n"
