"""The actions on a managed agent the lead already runs: steer, interrupt, reply,
close, inspect and transcript, each checked afresh just before it acts (the caller
may supervise, owns the agent directly, and the action is available now)."""

from __future__ import annotations

from typing import Any

import msgspec

from piagents.ai.messages import now_ms
from piagents.harness.tools.base import ToolResult
from piagents.harness.tools.foreground import foreground
from piagents.store.records import GenerationRecord, new_id
from piagents.supervision import error_texts, remote, texts
from piagents.supervision.attachments import ComposedMessage, attachment_details
from piagents.supervision.errors import SupervisionError
from piagents.supervision.host import Supervising
from piagents.supervision.live import LiveGeneration
from piagents.supervision.ports import AgentHandle
from piagents.supervision.records import Observed, available_actions
from piagents.supervision.requests import (
    CloseRequest,
    InspectRequest,
    InterruptRequest,
    ReplyRequest,
    SteerRequest,
    TranscriptRequest,
)
from piagents.supervision.transcript import render_transcript, transcript_items

# ---- which agent, and whether the action is allowed --------------------------------------


def target(sup: Supervising, caller: AgentHandle, label: str, operation: str) -> GenerationRecord:
    """The live generation `label` names, directly owned by the caller."""
    root = caller.session.record.root_id or caller.id
    matches = [
        sup.recovered(g)
        for g in sup.ports.store().generations(root_id=root, live=True)
        if g.label == label
    ]
    if not matches:
        raise SupervisionError(
            "target_not_found",
            error_texts.no_live_agent(label),
            operation,
            next_action=error_texts.NEXT_LIST_LABELS,
        )
    if len(matches) > 1:
        raise SupervisionError(
            "target_ambiguous",
            error_texts.label_ambiguous(label, len(matches)),
            operation,
            next_action=error_texts.NEXT_CLOSE_AMBIGUOUS,
        )
    g = matches[0]
    if g.owner_id != caller.id:
        raise SupervisionError(
            "target_not_found",
            error_texts.not_owned(label),
            operation,
            next_action=error_texts.NEXT_LIST_OWNED,
        )
    return g


def controlled(sup: Supervising, caller: AgentHandle, label: str, action: str) -> GenerationRecord:
    """The caller may supervise, owns `label` directly, and may use `action` on it now:
    checked afresh for every operation, just before it acts."""
    sup.controller(caller, action)
    g = target(sup, caller, label, action)
    allowed(sup, g, action)
    return g


def allowed(sup: Supervising, g: GenerationRecord, action: str) -> Observed:
    observed = sup.observe(g)
    if action not in available_actions(observed, direct=True):
        raise SupervisionError(
            "agent_busy",
            error_texts.action_unavailable(action, g.label, observed.state),
            action,
            next_action=error_texts.NEXT_LIST_ACTIONS,
        )
    return observed


def runs_elsewhere(sup: Supervising, g: GenerationRecord) -> bool:
    """`g` runs in a worker process of its own, not here."""
    return g.id not in sup.generations.live and remote.is_remote(g)


def live_of(sup: Supervising, g: GenerationRecord, operation: str) -> LiveGeneration:
    live = sup.generations.live.get(g.id)
    if live is None:
        raise SupervisionError(
            "agent_busy",
            error_texts.runs_elsewhere(g.label, g.placement),
            operation,
            next_action=error_texts.NEXT_LIST,
        )
    return live


# ---- steer, interrupt, reply, close -------------------------------------------------------


def steer(sup: Supervising, caller: AgentHandle, req: SteerRequest) -> ToolResult:
    g = controlled(sup, caller, req.agent, "steer")
    message = sup.compose(caller, req.message, req.files, "steer")
    if runs_elsewhere(sup, g):
        remote.steer(sup, caller, g, message.text)
    else:
        live = live_of(sup, g, "steer")
        sup.ports.delivery.accept(
            caller, live.agent, message.text, "steer", has_result=False, plain=True
        )
    return ToolResult(
        texts.steered(g.label),
        _delivered("steer", g, message),
    )


async def interrupt(sup: Supervising, caller: AgentHandle, req: InterruptRequest) -> ToolResult:
    g = controlled(sup, caller, req.agent, "interrupt")
    message = sup.compose(caller, req.message, req.files, "interrupt")
    if runs_elsewhere(sup, g):
        remote.interrupt(sup, caller, g, message.text)
    else:
        live = live_of(sup, g, "interrupt")
        async with sup.generations.interrupting(live):
            await live.agent.loop.abort(sup.ports.settings().agents.abort_timeout_ms / 1000)
            sup.ports.delivery.accept(
                caller, live.agent, message.text, "followUp", has_result=False, plain=True
            )
    return ToolResult(
        texts.interrupted(g.label),
        _delivered("interrupt", g, message),
    )


