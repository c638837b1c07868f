"""How messages read in the transcript: senders, tool arguments, folded results (pure)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

FOLD_LINES = 8
ARGS_WIDTH = 160
_AGENT_MESSAGE = re.compile(
    r'^<agent-message(?: from="(?P<name>[^"]*)")? id="(?P<id>[^"]*)"(?: note="(?P<note>[^"]*)")?>'
    r"\n(?P<body>.*)\n</agent-message>$",
    re.DOTALL,
)
# The argument that says the most about a call to each built-in tool.
_MAIN_ARGUMENT = {
    "bash": "command",
    "read": "path",
    "write": "path",
    "edit": "path",
    "ls": "path",
    "grep": "pattern",
    "find": "pattern",
}


@dataclass(frozen=True, slots=True)
class AgentMessage:
    """A message another Agent sent, as the recipient's conversation holds it."""

    sender_name: str | None
    sender_id: str
    body: str
    note: str | None = None

    @property
    def sender(self) -> str:
        return (
            self.sender_id if self.sender_name is None else f"{self.sender_name} ({self.sender_id})"
        )


def agent_message(text: str) -> AgentMessage | None:
    """The sender and body of an `agent-message` element, or None for the user's own text."""
    m = _AGENT_MESSAGE.match(text)
    if m is None:
        return None
    return AgentMessage(m.group("name"), m.group("id"), m.group("body"), m.group("note"))


def one_line(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def tool_arguments(name: str, args: Any, width: int = ARGS_WIDTH) -> str:
    """A call's arguments in one line: the main one for built-in tools, else JSON."""
    if not isinstance(args, dict):
        return one_line(json.dumps(args, ensure_ascii=False), width)
    main = _MAIN_ARGUMENT.get(name)
    if main is not None and isinstance(args.get(main), str):
        rest = {k: v for k, v in args.items() if k != main and k not in ("content", "edits")}
        extra = f" {json.dumps(rest, ensure_ascii=False)}" if rest else ""
        return one_line(f"{args[main]}{extra}", width)
    if name == "agent" and isinstance(args.get("action"), str):
        target = args.get("name") or args.get("target")
        head = args["action"] + (f" {_target(target)}" if target else "")
        message = args.get("message")
        return one_line(f"{head}: {message}" if isinstance(message, str) else head, width)
    return one_line(json.dumps(args, ensure_ascii=False), width)


def _target(target: Any) -> str:
    return ", ".join(map(str, target)) if isinstance(target, list) else str(target)


def fold(text: str, expanded: bool, lines: int = FOLD_LINES) -> tuple[str, int]:
    """The text shown for a tool result and how many lines are hidden."""
    parts = text.rstrip("\n").split("\n")
    if expanded or len(parts) <= lines:
        return "\n".join(parts), 0
    return "\n".join(parts[:lines]), len(parts) - lines


def compact_number(n: int) -> str:
    if n < 1000:
        return str(n)
    if n < 10_000:
        return f"{n / 1000:.1f}k"
    if n < 1_000_000:
        return f"{n // 1000}k"
    return f"{n / 1_000_000:.1f}M"


# ---- wait results -----------------------------------------------------------------------

_RESULT_OPENING = re.compile(
    r'<agent-result(?: name="[^"]*")? id="(?P<id>[^"]*)" status="[^"]*"(?: history="true")?>\n'
)
_RESULT_CLOSING = "\n</agent-result>"
_TRUNCATION_NOTICE = re.compile(r"\[Showing lines [^\]\n]*\]")


@dataclass(frozen=True, slots=True)
class WaitResult:
    """One Agent's result as `wait` returned it; `text` is None when it was omitted."""

    name: str | None
    short_id: str
    status: str
    history: bool
    text: str | None

    @property
    def label(self) -> str:
        return self.short_id if self.name is None else f"{self.name} ({self.short_id})"


@dataclass(frozen=True, slots=True)
class WaitView:
    """What a `wait` returned, for reading: its results, then the lines after them
    (pending Agents, a stopped wait, a truncation notice, omitted results)."""

    results: tuple[WaitResult, ...]
    notes: tuple[str, ...]


def wait_view(text: str, details: Any) -> WaitView | None:
    """The results of a `wait` from its details (the result texts) and its text (the short
    IDs the model read, and the lines after the results); None for any other result."""
    if not isinstance(details, dict) or "pending" not in details:
        return None
    records = details.get("results")
    if not isinstance(records, list) or not records:
        return None
    results: list[WaitResult] = []
    tagged = text.startswith("<agent-result")  # else a single answer returned alone
    pos = 0
    for record in records:
        if not isinstance(record, dict):
            return None
        agent_id = str(record.get("id", ""))
        body = record.get("result")
        body = body if isinstance(body, str) else None
        short = agent_id[:8]
        if text.startswith("\n\n", pos):  # the blank line between blocks
            pos += 2
        opening = _RESULT_OPENING.match(text, pos) if tagged and body is not None else None
        if opening is not None:
            short = opening.group("id")
            end = text.find(_RESULT_CLOSING, opening.end() + len(body or ""))
            pos = len(text) if end < 0 else end + len(_RESULT_CLOSING)
        name = record.get("name")
        results.append(
            WaitResult(
                name if isinstance(name, str) else None,
                short,
                str(record.get("state", "")),
                bool(record.get("history", False)),
                body,
            )
        )
    notes: list[str] = []
    if details.get("truncation"):
        cut = list(_TRUNCATION_NOTICE.finditer(text[:pos] if tagged else text))
        if cut:
            notes.append(cut[-1].group(0))
    if tagged:
        notes.extend(line for line in text[pos:].split("\n") if line.strip())
    return WaitView(tuple(results), tuple(notes))


# ---- what a lead's managed agents send it -------------------------------------------------

_EVIDENCE = (
    r"agent=(?P<agent>\S+) definition=(?P<definition>\S+) session=(?P<session>\S+) "
    r"request=\S+"
)
_TERMINAL_RESULT = re.compile(
    rf"^Agent \S+ [^\n]*\.\n{_EVIDENCE} status=(?P<status>\w+)\n(?P<rest>.*)$", re.DOTALL
)
_QUESTION = re.compile(
    rf"^Agent \S+ asks you a question and is blocked until you reply\.\n{_EVIDENCE} ask=\S+\n"
    r"Answer with: [^\n]*\n\nQuestion:\n(?P<question>.*)$",
    re.DOTALL,
)


@dataclass(frozen=True, slots=True)
class ManagedMessage:
    """A managed agent's result (or question) as its lead's conversation holds it."""

    agent: str
    definition: str
    session: str
    status: str  # a result's status, or "asks" for a question
    body: str  # the final answer, the handoff or the question
    error: str | None = None


def managed_message(text: str) -> ManagedMessage | None:
    """The parts of a terminal result or `ask_owner` question delivered to a lead, or None."""
    m = _QUESTION.match(text)
    if m is not None:
        return ManagedMessage(
            m.group("agent"), m.group("definition"), m.group("session"), "asks", m["question"]
        )
    m = _TERMINAL_RESULT.match(text)
    if m is None:
        return None
    head, heading, body = m.group("rest").partition("\n\nFinal answer:\n")
    if not heading:
        head, heading, body = m.group("rest").partition("\n\nHandoff:\n")
    if not heading:
        return None
    error = next((line[7:] for line in head.split("\n") if line.startswith("Error: ")), None)
    return ManagedMessage(
        m.group("agent"), m.group("definition"), m.group("session"), m["status"], body, error
    )
