"""A panel of text rows above the editor (the task panel, the supervision status)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import Static


class RowsPanel(Static):
    """Shows the rows it is given, the first in bold; hidden while it has none or the
    user hid it. Repaints only when a row changed, so updates do not flicker."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.lines: tuple[str, ...] = ()
        self.enabled = True
        self.display = False

    def show_rows(self, lines: Sequence[str]) -> None:
        lines = tuple(lines)
        if lines != self.lines:
            self.lines = lines
            if lines:
                text = Text(lines[0], style="bold", no_wrap=True, overflow="ellipsis")
                for line in lines[1:]:
                    text.append("\n" + line)
                self.update(text)
        self._sync_display()

    def set_enabled(self, enabled: bool) -> None:
        self.enabled = enabled
        self._sync_display()

    def _sync_display(self) -> None:
        visible = self.enabled and bool(self.lines)
        if self.display != visible:
            self.display = visible
