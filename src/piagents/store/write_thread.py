"""Writes the event loop need not wait for on its own thread.

A store whose commits are round trips to a server (PostgreSQL) blocks the event
loop for each of them when it is called from the loop. For the writes on a turn's
path (a message appended, a run's end), the loop can instead hand the write to a
thread with a connection of its own and await it: the other Agents run meanwhile,
and the write's round trip overlaps their work. Each write has a key (its session):
the writes of one key go to one thread, which runs them one at a time in the order
given, so a session's entries and ends are committed in their order; writes of
different sessions may overlap on different threads.

`LaterWrite` is one such write: its `future` is done once the write's transaction
returned; `result()` (on the caller's thread, once it is done, or waiting for it)
raises what the write raised, after the store's own reading of its outcome
(`settle`: the checks that read the store's state through its main connection).
"""

from __future__ import annotations

import asyncio
import contextlib
import zlib
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Generic, TypeVar

R = TypeVar("R")  # what each thread writes through: e.g. a connection of its own
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
    """Threads running writes against resources they make on first use (a connection
    each): the writes of one key (a session) on one thread, in the order given."""

    # On two cores with the server on the same machine, one thread does as well as
    # four; with a database 0.5 ms away, four take the 100 x 10 fan-out from 6.9 s
    # to 5.2 s (bench/RESULTS.md, stop 23).

    def __init__(
        self, make: Callable[[], R], close: Callable[[R], None], name: str, threads: int = 1
    ) -> None:
        self._make = make
        self._close = close
        self._resources: list[R | None] = [None] * threads
        self._pools = [
            ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"{name}-{i}")
            for i in range(threads)
        ]

    def _resource(self, i: int) -> R:  # on thread i
        resource = self._resources[i]
        if resource is None:
            resource = self._resources[i] = self._make()
        return resource

    def submit(
        self, key: str, write: Callable[[R], T], settle: Callable[[T], object]
    ) -> LaterWrite[T]:
        """`write(resource)` on `key`'s thread, after the writes of `key` given before it."""
        i = zlib.crc32(key.encode()) % len(self._pools)
        return LaterWrite(self._pools[i].submit(lambda: write(self._resource(i))), settle)

    async def drained(self) -> None:
        """Once every write submitted so far has committed, and the loop has run what
        its awaiters and callbacks do after it (they were scheduled before this wakes)."""
        for pool in self._pools:
            await asyncio.wrap_future(pool.submit(lambda: None))

    def close(self) -> None:
        """Let the writes submitted finish, then close the resources."""
        for pool in self._pools:
            pool.shutdown(wait=True)
        for i, resource in enumerate(self._resources):
            if resource is not None:
                with contextlib.suppress(Exception):
                    self._close(resource)
                self._resources[i] = None
