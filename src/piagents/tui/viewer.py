"""The agent viewer: one Agent's conversation, live, with the user's own input to it."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Static

from piagents.agent import Agent
from piagents.ai.messages import now_ms
from piagents.read_model import AgentCallError, ReadModel
from piagents.store.records import InputDelivery, SessionRecord
from piagents.tui.agent_list import owners_label
from piagents.tui.changes import follow_changes
from piagents.tui.editor import Editor
from piagents.tui.frames import FrameScheduler
from piagents.tui.progress import ProgressLine
from piagents.tui.supervision_status import Clock
from piagents.tui.transcript import RECENT_ENTRIES, Transcript

LIVE_INTERVAL_S = 0.5  # how often the live output of an Agent run elsewhere is read
LIVE_LINES = 6
# Every key the viewer answers to (its own, its editor's and the app's it passes on).
KEYS: tuple[tuple[str, str], ...] = (
    ("Enter", "sends"),
    ("Alt+Enter", "follow-up"),
    ("Shift+Enter", "new line"),
    ("Esc", "interrupts"),
    ("Ctrl+C", "clears, or closes when empty"),
    ("PgUp/PgDn", "scroll"),
    ("Ctrl+O", "tool output"),
)
HINT = " · ".join(f"{key} {what}" for key, what in KEYS)


class ViewerScreen(Screen[None]):
    """Shows `agent_id` (loaded or not) while the current session keeps running behind it."""

    DEFAULT_CSS = """
    ViewerScreen { layout: vertical; }
    ViewerScreen > #viewer-title { height: 1; padding: 0 1; background: $accent 20%; }
    ViewerScreen > #viewer-hint { height: auto; padding: 0 1; color: $text-muted; }
    ViewerScreen > #viewer-live {
        height: auto; max-height: 8; padding: 0 1; color: $text-muted;
        border-top: solid $accent 30%; display: none;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "interrupt", "Interrupt", priority=True)
    ]

    def __init__(
        self, model: ReadModel, current: Agent, agent_id: str, *, clock: Clock = now_ms
    ) -> None:
        super().__init__()
        self.model = model
        self._unfollow: Callable[[], None] | None = None
        self.current = current
        self.agent_id = agent_id
        self.transcript = Transcript(id="viewer-transcript")
        self.progress = ProgressLine(id="viewer-progress", clock=clock)
        self.editor = Editor(id="viewer-editor", placeholder="Message this Agent as its user")
        self._title = Static(id="viewer-title")
        self._frames = FrameScheduler(self, self._refresh)
        self._label: str | None = None  # the name with its owners: fixed, read once
        self._title_text = ""
        # An Agent another process runs (a managed agent's worker): its conversation
        # is read from the store, then what it commits after the last entry shown.
        self._last_shown: str | None = None
        # While such an Agent works: the last lines of its live output (what its worker
        # last wrote for `inspect`), text that is not committed yet included.
        self._live = Static(id="viewer-live")
        self._live_text = ""

    @property
    def agent(self) -> Agent | None:
        return self.model.agent(self.agent_id)

    def compose(self) -> ComposeResult:
        yield self._title
        yield self.transcript
        yield self.progress
        yield self._live
        yield self.editor
        yield Static(HINT, id="viewer-hint")

    def on_mount(self) -> None:
        agent = self.agent
        if agent is not None:
            self.transcript.follow(self.model, agent)
            self.progress.follow(self.model, agent)
        else:
            self._show_committed()
            self.set_interval(LIVE_INTERVAL_S, self._refresh_live)
        self._unfollow = follow_changes(self.model, self._frames.poke)
        self._refresh_title()
        self.editor.focus()

    def on_unmount(self) -> None:
        self.transcript.unfollow()
        self.progress.unfollow()
        if self._unfollow is not None:
            self._unfollow()
            self._unfollow = None

    def _record(self) -> SessionRecord | None:
        return self.model.session(self.agent_id)

    def _show_committed(self) -> None:
        """What the Agent committed since the last entry shown (all, the first time)."""
        first = self._last_shown is None
        new = self.model.transcript_page(self.agent_id, after=self._last_shown)
        if new:
            self._last_shown = new[-1].id
            self.transcript.show_entries(new, recent=RECENT_ENTRIES if first else None)
            self.transcript.anchor()

    def _refresh_live(self) -> None:
        text = ""
        if self.agent is None and self.transcript.agent is None:
            text = self.model.live_output(self.agent_id, LIVE_LINES)
        if text != self._live_text:
            self._live_text = text
            self._live.update(Text(text))
            self._live.display = bool(text)

    def _refresh(self) -> None:
        """On every change the runtime hears of: the title, and the conversation of an
        Agent that runs elsewhere (its worker pokes this runtime when it commits)."""
        if self.agent is None and self.transcript.agent is None:
            self._show_committed()
        self._refresh_title()

    def _refresh_title(self) -> None:
        if self._label is None:
            record = self._record()
            if record is None:
                return
            me = self.current.session.record
            tree = self.model.tree_sessions(me.root_id or me.id)
            short = self.model.short_id(me, record.id)
            by_id = {r.id: r for r in tree}
            programs = self.model.program_shorts(tree)
            self._label = f"Agent {owners_label(record, by_id, me.id, programs)} ({short})"
        state = self.model.state_of(self.agent_id)
        title = f"{self._label}  {state}"
        if title != self._title_text:
            self._title_text = title
            self._title.update(Text(title))

    # ---- keys ---------------------------------------------------------------

    def on_editor_submitted(self, message: Editor.Submitted) -> None:
        message.stop()
        text = message.text.strip()
        if not text:
            return
        self.editor.clear()
        agent = self.agent
        if agent is None:
            self._wake_and_send(text)
            return
        delivery: InputDelivery = (
            "steer" if self.model.in_turn(agent.id) and not message.follow_up else "followUp"
        )
        try:
            self.model.send(agent, text, delivery)
        except AgentCallError as exc:
            self.transcript.notice(str(exc), error=True)

    @work(group="viewer-send")
    async def _wake_and_send(self, text: str) -> None:
        try:
            await self.model.deliver(self.agent_id, text)
        except AgentCallError as exc:
            self.transcript.notice(str(exc), error=True)
            return
        agent = self.agent
        if agent is not None and self.transcript.agent is None:
            self.transcript.reset()
            self.transcript.follow(self.model, agent)
            self.progress.follow(self.model, agent)

    def on_editor_cleared(self, message: Editor.Cleared) -> None:
        message.stop()
        self.dismiss(None)

    def action_interrupt(self) -> None:
        agent = self.agent
        if agent is not None and self.model.busy(agent.id):
            self._interrupt(agent)

    @work(group="viewer-interrupt")
    async def _interrupt(self, agent: Agent) -> None:
        withdrawn = await self.model.stop(agent)
        texts = [i.text for i in withdrawn]
        if texts:
            current = self.editor.text
            self.editor.set_text("\n\n".join([*texts, current] if current else texts))
        self.transcript.notice("Interrupted.")
