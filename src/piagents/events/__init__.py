"""The runtime's typed event stream: records, the hub front ends subscribe to, and
the per-Agent state tracking that feeds it."""

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
    ResultDelivered,
    RuntimeEvent,
    SettingsChanged,
    SupervisionChanged,
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
    "ResultDelivered",
    "RuntimeEvent",
    "SettingsChanged",
    "Subscription",
    "SupervisionChanged",
    "event_to_json",
]
