"""The interactive terminal UI (Textual). Imported lazily by the command line.

Its public names, each imported on first use from the module that defines it:

- `run_app` (`launch`): run the UI on a host (`piagents.hosting.RuntimeHost`: a
  runtime and the root it opens there; what `pi-agents` without a prompt does, from
  `piagents.cli_interactive`).
- `PiAgentsApp` (`app`): the App itself: one root Agent's transcript, task panel,
  editor and footer.

Its widgets read the runtime's events and its read model only
(`piagents.events`, `piagents.read_model`), never the store or the coordinator; the
host opens and closes the runtime and the root.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from piagents.tui.app import PiAgentsApp
    from piagents.tui.launch import run_app

__all__ = ["PiAgentsApp", "run_app"]

_DEFINED_IN = {"PiAgentsApp": "app", "run_app": "launch"}


def __getattr__(name: str) -> Any:
    # Imported on first use, so importing one widget module does not import the App.
    if name not in _DEFINED_IN:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_DEFINED_IN[name]}"), name)
