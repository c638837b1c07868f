"""The footer: where, which session and model, and what the session has used so far."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from piagents.agent import Agent
from piagents.ai.messages import AssistantMessage, Usage
from piagents.ai.models import ModelRef
from piagents.ai.registry import ProviderRegistry
from piagents.harness.tokens import context_tokens
from piagents.store.records import MessageEntry
from piagents.tui.message_text import compact_number


@dataclass(frozen=True, slots=True)
class Status:
    cwd: str
    session: str | None
    model: str
    thinking: str
    usage: Usage
    context_tokens: int
    context_window: int
    state: str = "idle"

    @property
    def context_percent(self) -> float:
        return 100 * self.context_tokens / self.context_window if self.context_window else 0.0


def context_window(providers: ProviderRegistry, model: ModelRef) -> int:
    """The model's context window, as every part of the UI reads it (the footer, the
    supervision rows): what the runtime's providers say (settings, the server, or the
    table of known models)."""
    return providers.model_info(model).context_window


def status_of(agent: Agent, state: str) -> Status:
    """The footer's facts about a root Agent (reads its entries in memory, not the store)."""
    usage = Usage()
    last = 0
    for entry in agent.session.entries:
        if isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage):
            usage = usage + entry.message.usage
            last = entry.message.usage.total_tokens or last
    return Status(
        cwd=agent.cwd,
        session=agent.name,
        model=str(agent.model),
        thinking=agent.thinking,
        usage=usage,
        context_tokens=last or context_tokens(agent.session.context()),
        context_window=agent.context_window,
        state=state,
    )


def short_path(path: str, home: Path | None = None) -> str:
    home_text = str(home if home is not None else Path.home())
    if path == home_text:
        return "~"
    if home_text not in ("", "/") and path.startswith(home_text + "/"):
        return "~" + path[len(home_text) :]
    return path


def usage_text(s: Status) -> str:
    u = s.usage
    parts = [f"↑{compact_number(u.input)}", f"↓{compact_number(u.output)}"]
    if u.cache_read:
        parts.append(f"R{compact_number(u.cache_read)}")
    if u.cache_write:
        parts.append(f"W{compact_number(u.cache_write)}")
    parts.append(f"${u.cost:.3f}")
    parts.append(f"{s.context_percent:.1f}%/{compact_number(s.context_window)}")
    return " ".join(parts)


class StatusFooter(Static):
    """Two lines: cwd and session name; usage and context on the left, model on the right."""

    DEFAULT_CSS = """
    StatusFooter { height: 2; padding: 0 1; color: $text-muted; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.status: Status | None = None

    def show(self, status: Status) -> None:
        if status != self.status:
            self.status = status
            self.update(self._render_status(status))

    @staticmethod
    def _render_status(s: Status) -> RenderableType:
        grid = Table.grid(expand=True)
        grid.add_column(ratio=1, no_wrap=True, overflow="ellipsis")
        grid.add_column(justify="right", no_wrap=True, overflow="ellipsis")
        where = short_path(s.cwd) + (f" • {s.session}" if s.session else "")
        state = Text("● running", style="bold") if s.state != "idle" else Text("")
        grid.add_row(Text(where), state)
        grid.add_row(Text(usage_text(s)), Text(f"{s.model} • {s.thinking}"))
        return grid
