"""The project context files of a directory, remembered while none of them changes.

Every Agent's system prompt includes the instruction files that apply in its working
directory (`system_prompt.find_context_files`). A tree of thousands of Agents in one
directory would read the same files thousands of times; `ContextFileCache` reads them
once per (cwd, home) and again as soon as any file that could count has changed: it
compares the status (inode, size, modification and change times, type) of every
candidate path, present or not, before it answers, so an edited, added, removed or
replaced `AGENTS.md` is read fresh. Where the kernel reports changes
(`context_watch`), an answer checked less than a second ago stands without that look
while nothing under its paths has changed.
"""

from __future__ import annotations

import ctypes
import functools
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from piagents.harness.context_watch import MAX_TRUST_S, ContextWatch, now, shared_watch
from piagents.harness.system_prompt import CONTEXT_FILE_NAMES, find_context_files

ContextFiles = list[tuple[Path, str]]
Stamp = tuple[int, int, int, int, int, int] | None

# Working directories remembered at most; a runtime uses a handful.
MAX_DIRECTORIES = 64


def _stamp(path: str) -> Stamp:
    # Most candidates do not exist: `access` says so without the exception a failed
    # `stat` raises, a third of the time of this check for a spawn.
    if not os.access(path, os.F_OK):
        return None
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _libc_realpath() -> Callable[[str], str] | None:
    """realpath(3) of the C library: the walk `os.path.realpath` makes in Python, in C
    (a spawn resolves two paths; in Python that is a third of its context check)."""
    try:
        libc = ctypes.CDLL(None)
        resolve, free = libc.realpath, libc.free
    except (OSError, AttributeError):  # no C library to call (not a POSIX system)
        return None
    resolve.argtypes, resolve.restype = [ctypes.c_char_p, ctypes.c_char_p], ctypes.c_void_p
    free.argtypes, free.restype = [ctypes.c_void_p], None

    def realpath(path: str) -> str:
        found = resolve(os.fsencode(path), None)
        if not found:  # a missing part: Python's answer, which keeps the rest as given
            return os.path.realpath(path)
        try:
            return os.fsdecode(ctypes.string_at(found))
        finally:
            free(found)

    return realpath


_realpath: Callable[[str], str] = _libc_realpath() or os.path.realpath


def _resolved(cwd: Path | str, home: Path | str | None) -> tuple[str, str | None]:
    return _realpath(str(cwd)), None if home is None else _realpath(str(home))


@functools.lru_cache(maxsize=MAX_DIRECTORIES)
def _paths_of(directory: str, home: str | None) -> tuple[str, ...]:
    """Every path `find_context_files` may read for resolved `directory` and `home`, in
    its order (a pure function of them: the paths are resolved at each full check, since
    a link may have moved, and what they give is worked out once)."""
    paths: list[str] = []
    if home is not None:
        paths.append(os.path.join(home, "AGENTS.md"))
    chain = [directory]
    while True:
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        chain.append(parent)
        directory = parent
    for each in reversed(chain):
        paths.extend(os.path.join(each, name) for name in CONTEXT_FILE_NAMES)
    return tuple(paths)


Signature = tuple[tuple[str, Stamp], ...]


def _stamped(paths: tuple[str, ...]) -> Signature:
    """What an answer depends on: each candidate path and its status."""
    return tuple((path, _stamp(path)) for path in paths)


def _directories(*resolved: str | None) -> Iterator[tuple[str, tuple[str, ...]]]:
    """Each directory from the root down to each resolved path, with the names in it
    that count: its context files, and the entry that leads on towards the path."""
    for path in resolved:
        if path is None:
            continue
        yield path, CONTEXT_FILE_NAMES
        while True:
            parent, name = os.path.split(path)
            if parent == path or not name:
                break
            yield parent, (*CONTEXT_FILE_NAMES, name)
            path = parent


@dataclass(frozen=True, slots=True)
class _Answer:
    stamps: Signature
    files: ContextFiles
    checked: float  # when (monotonic)
    generation: int | None  # the watch's when checked; None: not watched, check each time


class ContextFileCache:
    """`find_context_files`, answered from memory while its files are unchanged."""

    def __init__(
        self,
        find: Callable[[Path, Path | None], ContextFiles] = find_context_files,
        *,
        max_directories: int = MAX_DIRECTORIES,
        watch: Callable[[], ContextWatch | None] | None = None,
    ) -> None:
        self._find = find
        self._max = max_directories
        self._watch = watch or shared_watch  # the process's inotify watch, if it has one
        self._known: dict[tuple[str, str | None], _Answer] = {}

    def find(self, cwd: Path, home: Path | None = None) -> ContextFiles:
        key = (str(cwd), None if home is None else str(home))
        known = self._known.get(key)
        watch = self._watch()
        if (
            known is not None
            and known.generation is not None
            and watch is not None
            and now() - known.checked < MAX_TRUST_S
            and watch.generation() == known.generation
        ):
            return list(known.files)
        resolved = _resolved(cwd, home)
        before = None  # the watch's generation before the look, if it watches these paths
        if watch is not None and resolved == key:
            start = watch.generation()  # a change it notices makes it watch anew: not after
            if watch.watch(_directories(*resolved), ()) and watch.generation() == start:
                before = start
        checked = now()
        # Taken before reading: a file changed while it is read has another stamp
        # next time, so it is read again then.
        stamps = _stamped(_paths_of(*resolved))
        if known is not None and known.stamps == stamps:
            found = list(known.files)
        else:
            found = self._find(cwd, home)
        generation = None
        if before is not None:
            existing = [path for path, stamp in stamps if stamp is not None]
            # Watched only now that they are known to exist: trusted only if unchanged
            # since they were stamped, and nothing else changed meanwhile.
            if (
                watch is not None
                and watch.watch((), existing)
                and all(_stamp(path) == stamp for path, stamp in stamps if stamp is not None)
                and watch.generation() == before
            ):
                generation = before
        self._known.pop(key, None)
        if len(self._known) >= self._max:
            self._known.pop(next(iter(self._known)))
        self._known[key] = _Answer(stamps, list(found), checked, generation)
        return found