def reply(sup: Supervising, caller: AgentHandle, req: ReplyRequest) -> ToolResult:
    g = controlled(sup, caller, req.agent, "reply")
    elsewhere = runs_elsewhere(sup, g)
    live = None if elsewhere else live_of(sup, g, "reply")
    message = sup.compose(caller, req.message, req.files, "reply")
    assert g.ask_id is not None
    reply_id = new_id()
    text = texts.owner_reply(
        request=reply_id,
        ask=g.ask_id,
        assignment=g.id,
        session=g.session_id,
        message=message.text,
    )
    if live is None:
        remote.reply(sup, caller, g, g.ask_id, text)
    else:
        sup.generations.answer(live, text)
    return ToolResult(
        texts.replied(g.label),
        {
            "action": "reply",
            "agent": g.label,
            "request": reply_id,
            "ask": g.ask_id,
            "assignment": g.id,
            "attachments": attachment_details(message.attachments),
        },
    )


async def close(sup: Supervising, caller: AgentHandle, req: CloseRequest) -> ToolResult:
    g = controlled(sup, caller, req.agent, "close")
    cascaded: list[str] = []
    abandoned = await close_generation(sup, g, cascaded)
    return ToolResult(
        texts.closed(
            g.label,
            session=g.session_id,
            cascaded=cascaded,
            abandoned_question=abandoned,
        ),
        {
            "action": "close",
            "agent": g.label,
            "request": g.id,
            "session": g.session_id,
            "cascaded": cascaded,
            "abandonedQuestion": abandoned,
        },
    )


async def close_generation(sup: Supervising, g: GenerationRecord, cascaded: list[str]) -> bool:
    """Close `g`'s own agents first, then `g`; True when a question was abandoned."""
    if runs_elsewhere(sup, g):
        abandoned = await remote.close(sup, g, cascaded)  # its worker closes its agents
        sup.changed()
        return abandoned
    live = sup.generations.live.get(g.id)
    if live is not None:
        # Closing: the results of its agents, which arrive as they close, may wake it,
        # but it no longer ends by itself (`completed`) before it is closed.
        live.ending = True
    try:
        for child in sup.ports.store().generations(owner_id=g.session_id, live=True):
            await close_generation(sup, child, cascaded)
            cascaded.append(child.label)
    except BaseException:
        if live is not None:
            live.ending = False  # not closed after all: it may end by itself again
        raise
    live = sup.generations.live.get(g.id)
    if live is None:
        closed = msgspec.structs.replace(
            g, state="ended", outcome="closed", updated=now_ms(), ended=now_ms()
        )
        sup.ports.store().update_generation(closed, end=True)
        sup.changed()
        return False
    abandoned = sup.generations.close(live)
    await sup.ports.unload(live.agent, sup.ports.settings().agents.abort_timeout_ms / 1000)
    sup.changed()
    return abandoned


# ---- inspect and transcript -----------------------------------------------------------


def inspect(sup: Supervising, caller: AgentHandle, req: InspectRequest) -> ToolResult:
    g = controlled(sup, caller, req.agent, "inspect")
    if runs_elsewhere(sup, g):
        output, truncated, found = remote.inspect(sup, g)
    else:
        live = live_of(sup, g, "inspect")
        output, truncated = live.tail.snapshot()
        found = foreground.of(g.session_id)
    processes = [texts.ForegroundProcess(pid, cmd) for pid, cmd in found]
    text = texts.inspect_text(
        agent=g.label,
        session=g.session_id,
        pane=g.pane or "",
        processes=processes,
        recent_output=output,
        recent_output_truncated=truncated,
    )
    return ToolResult(
        text,
        {
            "action": "inspect",
            "agent": g.label,
            "session": g.session_id,
            "pane": g.pane,
            "recent_output": output,
            "recent_output_truncated": truncated,
            "processes": [{"pid": p.pid, "command": p.command} for p in processes],
        },
    )


def transcript(sup: Supervising, caller: AgentHandle, req: TranscriptRequest) -> ToolResult:
    g = controlled(sup, caller, req.agent, "transcript")
    agent = sup.ports.agents.get(g.session_id)
    entries = (
        agent.session.entries if agent is not None else sup.ports.store().entries(g.session_id)
    )
    body, truncated = render_transcript(transcript_items(entries))
    text = texts.transcript_text(
        agent=g.label, session=g.session_id, transcript=body, truncated=truncated
    )
    return ToolResult(
        text,
        {
            "action": "transcript",
            "agent": g.label,
            "session": g.session_id,
            "transcript_truncated": truncated,
        },
    )


def _delivered(action: str, g: GenerationRecord, message: ComposedMessage) -> dict[str, Any]:
    return {
        "action": action,
        "agent": g.label,
        "request": g.id,
        "attachments": attachment_details(message.attachments),
    }
