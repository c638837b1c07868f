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

Group commit: a thread takes every write waiting for it when it is free, and the
ones that can be parts of a group (`Write.part`: one statement each) go to the
store's `group` together, which commits them in one transaction and one round trip.
The writes of many Agents that land at once so cost one round trip instead of one
each; a part whose outcome needs more than its statement (`RERUN`: it changed
nothing, and why must be read) is then run by itself, as every write of a group
that failed is.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import queue
import threading
import weakref
import zlib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Final, Generic, TypeVar

R = TypeVar("R")  # what each thread writes through: e.g. a connection of its own
T = TypeVar("T")  # what a write returns to its settle

GROUP_MAX = 64  # parts in one group at most


class _Rerun:
    pass


RERUN: Final = _Rerun()
"""What a group gives a part (or a part's `finish` returns) that must be run alone."""

Group = Callable[[R, Sequence[Any]], Sequence[Any]]
"""Runs parts in one transaction: a value per part, or RERUN for a part (for all of
them, when the transaction failed and nothing of it was saved); raises when whether
they were saved is not known."""


@dataclass(frozen=True, slots=True)
class Write(Generic[R, T]):
    """A write for the write thread. `alone(resource)` runs it by itself. With a
    `part`, it may run as one part of a group instead, and `finish(resource, value)`
    makes its result of the value the group gave the part (or RERUN)."""

    alone: Callable[[R], T]
    part: Any = None
    finish: Callable[[R, Any], Any] | None = None


class LaterWrite(Generic[T]):
    """A write handed to the write thread; done once its transaction returned."""

    def __init__(self, future: Future[T], settle: Callable[[T], object]) -> None:
        self.future = future
        self._settle = settle

    def done_here(self) -> asyncio.Future[None]:
        """A future of the running loop, done (with None) once the write is done; then
        `result()` gives its value without blocking. Cancelling it does not cancel
        the write. The writes a thread finishes together wake the loop once."""
        return _wakes_of(asyncio.get_running_loop()).watch(self.future)

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


