"""The runtime's events: frozen records of what a front end shows, each with a `type` tag.

Every record turns into one JSON object with `event_to_json` (what `--mode json`
prints, one a line). A turn's own events (phase, deltas, messages committed,
tool starts, ...) are the harness loop's `LoopEvent`s, carried whole in
`AgentLoopEvent` and printed as the loop prints them, with the Agent's id added.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from piagents.harness import events as loop_events
from piagents.harness.events import LoopEvent
from piagents.store.records import ProgramKind, ProgramRecord, ProgramState

AgentState: TypeAlias = Literal["running", "waiting", "queued", "idle"]
InputKind: TypeAlias = Literal["input", "write", "notification", "control"]
InputStatus: TypeAlias = Literal["completed", "failed", "aborted"]


@dataclass(frozen=True, slots=True)
class AgentLoaded:
    """An Agent was loaded in this runtime (opened, spawned, woken or reopened)."""

    agent_id: str
    root_id: str
    owner_id: str | None
    name: str | None
    type: Literal["agent_loaded"] = field(default="agent_loaded", init=False)


@dataclass(frozen=True, slots=True)
class AgentUnloaded:
    """An Agent went offline here (closed, idle after a wake, or discarded)."""

    agent_id: str
    root_id: str
    type: Literal["agent_unloaded"] = field(default="agent_unloaded", init=False)


@dataclass(frozen=True, slots=True)
class AgentStateChanged:
    """An Agent's Pi Agents state changed; `previous` is None for its first state."""

    agent_id: str
    root_id: str
    state: AgentState
    previous: AgentState | None
    type: Literal["agent_state"] = field(default="agent_state", init=False)


@dataclass(frozen=True, slots=True)
class InputAccepted:
    """A message for an Agent was committed to the store (`sender_id` None: its user)."""

    input_id: str
    recipient_id: str
    sender_id: str | None
    kind: str  # one of InputKind
    delivery: str
    text: str
    has_result: bool
    type: Literal["input_accepted"] = field(default="input_accepted", init=False)


@dataclass(frozen=True, slots=True)
class InputEnded:
    """The end of an input was committed: its outcome and the result its sender reads."""

    input_id: str
    recipient_id: str
    sender_id: str | None
    status: str  # one of InputStatus
    result: str | None
    aborted_by_owner: bool
    type: Literal["input_ended"] = field(default="input_ended", init=False)


@dataclass(frozen=True, slots=True)
class ResultDelivered:
    """A result for `owner_id` was committed: an owned Agent's input ended
    (`generation_id` None) or a managed agent's generation reported (its id)."""

    owner_id: str
    from_id: str
    input_id: str
    status: str
    generation_id: str | None = None
    type: Literal["result"] = field(default="result", init=False)


@dataclass(frozen=True, slots=True)
class GenerationChanged:
    """A supervision generation was recorded or changed (its recorded state)."""

    generation_id: str
    label: str
    root_id: str
    owner_id: str
    session_id: str
    state: str  # starting, working, blocked, settling, ended, lost, unknown
    outcome: str | None
    type: Literal["generation"] = field(default="generation", init=False)


@dataclass(frozen=True, slots=True)
class ProgramChanged:
    """A Program's start (`running`) or its one end was committed to the store (a script
    of the `program` tool, or an SDK Program scope: `kind`)."""

    program_id: str
    caller_id: str
    root_id: str
    state: ProgramState
    background: bool
    kind: ProgramKind = "script"
    type: Literal["program"] = field(default="program", init=False)

    @classmethod
    def of(cls, program: ProgramRecord) -> ProgramChanged:
        """The event announcing `program` as it is recorded now."""
        p = program
        return cls(p.id, p.caller_id, p.root_id, p.state, p.background, p.kind)


@dataclass(frozen=True, slots=True)
class SettingsChanged:
    """A setting of the `agents` block was changed from a front end."""

    key: str
    value: Any
    type: Literal["settings"] = field(default="settings", init=False)


@dataclass(frozen=True, slots=True)
class DefinitionsChanged:
    """Agent definitions (or the trust of a project's own) changed; `name` None: several."""

    project: str
    name: str | None
    type: Literal["definitions"] = field(default="definitions", init=False)


@dataclass(frozen=True, slots=True)
class SupervisionChanged:
    """What a supervisor knows of its live generations changed (also flags it does not
    record, such as a generation being retired): read the read model again."""

    type: Literal["supervision"] = field(default="supervision", init=False)


@dataclass(frozen=True, slots=True)
class ChangedElsewhere:
    """Another process told this runtime it changed the store (a worker's generation
    or conversation, inputs left for Agents here): read the read model again."""

    type: Literal["elsewhere"] = field(default="elsewhere", init=False)


@dataclass(frozen=True, slots=True)
class TakenOver:
    """Another runtime took over the lease of an Agent loaded here, after this runtime's
    heartbeat lapsed (it was cut off from the store): the Agent (a root, with its
    tree) is unloaded here, and nothing more of it is written from here."""

    agent_id: str
    type: Literal["taken_over"] = field(default="taken_over", init=False)


@dataclass(frozen=True, slots=True)
class AgentLoopEvent:
    """One event of an Agent's harness loop: phases, deltas, committed messages (the
    entries a turn commits), tool starts, retries, compactions, a run's start and end."""

    agent_id: str
    event: LoopEvent
    type: Literal["loop"] = field(default="loop", init=False)


@dataclass(frozen=True, slots=True)
class EventsLost:
    """A subscriber's queue was full: `count` events were dropped before this one.
    Read the read model again to catch up."""

    count: int
    type: Literal["lost"] = field(default="lost", init=False)


RuntimeEvent: TypeAlias = (
    AgentLoaded
    | AgentUnloaded
    | AgentStateChanged
    | InputAccepted
    | InputEnded
    | ResultDelivered
    | GenerationChanged
    | ProgramChanged
    | SettingsChanged
    | DefinitionsChanged
    | SupervisionChanged
    | ChangedElsewhere
    | TakenOver
    | AgentLoopEvent
    | EventsLost
)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def event_to_json(event: RuntimeEvent) -> dict[str, Any]:
    """The JSON object of an event (`--mode json` prints one a line)."""
    if isinstance(event, AgentLoopEvent):
        return {**loop_events.event_to_json(event.event), "agent": event.agent_id}
    out: dict[str, Any] = {"type": event.type}
    for name in event.__dataclass_fields__:
        if name != "type":
            value = getattr(event, name)
            out[_camel(name)] = list(value) if isinstance(value, tuple) else value
    return out
