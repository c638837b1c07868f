"""The recent live output of a managed agent, as a terminal would show it.

The runtime feeds an `OutputTail` every piece of an agent's live output
(streamed assistant text, tool call lines, tool output) and `inspect` takes a
`snapshot`: the last 80 lines, unwrapped, capped at 16 KiB from the end.

Text is applied as a terminal applies it: `\\n` ends a line, `\\r` returns to
the line's start and what follows overwrites it, `\\b` steps back one column,
a tab advances to the next multiple of 8; escape sequences (colours, cursor
and title controls) and other control characters are dropped, even when a
sequence is split across two pieces.

Memory stays bounded whatever is fed: 80 finished lines and the current one,
each cut to its last 16 KiB + 1 characters (enough for the snapshot's cap to
see that it cut something).
"""

from __future__ import annotations

import re
from collections import deque

from piagents.harness.tools.truncation import truncate_tail

RECENT_LINES = 80
RECENT_OUTPUT_LIMIT_BYTES = 16 * 1024
TAB_WIDTH = 8

_ESCAPE = re.compile(
    r"\x1b(?:\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, erasing
    r"|\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC: window titles, hyperlinks
    r"|[ -/]*[0-~])"  # the other escapes: charsets, keypad modes, ...
)
_PARTIAL_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*\x1b?|[ -/]*)\Z")
_MAX_PENDING_ESCAPE = 4096  # longer is not an escape sequence anyone sends: dropped
_OTHER_CONTROLS = re.compile(r"[\x00-\x07\x0b\x0c\x0e-\x1f\x7f]")
_TOKENS = re.compile(r"[\n\r\b\t]|[^\n\r\b\t]+")


class OutputTail:
    """A bounded recorder of one agent's live output."""

    def __init__(
        self, max_lines: int = RECENT_LINES, max_bytes: int = RECENT_OUTPUT_LIMIT_BYTES
    ) -> None:
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self._lines: deque[str] = deque(maxlen=max_lines)
        self._line = ""  # the line the cursor is on
        self._col = 0
        self._pending = ""  # the start of an escape sequence split across pieces
        self._max_line_chars = max_bytes + 1

    def feed(self, text: str) -> None:
        """Apply a piece of output at the cursor."""
        text = self._pending + text
        self._pending = ""
        partial = _PARTIAL_ESCAPE.search(text)
        if partial is not None:
            text = text[: partial.start()]
            if len(partial.group()) <= _MAX_PENDING_ESCAPE:
                self._pending = partial.group()
        text = _OTHER_CONTROLS.sub("", _ESCAPE.sub("", text))
        for token in _TOKENS.findall(text):
            if token == "\n":
                self._lines.append(self._line)
                self._line, self._col = "", 0
            elif token == "\r":
                self._col = 0
            elif token == "\b":
                self._col = max(0, self._col - 1)
            elif token == "\t":
                stop = (self._col // TAB_WIDTH + 1) * TAB_WIDTH
                if stop > len(self._line):
                    self._line += " " * (stop - len(self._line))
                self._col = stop
                self._bound_line()
            else:
                self._write(token)

    def feed_line(self, line: str) -> None:
        """Output `line` on a line of its own (a tool call line after streamed text)."""
        if self._line:
            self.feed("\n")
        self.feed(line + "\n")

    def _write(self, s: str) -> None:
        line, col = self._line, self._col
        self._line = line[:col] + s + line[col + len(s) :]
        self._col = col + len(s)
        self._bound_line()

    def _bound_line(self) -> None:
        excess = len(self._line) - self._max_line_chars
        if excess > 0:
            self._line = self._line[excess:]
            self._col = max(0, self._col - excess)

    def snapshot(self) -> tuple[str, bool]:
        """The last lines down to the last one that is not empty, and whether the byte cap
        cut them; the cap cuts between lines, inside one only when it alone is too long."""
        lines = [*self._lines, self._line]
        while lines and not lines[-1]:  # blank lines below the output show nothing
            lines.pop()
        text = "\n".join(lines[-self.max_lines :])
        cut = truncate_tail(text, max_lines=self.max_lines, max_bytes=self.max_bytes)
        return (cut.text, True) if cut.truncated else (text, False)
