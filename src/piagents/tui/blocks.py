"""The pieces of a transcript: user and agent messages, answers, tool calls, notices."""

from __future__ import annotations

from typing import Literal, TypeAlias

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from piagents.ai.messages import AssistantMessage, ToolCall, ToolResultMessage
from piagents.counted import counted
from piagents.tui.message_text import (
    AgentMessage,
    ManagedMessage,
    WaitView,
    fold,
    tool_arguments,
    wait_view,
)
from piagents.tui.streamed_markdown import StreamedMarkdown, answer_markdown

_STATUS_STYLES = {
    "completed": "bold green",
    "failed": "bold red",
    "aborted": "bold yellow",
    "closed": "bold yellow",
    "retired": "bold yellow",
    "lost": "bold red",
}


class UserBlock(Static):
    """The user's own input."""

    DEFAULT_CSS = """
    UserBlock { background: $primary 12%; padding: 0 1; margin: 1 0 0 0; }
    """

    def __init__(self, text: str) -> None:
        super().__init__(Text(text))


class AgentMessageBlock(Static):
    """A message from another Agent, named with its sender."""

    DEFAULT_CSS = """
    AgentMessageBlock {
        border-left: outer $accent; padding: 0 1; margin: 1 0 0 0; background: $accent 8%;
    }
    """

    def __init__(self, message: AgentMessage) -> None:
        text = Text()
        text.append(f"From {message.sender}", style="bold")
        if message.note:
            text.append(f"  · {message.note}", style="dim")
        text.append("\n")
        text.append(message.body)
        super().__init__(text)


NoticeKind: TypeAlias = Literal["info", "warning", "error"]


class ManagedMessageBlock(Static):
    """A lead's managed agent reporting: its result (status, answer, error) or question."""

    DEFAULT_CSS = """
    ManagedMessageBlock {
        border-left: outer $accent; padding: 0 1; margin: 1 0 0 0; background: $accent 8%;
    }
    """

    def __init__(self, message: ManagedMessage) -> None:
        header = Text(f"{message.agent} ({message.definition})", style="bold")
        if message.status == "asks":
            header.append("  asks you, and is blocked until you reply:", style="bold")
        else:
            header.append(f"  {message.status}", style=_STATUS_STYLES.get(message.status, "bold"))
        parts: list[RenderableType] = [header]
        if message.error is not None:
            parts.append(Text(f"Error: {message.error}", style="red"))
        label = "Handoff:" if message.status == "retired" else None
        if label is not None:
            parts.append(Text(label, style="dim"))
        if message.body.strip() and message.body != "(none)":
            parts.append(answer_markdown(message.body))
        parts.append(Text(f"session {message.session}", style="dim"))
        super().__init__(Group(*parts))


class Notice(Static):
    """A line from the UI itself: command results, aborted turns, warnings, errors."""

    DEFAULT_CSS = """
    Notice { color: $text-muted; padding: 0 1; margin: 1 0 0 0; }
    Notice.-warning { color: $text-warning; }
    Notice.-error { color: $text-error; }
    """

    def __init__(self, text: str, *, error: bool = False, kind: NoticeKind = "info") -> None:
        kind = "error" if error else kind
        super().__init__(Text(text), classes="" if kind == "info" else f"-{kind}")


