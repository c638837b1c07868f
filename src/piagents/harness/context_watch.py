"""Kernel notices of changes to the paths a context-file answer depends on (Linux).

`ContextFileCache` checks the status of every candidate path before it answers: two
path resolutions and a dozen `access`/`stat` calls, a fifteenth of a spawn. With
`ContextWatch` it asks the kernel instead (inotify, through `inotify_simple`): while
no change was noticed under the watched paths since an answer was checked, and that
check is under `MAX_TRUST_S` old, the answer stands without a look at the disk.

What is watched, for a resolved `cwd` (and `home`): every directory from the root down
to it, for changes to its context files and to the entry leading on towards `cwd` (so a
directory renamed, removed or replaced by a link is noticed); and every candidate file
that exists, itself, through links (an `AGENTS.md` linked to a file elsewhere is
edited there). Writes to other files in those directories (the store's own log in
`home`) are not watched. Any change noticed makes every answer checked again, once.

A path given unresolved (through a link) is never trusted this way: moving the link
changes the answer without a change under the resolved paths. Changes the kernel does
not see (another machine writing to a network file system) are found by the full
check, made at least every `MAX_TRUST_S` seconds. One watch serves the whole process;
a forked child makes its own. Where there is no inotify (another system, no instance
left), every answer is checked in full, as without a watch.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Iterable
from typing import Any

log = logging.getLogger("piagents")

MAX_TRUST_S = 1.0  # an answer is checked in full at least this often
MAX_WATCHES = 4096  # more paths than this are not watched: their answers are checked

# A directory: its entries made, removed, renamed or changed in mode, and itself gone.
# Not the writes to the files in it: a context file that exists is watched itself, and
# the others (the store's log in `home`) would be read and thrown away at every commit.
_DIRECTORY_EVENTS = (
    "ATTRIB",
    "MOVED_FROM",
    "MOVED_TO",
    "CREATE",
    "DELETE",
    "DELETE_SELF",
    "MOVE_SELF",
)
# A context file (through links): written, changed in mode or links, removed, renamed.
_FILE_EVENTS = ("MODIFY", "ATTRIB", "CLOSE_WRITE", "DELETE_SELF", "MOVE_SELF")


class ContextWatch:
    """One inotify instance and what it watches. `generation()` grows with every change
    noticed; an answer checked at generation G stands while it is still G."""

    def __init__(self, inotify: Any, flags: Any) -> None:
        self._inotify = inotify
        self._directory_mask = _mask(flags, _DIRECTORY_EVENTS)
        self._file_mask = _mask(flags, _FILE_EVENTS)
        self._overflow = int(flags.Q_OVERFLOW)
        self._gone = int(flags.IGNORED)
        self._lock = threading.Lock()
        self._paths: dict[str, int] = {}  # watched path -> watch descriptor
        self._names: dict[int, set[str] | None] = {}  # wd -> names that count (None: all)
        self._generation = 0

    def generation(self) -> int:
        """The count of changes noticed so far (reading what the kernel has queued)."""
        with self._lock:
            if any(self._counts(event) for event in self._read()):
                self._generation += 1
                self._start_over()
            return self._generation

    def _read(self) -> list[Any]:
        try:
            return list(self._inotify.read(timeout=0))
        except OSError:
            return [None]  # cannot be read: as if anything had changed

    def _counts(self, event: Any) -> bool:
        if event is None or event.mask & (self._overflow | self._gone):
            return True
        names = self._names.get(event.wd)
        return names is None or not event.name or event.name in names

    def _start_over(self) -> None:
        """After a change every answer is checked in full, and each check watches its
        paths again: a directory moved away is no longer watched under its old path."""
        for wd in set(self._paths.values()):
            with contextlib.suppress(OSError):  # already gone with its path
                self._inotify.rm_watch(wd)
        self._paths.clear()
        self._names.clear()
        self._read()  # the removals' own notices (and any change: checked in full anyway)

    def watch(self, directories: Iterable[tuple[str, Iterable[str]]], files: Iterable[str]) -> bool:
        """Watch each directory for changes to the names given with it, and each file
        for any change; False when one of them cannot be watched."""
        with self._lock:
            for path, names in directories:
                if not self._add(path, set(names)):
                    return False
            return all(self._add(path, None) for path in files)

    def _add(self, path: str, names: set[str] | None) -> bool:
        wd = self._paths.get(path)
        if wd is None:
            if len(self._paths) >= MAX_WATCHES:
                return False
            try:
                mask = self._file_mask if names is None else self._directory_mask
                wd = self._inotify.add_watch(path, mask)
            except OSError:  # gone, unreadable, or no watch left for this user
                return False
            self._paths[path] = wd
        if names is None:
            self._names[wd] = None
        else:
            known = self._names.setdefault(wd, set())
            if known is not None:
                known |= names
        return True


def _mask(flags: Any, names: Iterable[str]) -> int:
    mask = 0
    for name in names:
        mask |= int(getattr(flags, name))
    return mask


_shared: tuple[int, ContextWatch | None] | None = None
_shared_lock = threading.Lock()


def shared_watch() -> ContextWatch | None:
    """The process's watch (made on first use, again in a forked child); None where
    inotify is not to be had."""
    global _shared
    pid = os.getpid()
    with _shared_lock:
        if _shared is None or _shared[0] != pid:
            _shared = (pid, _make())
        return _shared[1]


def _make() -> ContextWatch | None:
    try:
        import inotify_simple
    except ImportError:
        return None
    try:
        return ContextWatch(inotify_simple.INotify(nonblocking=True), inotify_simple.flags)
    except OSError as exc:  # e.g. no inotify instance left for this user
        log.debug("Context files are checked in full: no inotify (%s)", exc)
        return None


def now() -> float:
    return time.monotonic()
