"""SQLite's errors as the store's own: a typed StoreError naming the path, the cause
and what to do, never a raw sqlite3 error."""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

from piagents.store.base import (
    StoreBusy,
    StoreDamaged,
    StoreError,
    StoreFull,
    StoreReadOnly,
    StoreUnavailable,
)

NOTHING_SAVED = "nothing of this change was saved"
CHOOSE_HOME = "choose another home with --home or PI_AGENTS_HOME"


def translate(path: Path, exc: sqlite3.Error, *, waited: float) -> StoreError:
    """The StoreError for `exc`, raised by SQLite while using the store at `path`."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    cause = str(exc)
    if name.startswith("SQLITE_FULL") or (name.startswith("SQLITE_IOERR") and _disk_full(path)):
        return StoreFull(
            f"{path}: the store cannot be written, the disk is full ({cause}); "
            f"{NOTHING_SAVED}. Free some space and try again."
        )
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return StoreBusy(
            f"{path}: the store is locked by another process (waited {waited:g} s: {cause}); "
            f"{NOTHING_SAVED}. Try again once that process is done."
        )
    if name.startswith("SQLITE_READONLY"):
        return read_only(path, cause)
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
        return damaged(path, cause)
    if name.startswith(("SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH")):
        return cannot_open(path, cause)
    if name.startswith("SQLITE_IOERR"):
        return StoreUnavailable(f"{path}: the store cannot be read or written ({cause}).")
    return StoreError(f"{path}: the store refused the operation ({cause}); {NOTHING_SAVED}.")


def damaged(path: Path, cause: str) -> StoreDamaged:
    return StoreDamaged(
        f"{path} is damaged ({cause}); it was left untouched. Move it away (restore a "
        f"backup, or try `sqlite3 {path.name} .recover`) or {CHOOSE_HOME}."
    )


def read_only(path: Path, cause: str) -> StoreReadOnly:
    directory = path.parent
    if not _writable(directory):
        return cannot_write_in(directory, cause)
    return StoreReadOnly(
        f"{path}: the store is read-only ({cause}); {NOTHING_SAVED}. "
        f"Make it writable or {CHOOSE_HOME}."
    )


def cannot_write_in(directory: Path, cause: str) -> StoreReadOnly:
    return StoreReadOnly(
        f"cannot write in {directory} ({cause}): pi-agents keeps its store and outputs "
        f"there. Make it writable or {CHOOSE_HOME}."
    )


def cannot_open(path: Path, cause: str) -> StoreError:
    """Why SQLite could not open `path`, found out from the file system."""
    directory = path.parent
    if path.is_dir():
        return StoreUnavailable(
            f"{path} is a directory, not a pi-agents store. Move it away or {CHOOSE_HOME}."
        )
    if not directory.is_dir():
        return StoreUnavailable(f"the home {directory} does not exist. Create it or {CHOOSE_HOME}.")
    if not _writable(directory):
        return cannot_write_in(directory, "permission denied")
    if path.exists() and not os.access(path, os.R_OK | os.W_OK):
        return StoreReadOnly(
            f"{path}: the store cannot be opened (permission denied). "
            f"Check its permissions or {CHOOSE_HOME}."
        )
    return StoreUnavailable(f"{path}: the store cannot be opened ({cause}).")


def home_error(home: Path, exc: OSError) -> StoreError:
    """The StoreError for an OSError met while creating or checking the home `home`."""
    if isinstance(exc, FileExistsError | NotADirectoryError) or exc.errno in (
        errno.EEXIST,
        errno.ENOTDIR,
    ):
        blocker = next((p for p in (home, *home.parents) if p.exists() and not p.is_dir()), home)
        return StoreUnavailable(
            f"cannot use {home} as the pi-agents home: {blocker} is not a directory. "
            f"Move it away or {CHOOSE_HOME}."
        )
    reason = exc.strerror or str(exc)
    if isinstance(exc, PermissionError) or exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return StoreReadOnly(
            f"cannot create {home} ({reason}). Check the permissions or {CHOOSE_HOME}."
        )
    if exc.errno == errno.ENOSPC:
        return StoreFull(f"cannot create {home}: the disk is full. Free some space and try again.")
    return StoreUnavailable(f"cannot create {home} ({reason}). {CHOOSE_HOME.capitalize()}.")


def _writable(directory: Path) -> bool:
    return os.access(directory, os.W_OK | os.X_OK)


def _disk_full(path: Path) -> bool:
    try:
        return os.statvfs(path.parent).f_bavail == 0
    except OSError:
        return False
