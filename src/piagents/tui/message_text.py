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
