"""What `list` shows of a managed agent: its state, its available actions, its record.

Pure functions over a generation and what the runtime observed of it; the
supervisor gathers the observations.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias, cast

from piagents.store.records import GenerationRecord, SessionRecord
from piagents.supervision.requests import Action
from piagents.supervision.texts import State

# The session meta key of a managed agent, {"definition", "label", "retired"?}, and its face.
MANAGED: Final = "managed"
STALE_AFTER_MS = 10 * 60 * 1000  # advisory: no progress for ten minutes

# The states a live record can be in (`ended` generations are not listed).
STATES: tuple[State, ...] = ("starting", "working", "blocked", "settling", "unknown", "lost")
Kind: TypeAlias = Literal["delegate", "continue"]  # how a generation was started
Face: TypeAlias = Literal["agents", "supervision", "managed"]  # what an Agent's `agent` tool is


def recorded_state(g: GenerationRecord) -> State:
    """The recorded state of a generation that has not ended (the store keeps it as text)."""
    return cast(State, g.state)


@dataclass(frozen=True, slots=True)
class Observed:
    """What the runtime knows of a generation right now."""

    state: State
    pending_ask: bool = False  # blocked on its ask_owner question
    waiting_on_children: bool = False  # blocked while its own agents work
    has_transcript: bool = False  # its session has persisted entries
    last_activity: int = 0  # ms
    tokens: int | None = None  # context tokens in use


def available_actions(observed: Observed, *, direct: bool) -> tuple[Action, ...]:
    """The operations the controller may use on this record now (authoritative).

    Only the direct owner gets actions; `unknown` records get none; `lost`
    records offer `transcript` (when persisted) and `close`; `interrupt` only
    while the agent works; `reply` only for a pending question.
    """
    if not direct or observed.state == "unknown":
        return ()
    transcript: tuple[Action, ...] = ("transcript",) if observed.has_transcript else ()
    if observed.state == "lost":
        return ("close", *transcript)
    if observed.state == "settling":
        return ("inspect", *transcript)
    actions: list[Action] = ["steer"]
    if observed.state == "working":
        actions.append("interrupt")
    if observed.pending_ask:
        actions.append("reply")
    actions += ["close", "inspect"]
    return (*actions, *transcript)


def iso(ms: int) -> str:
    stamp = datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC)
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def agent_record(
    g: GenerationRecord,
    observed: Observed,
    *,
    direct: bool,
    now_ms: int,
    workspace_id: str,
    session_path: str,
    tab_label: str,
    parent_visible: bool,
) -> dict[str, Any]:
    """One `list` record, with the field names of the API document."""
    inactive = max(0, now_ms - observed.last_activity) if observed.last_activity else 0
    record: dict[str, Any] = {
        "agent": g.label,
        "state": observed.state,
        "available_actions": list(available_actions(observed, direct=direct)),
        "workspace_id": workspace_id,
        "pane_id": g.pane,
        "tab_id": g.root_id,
        "tab_label": tab_label,
        "cwd": g.cwd,
        "pi_session_id": g.session_id,
        "pi_session_path": session_path,
        "owner_session_id": g.owner_id,
        "agent_definition": g.definition,
        "active_request_id": g.id,
        "last_activity_at": iso(observed.last_activity) if observed.last_activity else None,
        "stale": observed.state in ("working", "blocked") and inactive >= STALE_AFTER_MS,
        "inactive_ms": inactive,
    }
    if g.parent_label is not None and parent_visible:
        record["parent_label"] = g.parent_label
    if g.error is not None:
        record["result_error"] = g.error
    if observed.state == "unknown":
        record["diagnostic"] = (
            "its execution can be proven neither alive nor gone; no action is available"
        )
    elif observed.state == "lost":
        record["diagnostic"] = "its execution ended before it recorded a result"
    if observed.tokens is not None:
        record["tokens"] = observed.tokens
    return record


def placement_evidence(g: GenerationRecord) -> Mapping[str, Any]:
    """Startup evidence for delegate/continue results."""
    return {"placement": g.placement, "pid": g.pid, "host": g.host, "pane": g.pane}


def within_reach(controller: SessionRecord, session: SessionRecord, *, lead: bool) -> bool:
    """Whether a controller may read `session`'s conversation (fork it, continue it):
    its own session, or one of its agents'. A lead's agents are every session of its
    tree; a delegating agent's only the sessions it owns directly."""
    if session.id == controller.id:
        return True
    if lead:
        return (session.root_id or session.id) == (controller.root_id or controller.id)
    return session.owner_id == controller.id
