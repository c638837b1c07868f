"""The user's inputs accepted while a turn runs and not started yet, above the editor."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import Static

from piagents.harness.events import Input
from piagents.tui.message_text import one_line

WIDTH = 200


class QueuedInputs(Static):
    """One dim line per queued input of the user: `Steer: …` or `Follow-up: …`."""

    DEFAULT_CSS = """
    QueuedInputs { height: auto; padding: 0 1; color: $text-muted; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.lines: tuple[str, ...] = ()
        self.display = False

    def show_inputs(self, inputs: Sequence[Input]) -> None:
        lines = tuple(
            f"{'Steer' if i.delivery == 'steer' else 'Follow-up'}: {one_line(i.text, WIDTH)}"
            for i in inputs
            if i.meta.get("sender") is None
        )
        if lines == self.lines:
            return
        self.lines = lines
        self.update(Text("\n".join(lines)))
        self.display = bool(lines)
