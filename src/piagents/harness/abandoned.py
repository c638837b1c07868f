"""Work that did not stop when asked, let go so that the process can still exit.

`asyncio.run` cancels every task it knows and waits for all of them: a turn that
swallows its cancellation (a stuck provider, a route that ignores it) would keep
it from ever returning. An abandoned turn is therefore taken out of asyncio's
books; it runs on while the event loop does and is dropped when the loop closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from typing import Any

_let_go: weakref.WeakSet[asyncio.Task[Any]] = weakref.WeakSet()


def let_go(task: asyncio.Task[Any]) -> None:
    """Stop counting `task` among the event loop's tasks (it keeps running)."""
    with contextlib.suppress(AttributeError):
        # Dropped with the loop at exit, as documented: not worth a warning then.
        task._log_destroy_pending = False  # type: ignore[attr-defined]
    unregister = getattr(asyncio.tasks, "_unregister_task", None)
    if unregister is not None:  # CPython 3.11 to 3.13 (and later) have it
        unregister(task)
    _let_go.add(task)
    _quiet_at_shutdown(task.get_loop())


def _quiet_at_shutdown(loop: asyncio.AbstractEventLoop) -> None:
    """At exit the loop closes every async generator; those inside a stuck turn are
    still running and cannot be closed, which is expected, not an error to show."""
    previous = loop.get_exception_handler()
    if getattr(previous, "piagents_abandoned", False):
        return

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        agen = context.get("asyncgen")
        exc = context.get("exception")
        if (
            agen is not None
            and getattr(agen, "ag_running", False)
            and isinstance(exc, RuntimeError)
            and any(not t.done() for t in _let_go)
        ):
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    handler.piagents_abandoned = True  # type: ignore[attr-defined]
    loop.set_exception_handler(handler)
