"""The conversation of one Agent, streamed live from its loop's events."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from textual.containers import VerticalScroll
from textual.widget import Widget

from piagents.agent import Agent
from piagents.ai.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from piagents.counted import counted
from piagents.harness.events import (
    AssistantDelta,
    AssistantRetry,
    Compacted,
    LoopEvent,
    MessageCommitted,
    RunEnded,
    ToolStarted,
)
from piagents.read_model import ReadModel
from piagents.store.records import CompactionEntry, Entry, MessageEntry
from piagents.tui.blocks import (
    AgentMessageBlock,
    AssistantBlock,
    ManagedMessageBlock,
    Notice,
    NoticeKind,
    ToolBlock,
    UserBlock,
)
from piagents.tui.frames import FrameScheduler
from piagents.tui.message_text import agent_message, managed_message

_SHOWN = (AssistantDelta, AssistantRetry, Compacted, MessageCommitted, RunEnded, ToolStarted)
RECENT_ENTRIES = 40  # shown when a conversation opens (a few screens); the rest a page at a time
EARLIER_PAGE = 40


class Transcript(VerticalScroll):
    """Shows an Agent's entries, then follows its loop; bursts of deltas paint once a frame."""

    DEFAULT_CSS = """
    Transcript { height: 1fr; padding: 0 1 1 1; scrollbar-size-vertical: 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.agent: Agent | None = None
        self._unfollow: Callable[[], None] | None = None
        self.expanded = False
        self._pending: list[LoopEvent] = []
        self._frames = FrameScheduler(self, self._flush)
        self._current: AssistantBlock | None = None
        self._tools: dict[str, ToolBlock] = {}
        # Entries not shown yet, before the first one shown: a long conversation opens
        # at its end (mounting thousands of blocks takes seconds) and shows a page more
        # each time the reader reaches the top.
        self._earlier: list[Entry] = []
        self._earlier_notice: Notice | None = None

    def on_mount(self) -> None:
        self.anchor()

    # ---- feeding ----------------------------------------------------------------

    def follow(self, model: ReadModel, agent: Agent) -> None:
        """Show `agent`'s conversation so far and follow it live (its loop's events)."""
        self.unfollow()
        self.show_entries(model.conversation(agent), recent=RECENT_ENTRIES)
        self.agent = agent
        self._unfollow = model.follow(agent.id, self._on_event)

    def unfollow(self) -> None:
        if self._unfollow is not None:
            self._unfollow()
            self._unfollow = None
        self.agent = None
        self._pending.clear()

    def on_unmount(self) -> None:
        self.unfollow()

    def _on_event(self, event: LoopEvent) -> None:
        if isinstance(event, _SHOWN):
            self._pending.append(event)
            self._frames.poke()

    # ---- content ----------------------------------------------------------------

    def reset(self) -> None:
        self.unfollow()
        self._current = None
        self._tools.clear()
        self._earlier = []
        self._earlier_notice = None
        self.remove_children()

    def show_entries(self, entries: Sequence[Entry], *, recent: int | None = None) -> None:
        """Add `entries` at the end; with `recent`, only about that many of the last
        ones, the others shown when the reader scrolls up to them."""
        if recent is not None and len(entries) > recent:
            cut = _page_start(entries, len(entries) - recent)
            self._earlier = [*self._earlier, *entries[:cut]]
            entries = entries[cut:]
        widgets = self._widgets_for(entries)
        if self._earlier and self._earlier_notice is None:
            self._earlier_notice = Notice("")
            widgets.insert(0, self._earlier_notice)
        self._say_earlier()
        if widgets:
            self.mount_all(widgets)

    def show_earlier(self) -> None:
        """Show the page of entries before the first one shown, keeping the view still."""
        if not self._earlier or self._earlier_notice is None:
            return
        cut = _page_start(self._earlier, max(0, len(self._earlier) - EARLIER_PAGE))
        page, self._earlier = self._earlier[cut:], self._earlier[:cut]
        widgets = self._widgets_for(page)
        notice = self._earlier_notice
        shown_first = next((c for c in self.children if c is not notice), None)
        if widgets:
            self.mount_all(widgets, after=notice)
        if not self._earlier:
            self._earlier_notice = None
            notice.remove()
        else:
            self._say_earlier()
        if shown_first is not None:
            # Where the reader was: the newly shown page is above it.
            self.call_after_refresh(self.scroll_to_widget, shown_first, top=True, animate=False)

    def _say_earlier(self) -> None:
        if self._earlier_notice is not None:
            n = len(self._earlier)
            self._earlier_notice.update(
                f"▲ {n:,} earlier {'entry' if n == 1 else 'entries'}: "
                "scroll up or press PageUp at the top to show them."
            )

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value <= 0 < old_value and self._earlier:
            self.call_later(self.show_earlier)

    def scroll_page_up_or_earlier(self) -> None:
        """PageUp: up a page, or at the top, the entries before those shown."""
        if self.scroll_y <= 0 and self._earlier:
            self.show_earlier()
        else:
            self.scroll_page_up()

    def _widgets_for(self, entries: Sequence[Entry]) -> list[Widget]:
        widgets: list[Widget] = []
        for entry in entries:
            if isinstance(entry, MessageEntry):
                widgets.extend(self._blocks_for(entry.message))
            elif isinstance(entry, CompactionEntry):
                widgets.append(Notice(compacted(entry.tokens_before)))
        return widgets

    def notice(self, text: str, *, error: bool = False, kind: NoticeKind = "info") -> None:
        self.mount(Notice(text, error=error, kind=kind))
        self.anchor()

    def set_expanded(self, expanded: bool) -> None:
        """Unfold (or fold) every long tool result."""
        self.expanded = expanded
        for block in self._tools.values():
            block.set_expanded(expanded)

    def _blocks_for(self, message: Message) -> list[Widget]:
        if isinstance(message, UserMessage):
            sent = agent_message(message.text)
            if sent is not None:
                return [AgentMessageBlock(sent)]
            managed = managed_message(message.text)
            return [UserBlock(message.text) if managed is None else ManagedMessageBlock(managed)]
        if isinstance(message, ToolResultMessage):
            block = self._tools.get(message.tool_call_id)
            if block is not None:
                block.set_result(message)
                return []
            # A result whose call is not shown (it came before a compaction).
            call = ToolCall(message.tool_name, {}, message.tool_call_id)
            block = ToolBlock(call, message, expanded=self.expanded)
            self._tools[message.tool_call_id] = block
            return [block]
        out: list[Widget] = []
        if _has_answer(message):
            out.append(AssistantBlock(message))
        out.extend(self._tool_blocks(message))
        return out

    def _tool_blocks(self, message: AssistantMessage) -> list[Widget]:
        blocks: list[Widget] = []
        for call in message.tool_calls:
            block = ToolBlock(call, expanded=self.expanded)
            self._tools[call.id] = block
            blocks.append(block)
        return blocks

    # ---- live events ------------------------------------------------------------

    def _flush(self) -> None:
        """Apply the events of a frame; new widgets are mounted together, in one layout."""
        events, self._pending = self._pending, []
        if not self.is_attached:
            return
        added: list[Widget] = []
        i = 0
        while i < len(events):
            event = events[i]
            if isinstance(event, AssistantDelta) and event.kind != "toolCall":
                j = i
                while (
                    j < len(events)
                    and isinstance(events[j], AssistantDelta)
                    and events[j].kind == event.kind  # type: ignore[union-attr]
                ):
                    j += 1
                chunk = "".join(e.text for e in events[i:j])  # type: ignore[union-attr]
                self._delta(event.kind, chunk, added)
                i = j
                continue
            self._apply(event, added)
            i += 1
        if added:
            self.mount_all(added)

    def _delta(self, kind: str, chunk: str, added: list[Widget]) -> None:
        if self._current is None:
            self._current = AssistantBlock()
            added.append(self._current)
        if kind == "text":
            self._current.append_text(chunk)
        else:
            self._current.append_thinking(chunk)

    def _apply(self, event: LoopEvent, added: list[Widget]) -> None:
        if isinstance(event, AssistantRetry):
            if self._current is not None:
                self._current.restart()
        elif isinstance(event, MessageCommitted):
            added.extend(self._committed(event.message))
        elif isinstance(event, ToolStarted):
            block = self._tools.get(event.call.id)
            if block is None:
                block = ToolBlock(event.call, expanded=self.expanded)
                self._tools[event.call.id] = block
                added.append(block)
            block.start()
        elif isinstance(event, RunEnded) and event.outcome.status == "failed":
            added.append(Notice(f"Error: {event.outcome.answer}", error=True))
        elif isinstance(event, Compacted):
            added.append(Notice(compacted(event.tokens_before)))

    def _committed(self, message: Message) -> list[Widget]:
        if not isinstance(message, AssistantMessage):
            return self._blocks_for(message)
        widgets: list[Widget] = []
        block, self._current = self._current, None
        if block is not None:
            block.finish(message)
        elif _has_answer(message):
            widgets.append(AssistantBlock(message))
        widgets.extend(self._tool_blocks(message))
        return widgets


def _page_start(entries: Sequence[Entry], at: int) -> int:
    """`at`, or the nearest start before it that does not part tool results from the
    message whose calls they answer."""
    while at > 0:
        entry = entries[at]
        if not (isinstance(entry, MessageEntry) and isinstance(entry.message, ToolResultMessage)):
            break
        at -= 1
    return at


def _has_answer(message: AssistantMessage) -> bool:
    return bool(message.text or message.thinking) or message.stop_reason in ("error", "aborted")


def compacted(tokens_before: int) -> str:
    return f"Context compacted ({counted(tokens_before, 'token')} before)."
