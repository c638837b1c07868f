"""Asking the user whether to trust a project that brings its own agent definitions.

Project definitions (`.pi-agents/agents/*.md`) give managed agents prompts and
tools, so they are used only once the user trusts the project: with
`pi-agents trust`, or by answering this prompt when a lead opens there.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static


def trust_question(project: str, names: list[str]) -> str:
    """The prompt's text: which project, and the definitions it would bring."""
    listed = ", ".join(names)
    return (
        f"The project {project} has agent definitions of its own "
        f"({listed}) in .pi-agents/agents/. They are not used until you trust "
        "this project: they set managed agents' instructions and tools.\n\n"
        "Trust this project?"
    )


class TrustScreen(ModalScreen[bool]):
    """Dismissed with True (y) to trust the project, False (n or Escape) not to."""

    DEFAULT_CSS = """
    TrustScreen { align: center middle; }
    TrustScreen > Vertical {
        width: 80%; max-width: 90; height: auto;
        border: heavy $warning; background: $surface; padding: 1 2;
    }
    TrustScreen .title { text-style: bold; }
    TrustScreen .hint { color: $text-muted; margin-top: 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Trust", priority=True),
        Binding("n,escape", "answer(False)", "Not now", priority=True),
    ]

    def __init__(self, project: Path, names: list[str]) -> None:
        super().__init__()
        self.project = project
        self.names = names

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text("Trust this project's agent definitions?"), classes="title")
            yield Static(Text(trust_question(str(self.project), self.names)), id="trust-question")
            yield Static(Text("y: trust it   n: not now"), classes="hint")

    def action_answer(self, trusted: bool) -> None:
        self.dismiss(trusted)
