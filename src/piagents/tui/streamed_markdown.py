"""Markdown that grows at its end, cheaply: settled parts freeze, only the tail re-renders.

Textual's own Markdown widget makes a widget of every block, so a long answer
becomes thousands of widgets to lay out on every frame. Here the text is cut at
blank lines outside code fences into chunks of about `CHUNK_LINES` lines; each
settled chunk is one `Static` holding Rich's Markdown, rendered once.
"""

from __future__ import annotations

import re

from markdown_it.token import Token
from rich.markdown import Markdown as RichMarkdown
from rich.segment import Segment
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget

CHUNK_LINES = 16
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


def answer_markdown(text: str) -> RichMarkdown:
    """`text` as Markdown whose single line breaks stay breaks, as `-p` prints them.

    CommonMark joins the lines of a paragraph (a "soft" break reads as a space);
    models write lines meant as lines (a poem, a list without markers, an address).
    """
    markdown = RichMarkdown(text, hyperlinks=False)
    _keep_line_breaks(markdown.parsed)
    return markdown


def _keep_line_breaks(tokens: list[Token]) -> None:
    for token in tokens:
        if token.type == "softbreak":
            token.type = "hardbreak"
        if token.children:
            _keep_line_breaks(token.children)


def split_settled(text: str, chunk_lines: int = CHUNK_LINES) -> tuple[list[str], str]:
    """`text` as settled chunks of at least `chunk_lines` lines, and the tail still growing.

    A chunk ends after a blank line outside any code fence, so rendering the
    chunks one by one looks like rendering the whole.
    """
    chunks: list[str] = []
    lines = text.split("\n")
    fence: str | None = None
    start = 0
    for i, line in enumerate(lines[:-1]):  # the last line may still be growing
        m = _FENCE.match(line)
        if m is not None:
            marker = m.group(1)[0]
            if fence is None:
                fence = marker
            elif marker == fence:
                fence = None
        elif fence is None and not line.strip() and i + 1 - start >= chunk_lines:
            chunks.append("\n".join(lines[start : i + 1]) + "\n")
            start = i + 1
    return chunks, "\n".join(lines[start:])


class RenderedMarkdown(Widget):
    """Markdown rendered once per text and width, then served line by line.

    A `Static` would render it twice per change (to measure, then to paint).
    """

    DEFAULT_CSS = """
    RenderedMarkdown { height: auto; }
    """

    def __init__(self, text: str = "", *, classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self.text = text
        self._lines: list[Strip] = []
        self._width = -1

    def update(self, text: str) -> None:
        """Show `text`; the screen is laid out again only when the height changes."""
        if text == self.text:
            return
        self.text = text
        height = len(self._lines)
        if self._width > 0 and self.is_attached:
            self._render_lines(self._width)
            self.refresh(layout=len(self._lines) != height)
        else:
            self._width = -1
            self.refresh(layout=True)

    def lines(self, width: int) -> list[Strip]:
        if width != self._width:
            self._render_lines(width)
        return self._lines

    def _render_lines(self, width: int) -> None:
        self._width = width
        source = self.text.strip("\n")
        if not source or width <= 0:
            self._lines = []
            return
        console = self.app.console
        options = console.options.update_width(width)
        segments = console.render(answer_markdown(source), options)
        self._lines = [
            Strip(line).adjust_cell_length(width) for line in Segment.split_lines(segments)
        ]

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.lines(width))

    def render_line(self, y: int) -> Strip:
        width = self.content_size.width
        lines = self.lines(width)
        if y >= len(lines):
            return Strip.blank(width, self.rich_style)
        return lines[y].apply_style(self.rich_style)


class StreamedMarkdown(Vertical):
    """Shows `text`; `append` re-renders only the unsettled tail."""

    DEFAULT_CSS = """
    StreamedMarkdown { height: auto; }
    StreamedMarkdown > .chunk { margin: 0 0 1 0; }
    """

    def __init__(self, text: str = "") -> None:
        super().__init__()
        self.text = text
        chunks, self._tail = split_settled(text)
        self._chunks = [RenderedMarkdown(c, classes="chunk") for c in chunks]
        self._tail_view = RenderedMarkdown(self._tail)

    def compose(self) -> ComposeResult:
        yield from self._chunks
        yield self._tail_view

    def append(self, fragment: str) -> None:
        self.text += fragment
        self._tail += fragment
        chunks, self._tail = split_settled(self._tail)
        if chunks:
            settled = [RenderedMarkdown(c, classes="chunk") for c in chunks]
            self._chunks.extend(settled)
            if self._tail_view.is_attached:  # else compose yields them
                self.mount_all(settled, before=self._tail_view)
        self._tail_view.update(self._tail)

    def set_text(self, text: str) -> None:
        """Replace the whole text (a retried or corrected answer)."""
        if text == self.text:
            return
        for chunk in self._chunks:
            chunk.remove()
        self._chunks = []
        self.text = ""
        self._tail = ""
        self.append(text)
