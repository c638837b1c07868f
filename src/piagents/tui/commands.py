"""Slash commands: what they are, how they complete, and what they do."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from piagents.ai.models import THINKING_LEVELS


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    args: str  # a hint such as "<level>"; "" when the command takes nothing
    help: str


COMMANDS: tuple[Command, ...] = (
    Command("model", "<provider/model>", "Show or switch the model"),
    Command("thinking", "<level>", "Show or set the thinking level"),
    Command("new", "", "Start a new session"),
    Command("resume", "", "Pick a session to continue"),
    Command("name", "<name>", "Show or set the session's name"),
    Command("compact", "[instructions]", "Summarise the conversation to free context"),
    Command("tasks", "", "Hide or show the task panel"),
    Command("agents", "", "List the Agents of this tree and open one; a lead manages its own"),
    Command("export", "[file]", "Write the session as JSONL"),
    Command("quit", "", "Quit"),
    Command("help", "", "Show commands and keys"),
)
BY_NAME = {c.name: c for c in COMMANDS}

KEYS: tuple[tuple[str, str], ...] = (
    ("Enter", "send (steer while a turn runs)"),
    ("Alt+Enter", "send as followUp while a turn runs"),
    ("Shift+Enter, Ctrl+J", "new line"),
    ("Escape", "abort the turn; queued messages come back to the editor"),
    ("Ctrl+C", "clear the editor; twice on an empty editor quits"),
    ("Ctrl+O", "fold or unfold long tool results"),
    ("PageUp, PageDown", "scroll the transcript"),
)


@dataclass(frozen=True, slots=True)
class Completion:
    value: str  # the editor's text once accepted
    label: str
    help: str
    submit: bool  # nothing is left to type: accepting it runs it


def parse(text: str) -> tuple[str, str] | None:
    """`/name args` → (name, args); None when the text is not a command."""
    stripped = text.strip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return None
    name, _, args = stripped[1:].partition(" ")
    return name, args.strip()


def completions(
    text: str, models: Sequence[str] = (), levels: Sequence[str] = THINKING_LEVELS
) -> list[Completion]:
    """What the editor offers while the user types a command."""
    if not text.startswith("/") or "\n" in text:
        return []
    name, space, arg = text[1:].partition(" ")
    if not space:
        return [
            Completion(
                f"/{c.name}" + (" " if c.args else ""),
                f"/{c.name}" + (f" {c.args}" if c.args else ""),
                c.help,
                not c.args,
            )
            for c in COMMANDS
            if c.name.startswith(name)
        ]
    choices: Sequence[str] = ()
    if name == "thinking":
        choices = levels
    elif name == "model":
        choices = models
    return [
        Completion(f"/{name} {choice}", choice, "", True)
        for choice in choices
        if choice.startswith(arg) and choice != arg
    ]


def help_text() -> str:
    width = max(len(f"/{c.name} {c.args}") for c in COMMANDS)
    lines = ["Commands:"]
    lines.extend(f"  {f'/{c.name} {c.args}'.ljust(width)}  {c.help}" for c in COMMANDS)
    key_width = max(len(k) for k, _ in KEYS)
    lines.append("Keys:")
    lines.extend(f"  {k.ljust(key_width)}  {what}" for k, what in KEYS)
    return "\n".join(lines)
