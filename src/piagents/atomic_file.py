"""Replacing a small file atomically: readers see the old text or the new, never a part."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomically(target: Path, text: str, *, durable: bool = True) -> None:
    """Write `text` to a temporary file beside `target`, then rename it over `target`.

    `durable` also syncs the data to disk first (settings, trust, definitions);
    files rewritten many times a second as live evidence can skip that.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            if durable:
                out.flush()
                os.fsync(out.fileno())
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
