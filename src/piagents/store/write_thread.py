"""Writes the event loop need not wait for on its own thread.

A store whose commits are round trips to a server (PostgreSQL) blocks the event
loop for each of them when it is called from the loop. For the writes on a turn's
path (a message appended), the loop can instead hand the write to one thread with
a connection of its own and await it: the other Agents run meanwhile, and the
write's round trip overlaps their work. The thread runs the writes one at a time,
in the order given, so a session's entries are committed in their order.

`LaterWrite` is one such write: its `future` is done once the write's transaction
returned; `result()` (on the caller's thread, once it is done, or waiting for it)
raises what the write raised, after the store's own reading of its outcome
(`settle`: the checks that read the store's state through its main connection).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Generic, TypeVar

R = TypeVar("R")  # what the thread's resource is: e.g. the entry log on its own connection
T = TypeVar("T")  # what a write returns to its settle


class LaterWrite(Generic[T]):
    """A write handed to the write thread; done once its transaction returned."""

    def __init__(self, future: Future[T], settle: Callable[[T], object]) -> None:
        self.future = future
        self._settle = settle

    def result(self) -> T:
        """Wait for the write here (blocking this thread); its value, or raise what it
        (or the store's reading of its outcome) raised."""
        value = self.future.result()
        self._settle(value)
        return value

    def then(self, after: Callable[[T], object]) -> LaterWrite[T]:
        """The same write, `after(value)` run (on the caller's thread) once it is read."""
        settle = self._settle

        def both(value: T) -> None:
            settle(value)
            after(value)

        return LaterWrite(self.future, both)


class WriteThread(Generic[R]):
    """One thread running writes in order against a resource it makes on first use.

    One, not a pool: more threads (a connection each, sessions spread over them) were
    measured no faster on two cores, where the server's backends, the loop and the
    threads share them (bench/RESULTS.md, stop 23)."""

    def __init__(self, make: Callable[[], R], close: Callable[[R], None], name: str) -> None:
        self._make = make
        self._close = close
        self._resource: R | None = None
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
        self.closed = False

    def _resource_here(self) -> R:  # on the thread
        if self._resource is None:
            self._resource = self._make()
        return self._resource

    def submit(self, write: Callable[[R], T], settle: Callable[[T], object]) -> LaterWrite[T]:
        """`write(resource)` on the thread, after every write submitted before it."""
        return LaterWrite(self._pool.submit(lambda: write(self._resource_here())), settle)

    def close(self) -> None:
        """Let the writes submitted finish, then close the resource."""
        self.closed = True
        self._pool.shutdown(wait=True)
        if self._resource is not None:
            with contextlib.suppress(Exception):
                self._close(self._resource)
            self._resource = None
