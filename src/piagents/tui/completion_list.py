"""The slash-command completions offered above the editor."""

from __future__ import annotations

from collections.abc import Sequence

from textual.widgets import OptionList
from textual.widgets.option_list import Option

from piagents.tui.commands import Completion


class CompletionList(OptionList):
    """Shown while it has completions; the editor's Tab, arrows and Enter drive it."""

    DEFAULT_CSS = """
    CompletionList {
        height: auto; max-height: 8; border: none; padding: 0 1; display: none;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.items: list[Completion] = []
        self.can_focus = False

    def offer(self, items: Sequence[Completion]) -> None:
        self.items = list(items)
        self.clear_options()
        if not self.items:
            self.display = False
            return
        self.add_options([Option(f"{c.label}  {c.help}".rstrip()) for c in self.items])
        self.highlighted = 0
        self.display = True

    def hide(self) -> None:
        self.offer([])

    def move(self, step: int) -> None:
        if step < 0:
            self.action_cursor_up()
        else:
            self.action_cursor_down()

    @property
    def chosen(self) -> Completion | None:
        index = self.highlighted
        if index is None or index >= len(self.items):
            return None
        return self.items[index]
