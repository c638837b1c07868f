"""Blocking work of tools, in threads that never keep the process alive for good.

A tool's blocking call (reading a FIFO nobody writes to, listing a hung mount)
can outlive the turn that made it. In asyncio's default executor such a thread
would keep `asyncio.run` from returning and the interpreter from exiting; each
call gets a daemon thread of its own instead. At exit, calls still running get
a short grace to finish (a write under way completes), then are left behind.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import contextvars
import threading
import time
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

EXIT_GRACE_S = 2.0
_running: set[threading.Thread] = set()
_lock = threading.Lock()


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

    def work() -> None:
        result: T | None = None
        error: BaseException | None = None
        try:
            result = context.run(func, *args, **kwargs)
        except BaseException as exc:  # handed to the caller, whatever it is
            error = exc
        finally:
            with _lock:
                _running.discard(thread)
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
            loop.call_soon_threadsafe(settle, result, error)

    thread = threading.Thread(target=work, name=f"piagents-{func.__name__}", daemon=True)
    with _lock:
        _running.add(thread)
    thread.start()
    return await future


@atexit.register
def _grace_at_exit() -> None:
    deadline = time.monotonic() + EXIT_GRACE_S
    with _lock:
        threads = list(_running)
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
