"""Every model-facing text of the supervision face, as pure functions.

The face is the nine-action `agent` tool of a controller and the `ask_owner`
tool of a managed agent. Where the API document fixes a wording (`agent=`,
`definition=`, `session=`, `request=`, the statuses) it is kept exactly; the
rest is ours, and tests hold every text to the character.

The texts a controller receives share one shape: a sentence, then one line of
`key=value` evidence, then what to do next, then (after a blank line) a
headed body such as the final answer or the question.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from piagents.counted import counted

# ---- the `agent` tool ------------------------------------------------------------

DESCRIPTION = (
    "Delegate work to managed agents and supervise them. "
    "`list` shows the agent definitions you may delegate to and your agents, each with its "
    "state and `available_actions`. "
    "`delegate` starts a new agent from a definition with one task; "
    "`continue` starts a new agent on a saved session (the exact `session` from an agent's "
    "result) with a new task; "
    "`steer` adds to an agent's current assignment at its next safe boundary; "
    "`interrupt` cancels an agent's current operation and continues the same assignment with "
    "your replacement message; "
    "`reply` answers an agent's pending `ask_owner` question; "
    "`close` closes an agent, closing the agents it owns first; "
    "`inspect` shows an agent's recent live output and foreground commands; "
    "`transcript` reads its saved conversation. "
    "Each `delegate` or `continue` is one agent generation with exactly one assignment: an "
    "agent never receives a second assignment, so for follow-up work call `continue` with the "
    "session from its result. `delegate` and `continue` return as soon as the agent is "
    "recorded, not when it finishes; its result arrives later as a message, exactly once, so "
    "do not poll for it. Use `steer`, `interrupt`, `reply`, `close`, `inspect` and "
    "`transcript` only when `list` shows them in the agent's `available_actions`, which is "
    "authoritative; do not infer them from `state`. "
    "`files` (on `delegate`, `continue`, `steer`, `interrupt` and `reply`) are paths resolved "
    "from your working directory: readable UTF-8 files that fit the message limit are "
    "embedded, others are passed as paths. `timeoutMs` (on `delegate` and `continue`) is the "
    "startup budget, an integer from 5001 through 300000. "
    "Do not attach or mention agent instruction files such as `AGENTS.md`, `CLAUDE.md` or "
    "`GEMINI.md` merely because they exist: the agent discovers them itself. Attach one only "
    "when the task requires inspecting, modifying, comparing or transmitting it, the user "
    "requests it, or its instructions would not otherwise reach the agent. Attach a "
    "`SKILL.md` only when the task needs it and the definition does not already provide that "
    "skill. Ordinary relevant source, documentation, configuration and evidence files remain "
    "attachable."
)

PROMPT_SNIPPET = "Delegate work to managed agents and supervise them"

PROMPT_GUIDELINES: tuple[str, ...] = (
    "Use `agent(action='delegate', definition=..., task=...)` for concrete, bounded work with "
    "a clear expected result; make the task self-contained.",
    "After delegating, keep working or end your turn: each agent's result arrives as a "
    "message. Use `list` for state and `available_actions` instead of polling.",
    "For follow-up work on a finished agent's context, call `continue` with the exact "
    "session from its result; for a retired session, delegate a fresh agent instead.",
)

PARAMETER_DESCRIPTIONS: dict[str, str] = {
    "action": "Operation and its fields: `list()`, `delegate(definition, task, label?, cwd?, "
    "files?, fork?, timeoutMs?)`, `continue(session, task, files?, timeoutMs?)`, "
    "`steer(agent, message, files?)`, `interrupt(agent, message, files?)`, "
    "`reply(agent, message, files?)`, `close(agent)`, `inspect(agent)`, or "
    "`transcript(agent)`.",
    "definition": "Name of an agent definition listed by `list`, for `delegate`.",
    "task": "The one assignment for `delegate` or `continue`: self-contained, saying what "
    "result is expected.",
    "label": "Label of the new agent for `delegate`: a lower-case letter, then up to 31 "
    "lower-case letters, digits, `_` or `-` (default: `<definition>-<n>`).",
    "cwd": "Working directory of the new agent for `delegate` (default: yours).",
    "files": "Paths of files for `delegate`, `continue`, `steer`, `interrupt` or `reply`, "
    "resolved from your working directory. UTF-8 files that fit the message limit are "
    "embedded; others are passed as paths.",
    "fork": "For `delegate`: the exact saved session path or full session UUID whose "
    "conversation the new agent starts from (default: a new session).",
    "session": "For `continue`: the exact saved session path or full session UUID, as given "
    "in an agent's result.",
    "timeoutMs": "Startup budget in milliseconds for `delegate` or `continue`: an integer "
    "from 5001 through 300000.",
    "agent": "The exact agent label from `list`, for `steer`, `interrupt`, `reply`, `close`, "
    "`inspect` or `transcript`.",
    "message": "Non-empty text for `steer`, `interrupt` (the replacement instruction) or "
    "`reply` (the answer).",
}

# ---- the `ask_owner` tool ----------------------------------------------------------

ASK_OWNER_DESCRIPTION = (
    "Ask your owner, who gave you your assignment, one question and wait for the answer. "
    "Use it only when you cannot finish your assignment without the owner's decision or "
    "information. It must be the only tool call of its turn. You can ask one question per "
    "assignment, so include everything the owner needs to answer it. You are blocked until "
    "the owner replies; there is no timeout. The answer is the result of this call."
)

ASK_OWNER_PROMPT_SNIPPET = "Ask your owner one question and wait for the answer"

ASK_OWNER_PROMPT_GUIDELINES: tuple[str, ...] = (
    "Call `ask_owner` alone in its turn, at most once per assignment, and only when you "
    "cannot go on without your owner's answer.",
)

ASK_OWNER_PARAMETER_DESCRIPTIONS: dict[str, str] = {
    "question": "The question for your owner: non-empty and self-contained.",
    "files": "Paths of files to attach, resolved from your working directory.",
}

ASK_OWNER_NOT_ALONE = (
    "ask_owner must be the only tool call of its turn. Call it again on its own, or go on "
    "without asking."
)

ASK_OWNER_ALREADY_ASKED = (
    "You have already asked your owner a question in this assignment. Go on with what you "
    "have, and state in your final answer what remains open."
)

ASK_OWNER_NO_OWNER = "ask_owner is only for managed agents: you have no owner to ask."

ASK_OWNER_ENDED = "The assignment has ended; no question can be asked."


# ---- what a managed agent and a controller are told when they start ----------------


def managed_intro(label: object, definition: object) -> str:
    return (
        f"You are the managed agent {label} (definition "
        f"{definition}). Your final answer is your result: it is "
        "delivered to your owner once, when your assignment ends, so make it "
        "complete and self-contained. To ask your owner something you cannot "
        "decide alone, call ask_owner (one question per assignment)."
    )


def roster_snapshot(definition_lines: Sequence[str]) -> str:
    return (
        "Agent definitions you can delegate to (a snapshot; call list for the current "
        "roster and agents):\n" + "\n".join(definition_lines or ["(none)"])
    )


# ---- what the runtime hands to these texts ------------------------------------------

RETIREMENT_NOTICE = (
    "Your context window is nearly full, so this session is being retired: it will not be "
    "continued or forked. Do not start new work. Finish the step you are on so that the work "
    "is coherent, then end your turn with a handoff as your final answer: what is done, what "
    "is left, the files involved, and what a fresh agent needs to know to go on."
)

CLOSED_BEFORE_FINISHED = "the runtime was closed before it finished"  # an aborted end's error
START_FAILED = "start failed"  # the error of a generation whose start was rolled back


def tail_tool_line(name: str, args: str) -> str:
    """A tool call as the recent output (`inspect`, a worker's pane) shows it."""
    return f"\n$ {name} {args}\n"


def worker_banner(agent: str, definition: str, session: str) -> str:
    """A worker's first line of output (its tmux pane, or its log)."""
    return f"pi-agents worker: {agent} ({definition}), session {session}\n"


# Attached files, as appended to a message.

ATTACHED_BY_PATH = "Attached by path, not embedded (read them from disk):"
REFERENCE_REASONS: dict[str, str] = {"binary": "binary", "too_large": "too large to embed"}


def attached_file(path: str, fence: str, body: str) -> str:
    return f"Attached file: {path}\n{fence}\n{body}{fence}"


def attached_reference(path: str, size: int, reason: str) -> str:
    return f"- {path} ({counted(size, 'byte')}, {REFERENCE_REASONS[reason]})"


# The states of a live generation, as `list` shows them (`ended` ones are not listed).
State: TypeAlias = Literal["starting", "working", "blocked", "settling", "unknown", "lost"]
Status: TypeAlias = Literal["completed", "failed", "aborted", "closed", "retired", "lost"]
STATUSES: tuple[Status, ...] = ("completed", "failed", "aborted", "closed", "retired", "lost")


@dataclass(frozen=True, slots=True)
class DefinitionLine:
    """A definition as `list` shows it."""

    name: str
    description: str
    layer: str  # bundled | project | global
    enabled: bool = True
    trusted: bool = True  # False: a project definition of a project the user has not trusted
    delegates_to: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class AgentLine:
    """A managed agent record as `list` shows it."""

    agent: str
    state: State
    available_actions: tuple[str, ...]
    definition: str
    session: str
    request: str | None = None
    stale: bool = False
    parent: str | None = None


@dataclass(frozen=True, slots=True)
class ForegroundProcess:
    """A foreground command of a running shell tool, as `inspect` shows it."""

    pid: int
    command: str


# ---- results of the actions ---------------------------------------------------------


def _evidence(**pairs: str | None) -> str:
    return " ".join(f"{k}={v}" for k, v in pairs.items() if v is not None)


def _arrives_later() -> str:
    return (
        "Its result will arrive later as a message, exactly once; do not poll for it. "
        "Use list for its state and available_actions."
    )


def delegated(
    *, agent: str, definition: str, session: str, request: str, pane: str | None = None
) -> str:
    evidence = _evidence(
        agent=agent, definition=definition, session=session, request=request, pane=pane
    )
    return f"Delegated: {evidence}\n{_arrives_later()}"


def continued(
    *, agent: str, definition: str, session: str, request: str, pane: str | None = None
) -> str:
    evidence = _evidence(
        agent=agent, definition=definition, session=session, request=request, pane=pane
    )
    return f"Continued: {evidence}\n{_arrives_later()}"


def fork_out_of_reach(session: str, *, lead: bool) -> str:
    """`delegate` was given a `fork` the controller may not read."""
    mine = (
        "this lead's session nor one of its agents'"
        if lead
        else ("this agent's session nor one of its own agents'")
    )
    return f"Session {session} is neither {mine}; only those can be forked."


def continue_out_of_reach(session: str, *, lead: bool) -> str:
    """`continue` was given a session that is not one of the controller's agents'."""
    whose = "this lead's agents" if lead else "this agent's own agents"
    return f"Session {session} does not belong to {whose}."


def steered(agent: str) -> str:
    return f"Steered {agent}: your message joins its current assignment at its next safe boundary."


def interrupted(agent: str) -> str:
    return (
        f"Interrupted {agent}: its current operation is being cancelled, and it continues the "
        "same assignment with your message."
    )


def replied(agent: str) -> str:
    return f"Replied to {agent}: it continues its assignment with your answer."


def closed(
    agent: str,
    *,
    session: str | None = None,
    cascaded: Sequence[str] = (),
    abandoned_question: bool = False,
) -> str:
    """`close`: the agents closed first, an abandoned question, and the session kept."""
    parts = [f"Closed {agent}."]
    if cascaded:
        parts.append(f"Its agents were closed first: {', '.join(cascaded)}.")
    if abandoned_question:
        parts.append("Its pending question was abandoned.")
    if session is not None:
        parts.append(f"Its session {session} remains available for continue.")
    return " ".join(parts)


def definition_line_record(record: dict[str, Any]) -> DefinitionLine:
    """A definition as `Roster.records` describes it, for `definition_line`."""
    return DefinitionLine(
        name=str(record["name"]),
        description=str(record.get("description") or ""),
        layer=str(record.get("layer") or ""),
        enabled=bool(record.get("enabled", True)),
        trusted=bool(record.get("trusted", True)),
        delegates_to=tuple(record.get("delegates_to") or ()),
    )


def definition_line(d: DefinitionLine) -> str:
    marks = [d.layer]
    if not d.trusted:
        marks.append("untrusted project: cannot be delegated to")
    if not d.enabled:
        marks.append("disabled")
    if d.delegates_to:
        marks.append(f"delegates to {', '.join(d.delegates_to)}")
    description = d.description or "(no description)"
    return f"- {d.name} ({'; '.join(marks)}): {description}"


def agent_line(a: AgentLine) -> str:
    """`<agent>  <state>  actions=<a,b|none>  definition=<d>  session=<s>[  request=<r>]...`."""
    fields = [
        a.agent,
        a.state,
        f"actions={','.join(a.available_actions) or 'none'}",
        f"definition={a.definition}",
        f"session={a.session}",
    ]
    if a.request is not None:
        fields.append(f"request={a.request}")
    if a.parent is not None:
        fields.append(f"parent={a.parent}")
    if a.stale:
        fields.append("stale")
    return "  ".join(fields)


def list_text(definitions: Sequence[DefinitionLine], agents: Sequence[AgentLine]) -> str:
    """`list`: the definitions roster, then one line per agent record."""
    lines = ["Agent definitions:"]
    lines += [definition_line(d) for d in definitions] or ["(none)"]
    lines += ["", "Agents:"]
    lines += [agent_line(a) for a in agents] or ["(none)"]
    if agents:
        lines += ["", "available_actions are authoritative: use only the actions listed."]
    return "\n".join(lines)


def inspect_text(
    *,
    agent: str,
    session: str,
    pane: str,
    processes: Sequence[ForegroundProcess],
    recent_output: str,
    recent_output_truncated: bool,
) -> str:
    """`inspect`: identity, foreground commands, then the last lines of live output."""
    lines = [_evidence(agent=agent, session=session, pane=pane)]
    if processes:
        lines.append("Foreground commands:")
        lines += [f"- pid {p.pid}: {p.command}" for p in processes]
    else:
        lines.append("Foreground commands: none")
    if not recent_output:
        lines.append("Recent activity: none")
    else:
        cut = ", cut to its last 16 KiB" if recent_output_truncated else ""
        lines += ["", f"Recent activity (last 80 lines{cut}):", recent_output]
    return "\n".join(lines)


def transcript_text(*, agent: str, session: str, transcript: str, truncated: bool) -> str:
    """`transcript`: identity and the `transcript_truncated` flag, then the transcript."""
    lines = [
        f"Transcript of {agent}.",
        _evidence(agent=agent, session=session, transcript_truncated=_flag(truncated)),
    ]
    if truncated:
        lines.append("Parts are omitted where marked with [... ...].")
    lines += ["", transcript or "(no messages yet)"]
    return "\n".join(lines)


def _flag(value: bool) -> str:
    return "true" if value else "false"


# ---- messages the runtime delivers ---------------------------------------------------

_HEADLINES: dict[Status, str] = {
    "completed": "Agent {agent} completed its assignment.",
    "failed": "Agent {agent} failed.",
    "aborted": "Agent {agent} was aborted before it finished its assignment.",
    "closed": "Agent {agent} was closed before it finished its assignment.",
    "retired": "Agent {agent} was retired: its context is full.",
    "lost": "Agent {agent} was lost: its execution ended before it recorded a result.",
}


def terminal_result(
    *,
    agent: str,
    definition: str,
    session: str,
    request: str,
    status: Status,
    final_answer: str,
    error: str | None = None,
) -> str:
    """The one message that tells the owner how a generation ended.

    Delivered exactly once. The session is named twice, the second time as the
    `continue` call to make; a retired session instead asks for a fresh agent.
    """
    if status not in STATUSES:
        raise ValueError(f"unknown result status {status!r}")
    lines = [
        _HEADLINES[status].format(agent=agent),
        _evidence(
            agent=agent, definition=definition, session=session, request=request, status=status
        ),
    ]
    if error is not None:
        lines.append(f"Error: {error}")
    if status == "retired":
        lines.append(
            "This session is retired and cannot be continued or forked. To go on, delegate a "
            "fresh agent and pass it the handoff below and the relevant files."
        )
        heading = "Handoff:"
    else:
        call = json.dumps({"action": "continue", "session": session, "task": "..."})
        lines.append(f"To continue this work later: {call}")
        heading = "Final answer:"
    lines += ["", heading, final_answer if final_answer.strip() else "(none)"]
    return "\n".join(lines)


def question_notification(
    *, agent: str, definition: str, session: str, request: str, ask: str, question: str
) -> str:
    """What the owner receives when its agent calls `ask_owner`."""
    return "\n".join(
        [
            f"Agent {agent} asks you a question and is blocked until you reply.",
            _evidence(
                agent=agent, definition=definition, session=session, request=request, ask=ask
            ),
            f"Answer with: {json.dumps({'action': 'reply', 'agent': agent, 'message': '...'})}",
            "",
            "Question:",
            question,
        ]
    )


def owner_reply(*, request: str, ask: str, assignment: str, session: str, message: str) -> str:
    """What a managed agent receives as the answer to its `ask_owner` question.

    `request` is the reply's own request, `ask` the question's, `assignment`
    the request of the assignment it belongs to, `session` the agent's session.
    """
    return "\n".join(
        [
            "Your owner replied to your question. Continue your assignment.",
            _evidence(request=request, ask=ask, assignment=assignment, session=session),
            "",
            "Reply:",
            message,
        ]
    )
