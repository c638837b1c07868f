"""Programs: Python that composes the caller's tools and Agents, run in a sandbox.

Its public names, each imported on first use from the module that defines it:

- `texts`: every model-facing text of the `program` tool, as pure functions.
- `calls`: the tool's argument schema, and each call checked into one request.
- `addressing`: Programs' short IDs, and targets resolved by ID or unique prefix.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = ["addressing", "calls", "texts"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return import_module(f"piagents.programs.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
