"""The multi-line editor: Enter sends, Alt+Enter sends as followUp, Shift+Enter breaks a line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import TextArea


class Editor(TextArea):
    """Where the user types. Sends `Submitted`; Tab and arrows drive completion."""

    DEFAULT_CSS = """
    Editor {
        height: auto; min-height: 3; max-height: 12;
        border: round $primary 60%; padding: 0 1;
        background: $surface;
    }
    Editor:focus { border: round $primary; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c", "clear", "Clear", show=False, priority=True),
        Binding("shift+enter,ctrl+j", "newline", "New line", show=False),
    ]

    @dataclass
    class Submitted(Message):
        editor: Editor
        text: str
        follow_up: bool  # Alt+Enter: after the current turn, not into it

    @dataclass
    class Cleared(Message):
        """Ctrl+C on an empty editor."""

        editor: Editor

    @dataclass
    class CompletionKey(Message):
        """Tab, Up or Down while completions are offered."""

        editor: Editor
        key: str

    def __init__(self, *, id: str | None = None, placeholder: str = "") -> None:
        super().__init__(
            id=id,
            soft_wrap=True,
            show_line_numbers=False,
            tab_behavior="focus",
            highlight_cursor_line=False,
            placeholder=placeholder,
        )
        self.cursor_blink = False  # no timer while idle
        self.completing = False  # set by the owner while completions are shown

    async def _on_key(self, event: events.Key) -> None:
        if event.key in ("enter", "alt+enter"):
            event.stop()
            event.prevent_default()
            if self.completing and event.key == "enter":
                self.post_message(self.CompletionKey(self, "enter"))
                return
            self.post_message(self.Submitted(self, self.text, event.key == "alt+enter"))
            return
        if self.completing and event.key in ("tab", "up", "down"):
            event.stop()
            event.prevent_default()
            self.post_message(self.CompletionKey(self, event.key))
            return
        await super()._on_key(event)

    def action_newline(self) -> None:
        self.insert("\n")

    def action_clear(self) -> None:
        if self.text:
            self.clear()
        else:
            self.post_message(self.Cleared(self))

    def set_text(self, text: str) -> None:
        """Replace the content and put the cursor at its end."""
        self.load_text(text)
        self.move_cursor(self.document.end)
