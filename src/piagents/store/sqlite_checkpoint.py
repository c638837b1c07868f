"""Checkpoints of the store's write-ahead log, made in a thread of their own.

SQLite copies the WAL back into the database file ("checkpoints") on the commit
that finds the log over 1,000 pages, inside that commit: the copy and its two
fsyncs then stall whatever made the commit, the event loop included (about 1 ms
in every 200 commits on the 2-core machine). The store's connection therefore
checkpoints no longer itself; `Checkpointer` counts its commits and every
`every` of them wakes a daemon thread that runs a PASSIVE checkpoint on a
connection of its own, which never waits for a lock and never blocks a writer.

A checkpoint running beside a busy writer never catches up with it: the frames
committed meanwhile are left in the log, so SQLite never starts the log over and
it grows without end (1 GB for a 20 MB database after 6,000 spawns), and every
page read searches more of it. When the thread's checkpoint is done, the writer
therefore finishes it at its next commit: a PASSIVE checkpoint on its own
connection copies the few frames written meanwhile (nothing else writes between
its commits), and the next write transaction starts the log over from its
beginning (`journal_size_limit` also shrinks a log a burst made large).

If the thread's connection cannot be opened, the store's own connection
checkpoints again as SQLite does by default. Closing the store's connection (the
last one) checkpoints what is left and removes the log, as before.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path

log = logging.getLogger("piagents")

CHECKPOINT_EVERY = 200  # commits; a spawn with its child's turn makes about seven
SQLITE_DEFAULT_PAGES = 1000
LOG_SIZE_LIMIT = 16 * 1024 * 1024  # bytes a log started over is shrunk to


class Checkpointer:
    """Checkpoints for the writable connection `db` to the store at `path`."""

    def __init__(self, path: Path, db: sqlite3.Connection, *, every: int = CHECKPOINT_EVERY):
        self._path = path
        self._db = db
        self._every = every
        self._commits = 0
        self._wake = threading.Event()
        self._closed = False
        self._failed = False
        self._finish = threading.Event()  # the thread's checkpoint is done: finish it
        self._thread: threading.Thread | None = None
        self.checkpoints = 0  # made by the thread (tests look)
        self.finished = 0  # checkpoints the writer finished (tests look)
        db.execute("PRAGMA wal_autocheckpoint = 0")
        db.execute(f"PRAGMA journal_size_limit = {LOG_SIZE_LIMIT}")

    def committed(self) -> None:
        """Called after each commit on `db`, by the thread holding its lock."""
        if self._failed:  # no thread could connect: `db` checkpoints itself again
            self._failed = False
            self._every = 1 << 62
            self._db.execute(f"PRAGMA wal_autocheckpoint = {SQLITE_DEFAULT_PAGES}")
        if self._finish.is_set():
            self._finish.clear()
            self._db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            self.finished += 1
        self._commits += 1
        if self._commits < self._every or self._closed:
            return
        self._commits = 0
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name="piagents-checkpoint", daemon=True
            )
            self._thread.start()
        self._wake.set()

    def _run(self) -> None:
        try:
            db = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            self._give_back(exc)
            return
        try:
            while True:
                self._wake.wait()
                self._wake.clear()
                if self._closed:
                    return
                try:
                    db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                    self._finish.set()
                    self.checkpoints += 1
                except sqlite3.Error as exc:  # the log stays; the next try may succeed
                    log.debug("A checkpoint of %s failed: %s", self._path, exc)
        finally:
            db.close()

    def _give_back(self, exc: sqlite3.Error) -> None:
        log.debug("No checkpoint connection to %s (%s): checkpoints on commit", self._path, exc)
        self._failed = True

    def close(self) -> None:
        """Stop the thread (after a checkpoint it is making), before `db` closes."""
        self._closed = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join()
