"""Every model-facing text of the `agent` tool (Pi Agents face), as pure functions.

The wording is the specification's, to the character; tests compare these
functions with the spec's lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

DESCRIPTION_TEMPLATE = (
    "Create, message, and coordinate Agents. `spawn` creates an owned Agent and sends its "
    "first input; `send` sends an input or a write to a visible Agent; `wait` waits for owned "
    "Agents and returns unread results; `list` finds visible Agents; `abort` stops an owned "
    "Agent's current turn and queued inputs while keeping it available. When an owned Agent "
    "finishes an input while its owner is not waiting for it, the owner receives a "
    "notification naming the Agent and outcome; `wait` returns the result. Owned Agents under "
    "the same root share `${maxConcurrent}` execution slots and a limit of "
    "`${maxOutstanding}` inputs that have not ended. Inputs that start a new turn queue when "
    "all slots are busy; new inputs are rejected at the input limit."
)

PROMPT_SNIPPET = "Create, message, and coordinate Agents"

PROMPT_GUIDELINES: tuple[str, ...] = (
    "Use `agent(action='spawn', name=..., message=...)` for concrete, bounded work with a "
    "clear expected result. Keep the first message self-contained; use `context='fork'` only "
    "when the Agent needs the caller's conversation.",
    "For independent work, start the Agents before waiting and partition tasks into "
    "non-overlapping responsibilities.",
    "Use `agent(action='wait', ...)` when the next step depends on Agent results. Prefer one "
    "longer wait over repeated short polling.",
)

PARAMETER_DESCRIPTIONS: dict[str, str] = {
    "action": "Operation and applicable parameters: `spawn(name, message, cwd?, context?, "
    "model?, thinkingLevel?)`, `send(target, message, deliverAs?)`, `wait(target?, history?, "
    "timeout?)`, `list(query?, state?, limit?, offset?)`, or `abort(target)`.",
    "name": "Name of the new Agent for `spawn`; unique among the caller's Agents.",
    "message": "Non-empty text for `spawn` or `send`.",
    "cwd": "Working directory for `spawn` (default: the caller's current working directory).",
    "context": "Context for `spawn` (default: fresh). fresh starts without the caller's "
    "conversation; fork snapshots it.",
    "model": "Model for `spawn` as provider/modelId (default: the caller's model).",
    "thinkingLevel": "Thinking level for `spawn`: off, minimal, low, medium, high, xhigh, or "
    "max (default: the caller's level).",
    "target": "Agent ID, name, or unique ID prefix for `send`, `wait`, or `abort`. `wait` and "
    "`send` with `deliverAs='write'` also accept an array. When omitted for `wait`, selects all "
    "owned Agents with pending or unread results.",
    "deliverAs": "Delivery for `send` (default: followUp). followUp waits until the "
    "recipient's current turn ends; steer delivers after its current tool calls, before the "
    "next model call; write delivers like steer but never starts a turn and has no result.",
    "history": "Number of most recent read results to return again per selected Agent for "
    "`wait` (default: 0).",
    "timeout": "Maximum seconds for `wait` (default: 30, min: 10, max: 3600). Timeout does not "
    "abort Agents.",
    "query": "Search query for `list`, matching ID, name, cwd, summaries, and user messages. "
    "Case-insensitive; spaces mean AND; `|` means OR.",
    "state": "State for `list`: running, waiting, queued, or idle.",
    "limit": "Maximum Agents returned by `list` (default: 20, max: 200).",
    "offset": "Number of Agents to skip for `list` (default: 0).",
}


def description(max_concurrent: int, max_outstanding: int) -> str:
    return DESCRIPTION_TEMPLATE.replace("${maxConcurrent}", str(max_concurrent)).replace(
        "${maxOutstanding}", str(max_outstanding)
    )


@dataclass(frozen=True, slots=True)
class Shown:
    """An Agent as a reader sees it: its name (None for unnamed roots) and short ID."""

    name: str | None
    short_id: str


def label(a: Shown) -> str:
    """`<name> (<id>)`, or the ID alone for an unnamed root."""
    return a.short_id if a.name is None else f"{a.name} ({a.short_id})"


def labels(agents: Sequence[Shown]) -> str:
    return ", ".join(label(a) for a in agents)


# ---- results ------------------------------------------------------------------


def spawned(a: Shown, queued_slots: int | None) -> str:
    if queued_slots is None:
        return f"Agent {label(a)} started."
    return f"Agent {label(a)} queued: all {queued_slots} slots are busy."


def input_accepted(a: Shown, queued_slots: int | None) -> str:
    if queued_slots is None:
        return f"Input accepted by {label(a)}."
    return f"Input accepted by {label(a)}, queued: all {queued_slots} slots are busy."


def write_accepted(agents: Sequence[Shown]) -> str:
    return f"Write accepted by {labels(agents)}."


def agent_result(a: Shown, outcome: str, text: str, history: bool = False) -> str:
    name_attr = "" if a.name is None else f' name="{a.name}"'
    history_attr = ' history="true"' if history else ""
    return (
        f'<agent-result{name_attr} id="{a.short_id}" status="{outcome}"{history_attr}>\n'
        f"{text}\n</agent-result>"
    )


def still_pending(agents: Sequence[Shown]) -> str:
    return f"Still pending: {labels(agents)}"


STOPPED_WAITING = "Stopped waiting for a new message. Wait again to keep waiting."
NO_RESULTS = "No results."
NO_MATCHING_AGENTS = "No matching Agents."


def results_omitted(agents: Sequence[Shown]) -> str:
    return f"[Results omitted: {labels(agents)}. Use wait with fewer targets.]"


def list_entry(a: Shown, state: str, cwd: str) -> str:
    return f"{label(a)}  {state}  {cwd}"


def list_request(when: str, text: str) -> str:
    return f"  {when}  {text}"


def more_results(remaining: int, next_offset: int) -> str:
    return f"[{remaining} more results. Use offset={next_offset} to continue.]"


def aborted(a: Shown) -> str:
    return f"Agent {label(a)} aborted."


def nothing_to_abort(a: Shown) -> str:
    return f"Agent {label(a)} has no turn or queued inputs."


# ---- errors -------------------------------------------------------------------


def no_match(target: str) -> str:
    return f'No visible Agent matches "{target}". Use list to find Agents.'


def ambiguous(target: str, rows: Sequence[str]) -> str:
    return (
        f'"{target}" matches several Agents:\n'
        + "\n".join(rows)
        + "\n\nRetry with a longer ID prefix."
    )


def name_taken(name: str, short_id: str) -> str:
    return f'Name "{name}" is already used by {short_id}.'


def program_ended(a: Shown) -> str:
    """A message for an offline Agent of a Program: it went offline when its Program ended."""
    return f"Agent {label(a)} is offline for good: its Program has ended."


def input_rejected(outstanding: int) -> str:
    return (
        f"Input rejected: {outstanding} inputs have not ended. Wait for results or abort an Agent."
    )


def not_owned(a: Shown) -> str:
    return f"{label(a)} is not owned by the caller."


def did_not_stop(a: Shown) -> str:
    return f"Agent {label(a)} did not stop within the timeout and may still be running."


# ---- messages -----------------------------------------------------------------


def notification(a: Shown, outcome: str) -> str:
    return f"Agent {label(a)} {outcome}."


def agent_message(sender: Shown, body: str, *, reply_note: bool) -> str:
    name_attr = "" if sender.name is None else f' from="{sender.name}"'
    note = ' note="Reply with send"' if reply_note else ""
    return f'<agent-message{name_attr} id="{sender.short_id}"{note}>\n{body}\n</agent-message>'


# ---- errors of our own (the spec leaves their wording open) ---------------------


def write_to_offline(a: Shown) -> str:
    return (
        f"{label(a)} is offline: a write cannot wake it. "
        "Send an input (followUp or steer) to wake it."
    )


def message_to_self() -> str:
    return "An Agent cannot send a message to itself."


NUL_IN_PATH = "is not a valid path (it holds a NUL byte)"


def invalid(problem: str) -> str:
    return f"Invalid agent call: {problem}"
