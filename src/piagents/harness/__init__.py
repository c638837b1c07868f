"""The harness: durable sessions, the agent loop, compaction, the system prompt and
the built-in tools (`piagents.harness.tools`).

Its public names, each imported on first use from the module that defines it:

- `Session` (`session`): a durable conversation, its entries and their context.
- `AgentLoop`, `LoopConfig`, `LoopHooks` (`loop`): runs, turns, tool boundaries,
  queues and abort, and what the runtime hooks into them.
- `LoopEvent`, `RunOutcome` (`events`): what a loop reports while it works, and
  how a run ended.
- `compact` (`compaction`): summarise old entries so a long session fits its model.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from piagents.harness.compaction import compact
    from piagents.harness.events import LoopEvent, RunOutcome
    from piagents.harness.loop import AgentLoop, LoopHooks
    from piagents.harness.loop_records import LoopConfig
    from piagents.harness.session import Session

__all__ = ["AgentLoop", "LoopConfig", "LoopEvent", "LoopHooks", "RunOutcome", "Session", "compact"]

_DEFINED_IN = {
    "compact": "compaction",
    "LoopEvent": "events",
    "RunOutcome": "events",
    "AgentLoop": "loop",
    "LoopConfig": "loop_records",
    "LoopHooks": "loop",
    "Session": "session",
}


def __getattr__(name: str) -> Any:
    # Imported on first use, so importing one module of the package imports no other.
    if name not in _DEFINED_IN:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_DEFINED_IN[name]}"), name)