class _LoopWakes:
    """Writes done on the threads, handed to one event loop in batches: the loop is
    woken once for all of those that finished since it last looked, not once each
    (a group of 50 writes was 50 wake-ups, each a write to the loop's self-pipe)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = weakref.ref(loop)  # the table of these must not keep the loop alive
        self._lock = threading.Lock()
        self._ready: list[asyncio.Future[None]] = []

    def watch(self, future: Future[Any]) -> asyncio.Future[None]:
        loop = self._loop()
        assert loop is not None  # the caller runs on it
        waiter: asyncio.Future[None] = loop.create_future()
        future.add_done_callback(lambda _: self._done(waiter))
        return waiter

    def _done(self, waiter: asyncio.Future[None]) -> None:  # on the thread that finished it
        with self._lock:
            self._ready.append(waiter)
            if len(self._ready) > 1:
                return  # a wake-up is on its way
        held = getattr(_holding, "wakes", None)
        if held is not None:  # a group is finishing on this thread: woken once, after it
            held.add(self)
            return
        self._send()

    def _send(self) -> None:
        loop = self._loop()
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits now
                loop.call_soon_threadsafe(self._wake)

    def _wake(self) -> None:  # on the loop
        with self._lock:
            ready, self._ready = self._ready, []
        for waiter in ready:
            if not waiter.done():
                waiter.set_result(None)


_holding = threading.local()  # `wakes`: the loops to wake once a group has finished


@contextlib.contextmanager
def _wake_after() -> Iterator[None]:
    """The writes finished inside wake each loop once, at the end: the loop could
    otherwise take the first ones between two of them and be woken again."""
    held: set[_LoopWakes] = set()
    _holding.wakes = held
    try:
        yield
    finally:
        _holding.wakes = None
        for wakes in held:
            wakes._send()


_wakes: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopWakes] = (
    weakref.WeakKeyDictionary()
)
_wakes_lock = threading.Lock()


def _wakes_of(loop: asyncio.AbstractEventLoop) -> _LoopWakes:
    with _wakes_lock:
        wakes = _wakes.get(loop)
        if wakes is None:
            wakes = _wakes[loop] = _LoopWakes(loop)
        return wakes


_Job = tuple[Write[Any, Any], Future[Any]]
_DRAIN: Final[Write[Any, None]] = Write(lambda _: None)  # a mark in a thread's queue


class WriteThread(Generic[R]):
    """Threads running writes against resources they make on first use (a connection
    each): the writes of one key (a session) on one thread, in the order given; the
    writes waiting for a thread when it is free, grouped where they can be."""

    # On two cores with the server on the same machine, one thread does as well as
    # four; with a database 0.5 ms away, four take the 100 x 10 fan-out from 6.9 s
    # to 5.2 s (bench/RESULTS.md, stop 23).

    def __init__(
        self,
        make: Callable[[], R],
        close: Callable[[R], None],
        name: str,
        threads: int = 1,
        group: Group[R] | None = None,
    ) -> None:
        self._make = make
        self._close = close
        self._group = group
        self._resources: list[R | None] = [None] * threads
        self._queues: list[queue.SimpleQueue[_Job | None]] = [
            queue.SimpleQueue() for _ in range(threads)
        ]
        self._threads = [
            threading.Thread(target=self._serve, args=(i,), name=f"{name}-{i}", daemon=True)
            for i in range(threads)
        ]
        self._lock = threading.Lock()
        self._closed = False
        self._spare: R | None = None  # made ahead: the first thread to need one takes it
        for thread in self._threads:
            thread.start()
        atexit.register(self.close)  # the writes given are committed before exit

    def _resource(self, i: int) -> R:  # on thread i
        resource = self._resources[i]
        if resource is None:
            with self._lock:
                resource, self._spare = self._spare, None
            if resource is None:
                resource = self._make()
            self._resources[i] = resource
        return resource

    def make_spare(self) -> None:
        """Make a resource now, on the caller's thread, for the first thread that needs
        one: its first write does not wait for a connection to be made (a process
        kept ready for work makes it before there is any)."""
        with self._lock:
            if self._closed or self._spare is not None:
                return
        spare = self._make()
        with self._lock:
            if self._closed or self._spare is not None:
                keep = False
            else:
                self._spare, keep = spare, True
        if not keep:
            self._close(spare)

    def submit(
        self,
        key: str,
        write: Write[R, T] | Callable[[R], T],
        settle: Callable[[T], object],
    ) -> LaterWrite[T]:
        """`write` on `key`'s thread, after the writes of `key` given before it."""
        if not isinstance(write, Write):
            write = Write(write)
        future: Future[T] = Future()
        i = zlib.crc32(key.encode()) % len(self._queues)
        with self._lock:
            if self._closed:
                raise RuntimeError("the store's write threads were closed")
            self._queues[i].put((write, future))
        return LaterWrite(future, settle)

    # ---- on a write thread -----------------------------------------------------------

    def _serve(self, i: int) -> None:
        waiting = self._queues[i]
        while True:
            job = waiting.get()
            if job is None:
                return
            jobs, stop = [job], False
            while len(jobs) < GROUP_MAX:
                try:
                    more = waiting.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stop = True
                    break
                jobs.append(more)
            self._run(i, jobs)
            if stop:
                return

    def _run(self, i: int, jobs: list[_Job]) -> None:
        """The jobs in their order; each run of two or more parts as one group."""
        start = 0
        while start < len(jobs):
            end = start
            while end < len(jobs) and jobs[end][0].part is not None:
                end += 1
            if self._group is not None and end - start >= 2:
                self._run_group(i, jobs[start:end])
                start = end
            else:
                self._run_alone(i, jobs[start])
                start += 1

    def _run_alone(self, i: int, job: _Job) -> None:
        write, future = job
        if not future.set_running_or_notify_cancel():
            return
        if write is _DRAIN:  # needs no connection: makes none
            future.set_result(None)
            return
        try:
            future.set_result(write.alone(self._resource(i)))
        except BaseException as exc:  # the awaiter's to see
            future.set_exception(exc)

    def _run_group(self, i: int, jobs: list[_Job]) -> None:
        with _wake_after():  # its writes end together, failed or not: one wake-up
            self._settle_group(i, jobs)

    def _settle_group(self, i: int, jobs: list[_Job]) -> None:
        assert self._group is not None
        try:
            resource = self._resource(i)
            values = self._group(resource, [write.part for write, _ in jobs])
        except BaseException as exc:  # not known whether saved: each write says so
            for _, future in jobs:
                if future.set_running_or_notify_cancel():
                    future.set_exception(exc)
            return
        for job, value in zip(jobs, values, strict=True):
            write, future = job
            if value is not RERUN and write.finish is not None:
                try:
                    value = write.finish(resource, value)
                except BaseException as exc:
                    if future.set_running_or_notify_cancel():
                        future.set_exception(exc)
                    continue
            if value is RERUN:
                self._run_alone(i, job)
            elif future.set_running_or_notify_cancel():
                future.set_result(value)

    # ---- on the caller's thread ------------------------------------------------------

    async def drained(self) -> None:
        """Once every write submitted so far has committed, and the loop has run what
        its awaiters and callbacks do after it (they were scheduled before this wakes)."""
        for i in range(len(self._queues)):
            with self._lock:
                if self._closed:
                    return
                future: Future[None] = Future()
                self._queues[i].put((_DRAIN, future))
            await asyncio.wrap_future(future)

    def close(self) -> None:
        """Let the writes submitted finish, then close the resources."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for waiting in self._queues:
                waiting.put(None)
        atexit.unregister(self.close)
        for thread in self._threads:
            thread.join()
        made = [*self._resources, self._spare]  # the spare, if no thread took it
        self._resources, self._spare = [None] * len(self._resources), None
        for resource in made:
            if resource is not None:
                with contextlib.suppress(Exception):
                    self._close(resource)
