"""Pausing Python's cycle collector while many objects are built at once.

Loading a long session builds hundreds of thousands of small objects; the
collector would rescan them all, several times, as they pass through its
generations. None of them form cycles, so it is paused for the load.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cycle collector for the block (nested pauses are fine)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