class AssistantBlock(Vertical):
    """An answer: its thinking, dimmed, then its text as Markdown, streamed as it arrives."""

    DEFAULT_CSS = """
    AssistantBlock { height: auto; margin: 1 0 0 0; }
    AssistantBlock > .thinking { color: $text-muted; text-style: italic; padding: 0 1; }
    AssistantBlock > StreamedMarkdown { padding: 0 1; }
    AssistantBlock > .status { color: $text-muted; padding: 0 1; }
    AssistantBlock > .status.-error { color: $text-error; }
    """

    def __init__(self, message: AssistantMessage | None = None) -> None:
        super().__init__()
        self.text = message.text if message is not None else ""
        self.thinking = message.thinking if message is not None else ""
        self._thinking_view = Static(Text(self.thinking), classes="thinking")
        self._thinking_view.display = bool(self.thinking)
        self._markdown = StreamedMarkdown(self.text)
        self._markdown.display = message is None or bool(self.text)
        self._status = Static("", classes="status")
        self._status.display = False
        if message is not None:
            self._show_stop(message)

    def compose(self) -> ComposeResult:
        yield self._thinking_view
        yield self._markdown
        yield self._status

    def append_text(self, chunk: str) -> None:
        self.text += chunk
        self._markdown.append(chunk)

    def append_thinking(self, chunk: str) -> None:
        self.thinking += chunk
        self._thinking_view.update(Text(self.thinking))
        self._thinking_view.display = True

    def restart(self) -> None:
        """A retried stream starts over."""
        self.text = ""
        self.thinking = ""
        self._thinking_view.display = False
        self._markdown.set_text("")

    def finish(self, message: AssistantMessage) -> None:
        """Show the committed message exactly, whatever the stream delivered."""
        if message.thinking != self.thinking:
            self.thinking = message.thinking
            self._thinking_view.update(Text(self.thinking))
            self._thinking_view.display = bool(self.thinking)
        if message.text != self.text:
            self.text = message.text
            self._markdown.set_text(self.text)
        self._markdown.display = bool(self.text)
        self._show_stop(message)

    def _show_stop(self, message: AssistantMessage) -> None:
        if message.stop_reason == "error":
            self._show_status(f"Error: {message.error_message or 'the model failed'}", error=True)
        elif message.stop_reason == "aborted":
            self._show_status("(aborted)")
        elif message.stop_reason == "length":
            self._show_status("(stopped at the output limit)")

    def _show_status(self, text: str, *, error: bool = False) -> None:
        self._status.update(Text(text))
        self._status.set_class(error, "-error")
        self._status.display = True


class ToolBlock(Static):
    """A tool call with its arguments, then its result, folded when long."""

    DEFAULT_CSS = """
    ToolBlock { background: $boost; padding: 0 1; margin: 1 0 0 0; }
    ToolBlock.-error { background: $error 10%; }
    """

    def __init__(
        self, call: ToolCall, result: ToolResultMessage | None = None, *, expanded: bool = False
    ) -> None:
        super().__init__()
        self.call = call
        self.result = result
        self.running = False
        self.expanded = expanded
        if result is not None:
            self.set_class(result.is_error, "-error")

    def on_mount(self) -> None:
        self._refresh_text()

    def start(self) -> None:
        self.running = True
        self._refresh_text()

    def set_result(self, result: ToolResultMessage) -> None:
        self.result = result
        self.running = False
        self.set_class(result.is_error, "-error")
        self._refresh_text()

    def set_expanded(self, expanded: bool) -> None:
        if expanded != self.expanded:
            self.expanded = expanded
            self._refresh_text()

    def on_click(self) -> None:
        self.set_expanded(not self.expanded)

    def _refresh_text(self) -> None:
        text = Text()
        text.append(self.call.name, style="bold")
        args = tool_arguments(self.call.name, self.call.args)
        if args:
            text.append(f"  {args}")
        if self.result is None:
            if self.running:
                text.append("  …", style="dim")
            self.update(text)
            return
        view = (
            wait_view(self.result.text, self.result.details) if self.call.name == "agent" else None
        )
        if view is not None:
            self.update(Group(text, *wait_parts(view, self.expanded)))
            return
        body, hidden = fold(self.result.text, self.expanded)
        if body:
            text.append("\n")
            text.append(body, style="red" if self.result.is_error else "dim")
        if hidden:
            text.append(f"\n{_more(hidden)}", style="italic")
        self.update(text)


def wait_parts(view: WaitView, expanded: bool) -> list[RenderableType]:
    """What `wait` returned, as the reader sees it: a header per Agent (name, short ID,
    status) over its answer as Markdown, then the notes (pending Agents, notices)."""
    parts: list[RenderableType] = []
    for result in view.results:
        header = Text(result.label, style="bold")
        header.append(f"  {result.status}", style=_STATUS_STYLES.get(result.status, "bold"))
        if result.history:
            header.append("  (returned before)", style="dim")
        parts.append(Padding(header, (1, 0, 0, 0)))
        if result.text is None:
            parts.append(Text("  (omitted: not returned by this wait)", style="dim"))
        elif not result.text.strip():
            parts.append(Text("  (no answer)", style="dim"))
        else:
            body, hidden = fold(result.text, expanded)
            parts.append(Padding(answer_markdown(body), (0, 0, 0, 2)))
            if hidden:
                parts.append(Text(f"  {_more(hidden)}", style="italic"))
    if view.notes:
        parts.append(Padding(Text("\n".join(view.notes), style="dim"), (1, 0, 0, 0)))
    return parts


def _more(hidden: int) -> str:
    return f"… {counted(hidden, 'more line')} (click or Ctrl+O to expand)"
