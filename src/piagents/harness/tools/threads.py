"""Blocking work of tools, in threads that never keep the process alive for good.

A tool's blocking call (reading a file on a hung mount, listing a huge tree) can
outlive the turn that made it. In asyncio's default executor such a thread would
keep `asyncio.run` from returning and the interpreter from exiting, so calls run
in daemon threads of our own instead. The threads are kept and reused (starting
one per call costs more than a small tool call itself); a call never waits for
a busy thread, since a thread is started whenever none is idle. At exit, calls
still running get a short grace to finish (a write under way completes), then
are left behind.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import contextvars
import queue
import threading
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

EXIT_GRACE_S = 2.0
Job = Callable[[], Callable[[], None] | None]


class DaemonPool:
    """Daemon threads that run one job at a time and wait for the next one.

    Each job given is matched with a thread of its own at once: an idle one, or a
    new one when every thread is busy, so a job stuck for good holds up no other.
    A job returns what hands its result over (or None): that runs once its thread
    counts as idle again, so a caller that submits its next job as soon as it has
    the result finds the thread free instead of starting another.
    """

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0  # threads waiting for a job that no job has claimed yet
        self._busy = 0
        self._calm = threading.Condition(self._lock)  # notified when nothing is busy
        self.threads = 0

    def submit(self, job: Job) -> None:
        with self._lock:
            self._busy += 1
            if self._idle:
                self._idle -= 1
                start = False
            else:
                self.threads += 1
                start = True
        if start:
            threading.Thread(target=self._work, name="piagents-tool", daemon=True).start()
        self._jobs.put(job)

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            hand_over: Callable[[], None] | None = None
            try:
                hand_over = job()
            finally:
                with self._lock:
                    self._busy -= 1
                    self._idle += 1
                    if not self._busy:
                        self._calm.notify_all()
            if hand_over is not None:
                hand_over()

    def wait_calm(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds until no job runs; whether none does."""
        with self._calm:
            return self._calm.wait_for(lambda: not self._busy, timeout)


_pool = DaemonPool()


async def run_blocking(func: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """`func(*args, **kwargs)` in a daemon thread; cancelling the caller stops waiting."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def settle(result: T | None, error: BaseException | None) -> None:
        if future.done():  # the caller was cancelled
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)  # type: ignore[arg-type]

    def job() -> Callable[[], None]:
        result: T | None = None
        error: BaseException | None = None
        try:
            result = context.run(func, *args, **kwargs)
        except BaseException as exc:  # handed to the caller, whatever it is
            error = exc

        def hand_over() -> None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
                loop.call_soon_threadsafe(settle, result, error)

        return hand_over

    _pool.submit(job)
    return await future


@atexit.register
def _grace_at_exit() -> None:
    _pool.wait_calm(EXIT_GRACE_S)
