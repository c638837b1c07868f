"""/resume: pick a saved root session, newest first."""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from piagents.store.records import SessionRecord
from piagents.tui.footer import short_path


def session_label(record: SessionRecord, first_request: str | None) -> Text:
    when = datetime.datetime.fromtimestamp(record.updated / 1000).strftime("%Y-%m-%d %H:%M")
    text = Text()
    text.append(record.name or record.id[:8], style="bold")
    text.append(f"  {when}  {short_path(record.cwd)}", style="dim")
    if first_request:
        text.append(f"\n  {first_request}")
    return text


class SessionPicker(ModalScreen[str | None]):
    """Dismisses with the chosen session's id, or None."""

    DEFAULT_CSS = """
    SessionPicker { align: center middle; }
    SessionPicker > Vertical {
        width: 90%; height: 80%; border: round $primary; background: $surface; padding: 0 1;
    }
    SessionPicker .title { text-style: bold; padding: 0 0 1 0; }
    SessionPicker OptionList { height: 1fr; border: none; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Close")]

    def __init__(
        self, sessions: Sequence[SessionRecord], first_requests: dict[str, str] | None = None
    ) -> None:
        super().__init__()
        self.sessions = list(sessions)
        self.first_requests = first_requests or {}

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Resume a session (Enter opens, Escape closes)", classes="title")
            options = [
                Option(session_label(s, self.first_requests.get(s.id)), id=s.id)
                for s in self.sessions
            ]
            if not options:
                options = [Option("No other sessions.", disabled=True)]
            yield OptionList(*options)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
