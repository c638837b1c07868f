"""The runtime's typed event stream: what a front end shows, announced after the
store has committed it, in commit order.

Its public names, each imported on first use from the module that defines it:

- The records (`records`), one per `type` tag: `AgentLoaded`, `AgentUnloaded`,
  `AgentStateChanged` (with `AgentState`), `InputAccepted`, `InputEnded`,
  `ResultDelivered`, `GenerationChanged`, `ProgramChanged`, `SupervisionChanged`,
  `ChangedElsewhere`, `TakenOver`, `SettingsChanged`, `DefinitionsChanged`,
  `AgentLoopEvent` (a turn's own events) and `EventsLost`; `RuntimeEvent` is their union, and
  `event_to_json` the one JSON object `--mode json` prints for each.
- `EventHub`, `Subscription` (`hub`): one runtime's stream, its callbacks and
  bounded async subscriptions (what `Runtime.subscribe` and `Runtime.events` give).

The runtime wires the rest: `states` computes the Agents' states that changed, and
`store` wraps the store so that each commit is announced once it returned.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from piagents.events.hub import EventHub, Subscription
    from piagents.events.records import (
        AgentLoaded,
        AgentLoopEvent,
        AgentState,
        AgentStateChanged,
        AgentUnloaded,
        ChangedElsewhere,
        DefinitionsChanged,
        EventsLost,
        GenerationChanged,
        InputAccepted,
        InputEnded,
        ProgramChanged,
        ResultDelivered,
        RuntimeEvent,
        SettingsChanged,
        SupervisionChanged,
        TakenOver,
        event_to_json,
    )

__all__ = [
    "AgentLoaded",
    "AgentLoopEvent",
    "AgentState",
    "AgentStateChanged",
    "AgentUnloaded",
    "ChangedElsewhere",
    "DefinitionsChanged",
    "EventHub",
    "EventsLost",
    "GenerationChanged",
    "InputAccepted",
    "InputEnded",
    "ProgramChanged",
    "ResultDelivered",
    "RuntimeEvent",
    "SettingsChanged",
    "Subscription",
    "SupervisionChanged",
    "TakenOver",
    "event_to_json",
]

_HUB = ("EventHub", "Subscription")


def __getattr__(name: str) -> Any:
    # Imported on first use, so importing one module of the package imports no other.
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{'hub' if name in _HUB else 'records'}"), name)
