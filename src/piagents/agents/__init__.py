"""The Pi Agents side: the `agent` tool (spawn, send, wait, list, abort) and the
semantics underneath it.

Its public names, each imported on first use from the module that defines it:

- `Coordinator` (`coordinator`): delivery, slots, results, waits and states of the
  Agents of this runtime; the harness calls its hooks.
- `Operations` (`operations`): the five operations of the `agent` tool for a caller.
- `AgentTool` (`tool`): the model-facing `agent` tool; `AgentCallError` (`errors`)
  is an invalid call, as the model reads it.
- `Delivery` (`delivery`): the one path every message to an Agent takes; it gives
  back an `Accepted` with its `Route` (`accepted`).
- `AgentsPorts`, `WakePolicy` (`ports`): what the runtime lends this side, wired in
  `piagents.composition`; `WaitClock` (`clock`): how long a `wait` waits.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from piagents.agents.accepted import Accepted, Route
    from piagents.agents.clock import WaitClock
    from piagents.agents.coordinator import Coordinator
    from piagents.agents.delivery import Delivery
    from piagents.agents.errors import AgentCallError
    from piagents.agents.operations import Operations
    from piagents.agents.ports import AgentsPorts, WakePolicy
    from piagents.agents.tool import AgentTool

__all__ = [
    "Accepted",
    "AgentCallError",
    "AgentTool",
    "AgentsPorts",
    "Coordinator",
    "Delivery",
    "Operations",
    "Route",
    "WaitClock",
    "WakePolicy",
]

_DEFINED_IN = {
    "Accepted": "accepted",
    "Route": "accepted",
    "WaitClock": "clock",
    "Coordinator": "coordinator",
    "Delivery": "delivery",
    "AgentCallError": "errors",
    "Operations": "operations",
    "AgentsPorts": "ports",
    "WakePolicy": "ports",
    "AgentTool": "tool",
}


def __getattr__(name: str) -> Any:
    # Imported on first use, so importing one module of the package imports no other.
    if name not in _DEFINED_IN:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_DEFINED_IN[name]}"), name)
