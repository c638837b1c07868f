"""A blocking error, shown until the user dismisses it (the session ownership error)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static


class ErrorScreen(ModalScreen[None]):
    """Dismissed with Enter, Escape, Space or a click."""

    DEFAULT_CSS = """
    ErrorScreen { align: center middle; }
    ErrorScreen > Vertical {
        width: 80%; max-width: 90; height: auto;
        border: heavy $error; background: $surface; padding: 1 2;
    }
    ErrorScreen .title { text-style: bold; color: $text-error; }
    ErrorScreen .hint { color: $text-muted; margin-top: 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,escape,space", "dismiss_error", "Dismiss", priority=True),
    ]

    def __init__(self, title: str, message: str, hint: str = "Press Enter to exit.") -> None:
        super().__init__()
        self.title_text = title
        self.message = message
        self.hint = hint

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self.title_text), classes="title")
            yield Static(Text(self.message), id="error-message")
            yield Static(Text(self.hint), classes="hint")

    def action_dismiss_error(self) -> None:
        self.dismiss(None)

    def on_click(self) -> None:
        self.dismiss(None)
