"""Background work of a runtime: an error it raises is logged and ends only that work."""

from __future__ import annotations

import logging
from collections.abc import Coroutine
from typing import Any

from piagents.store.base import StoreError

log = logging.getLogger("piagents")


async def contained(work: Coroutine[Any, Any, object], what: str) -> None:
    """Await `work`; a store failure is logged as a warning, any other error with its
    traceback, and neither goes further."""
    try:
        await work
    except StoreError as exc:
        log.warning("%s failed: %s", what.capitalize(), exc)
    except Exception:
        log.exception("%s failed", what.capitalize())
