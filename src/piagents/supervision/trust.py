"""Which project directories the user trusts to supply agent definitions.

Kept in `<home>/trusted-projects.json` as `{"version": 1, "projects": [...]}`, each a
canonical real path. A project is trusted when it, or a directory containing it,
is listed. Writes replace the file atomically; a file that cannot be read as such
is a `TrustError` and is never overwritten, so nothing in it is lost.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from piagents.atomic_file import write_atomically

TRUST_FILE = "trusted-projects.json"
_VERSION = 1


class TrustError(Exception):
    """The trust file is unreadable or malformed, or a path cannot be trusted."""


def trust_file(home: Path) -> Path:
    return home / TRUST_FILE


def canonical(project: Path | str) -> str:
    """The real path of `project` (symlinks resolved), as it is stored."""
    return os.path.realpath(os.path.expanduser(project))


def trusted_projects(home: Path) -> tuple[str, ...]:
    """The trusted project directories, in the order they were trusted."""
    path = trust_file(home)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ()
    except (OSError, UnicodeDecodeError) as exc:
        raise TrustError(f"cannot read {path}: {exc}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _corrupt(path, f"not valid JSON ({exc})") from None
    projects = data.get("projects") if isinstance(data, dict) else None
    if not isinstance(projects, list) or not all(isinstance(p, str) for p in projects):
        raise _corrupt(path, 'expected {"version": 1, "projects": ["/path", ...]}')
    return tuple(projects)


def is_trusted(home: Path, project: Path | str) -> bool:
    """True when `project` or a directory containing it is trusted."""
    here = Path(canonical(project))
    listed = {Path(p) for p in trusted_projects(home)}
    return any(d in listed for d in (here, *here.parents))


def trust(home: Path, project: Path | str) -> str:
    """Trust the directory `project`; returns its canonical path. Trusting it again
    changes nothing."""
    path = canonical(project)
    if not os.path.isdir(path):
        raise TrustError(f"{project} is not a directory")
    projects = trusted_projects(home)
    if path not in projects:
        _write(home, (*projects, path))
    return path


def untrust(home: Path, project: Path | str) -> bool:
    """Stop trusting `project` (given as listed, or any path to it); True when it
    was listed. Directories containing it that are trusted stay trusted."""
    forms = {canonical(project), os.path.abspath(os.path.expanduser(project))}
    projects = trusted_projects(home)
    kept = tuple(p for p in projects if p not in forms)
    if kept == projects:
        return False
    _write(home, kept)
    return True


def _corrupt(path: Path, what: str) -> TrustError:
    return TrustError(
        f"{path} is not a trust file: {what}. It was left as it is; "
        "fix or remove it to change which projects are trusted."
    )


def _write(home: Path, projects: tuple[str, ...]) -> None:
    home.mkdir(parents=True, exist_ok=True)
    target = trust_file(home)
    text = json.dumps({"version": _VERSION, "projects": list(projects)}, indent=2) + "\n"
    write_atomically(target, text)
