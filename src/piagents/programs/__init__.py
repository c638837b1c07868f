"""Programs: Python that composes the caller's tools and Agents, run in a sandbox.

Its public names, each imported on first use from the module that defines it:

- `texts`: every model-facing text of the `program` tool, as pure functions.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = ["texts"]


def __getattr__(name: str) -> Any:
    if name == "texts":
        return import_module("piagents.programs.texts")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
