"""The interactive terminal UI: one root Agent's transcript, task panel, editor and footer."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual import work
from textual.actions import SkipAction
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import TextArea

from piagents.agent import Agent
from piagents.ai.messages import now_ms
from piagents.ai.models import THINKING_LEVELS, has_thinking_levels
from piagents.events import AgentLoopEvent, RuntimeEvent
from piagents.harness.events import AssistantDelta
from piagents.hosting import HostFailure, RootOpener, RuntimeHost, open_in_cwd
from piagents.read_model import AgentCallError
from piagents.runtime import Runtime
from piagents.store.records import InputDelivery
from piagents.tui.agent_list import AgentListScreen
from piagents.tui.changes import follow_changes
from piagents.tui.command_runner import CommandRunner
from piagents.tui.commands import completions, parse
from piagents.tui.completion_list import CompletionList
from piagents.tui.editor import Editor
from piagents.tui.error_screen import ErrorScreen
from piagents.tui.footer import StatusFooter, status_of
from piagents.tui.frames import FrameScheduler
from piagents.tui.keys import enable_alt_enter
from piagents.tui.problems import definition_problems, session_problems
from piagents.tui.progress import ProgressLine
from piagents.tui.queued import QueuedInputs
from piagents.tui.supervision_screen import SupervisionScreen
from piagents.tui.supervision_status import Clock, SupervisionStatus, take_supervision_snapshot
from piagents.tui.task_panel import TaskPanel, take_snapshot
from piagents.tui.task_rows import task_rows
from piagents.tui.transcript import Transcript
from piagents.tui.trust_screen import TrustScreen
from piagents.tui.viewer import ViewerScreen

EXIT_OK, EXIT_FAILED = 0, 1


class PiAgentsApp(App[int]):
    """Shows the root its host opens, and has the host close it on exit. A runtime (not
    yet entered) and `open_root` stand for the host made of them."""

    TITLE = "pi-agents"
    CSS = """
    Screen { layout: vertical; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "interrupt", "Interrupt", show=False),
        Binding("ctrl+o", "toggle_tools", "Tool output", show=False),
        Binding("pageup", "scroll_transcript(-1)", show=False, priority=True),
        Binding("pagedown", "scroll_transcript(1)", show=False, priority=True),
    ]

    def __init__(
        self,
        host: RuntimeHost | Runtime,
        open_root: RootOpener = open_in_cwd,
        *,
        clock: Clock = now_ms,
    ) -> None:
        super().__init__()
        enable_alt_enter()
        # The runtime's life cycle and the root's opening are the host's.
        self.host = host if isinstance(host, RuntimeHost) else RuntimeHost(host, open_root)
        self.model = self.host.read_model  # what the panels read; events say when
        self._unfollow: list[Callable[[], None]] = []
        self._unlisten_root: Callable[[], None] | None = None
        self.root: Agent | None = None
        self._frames = FrameScheduler(self, self.refresh_status)
        self._quit_armed = False
        self._root_changed = True  # the footer reads the root's entries only after a change
        self.transcript = Transcript(id="transcript")
        self.progress = ProgressLine(id="progress", clock=clock)
        self.task_panel = TaskPanel(id="tasks")
        self.clock = clock  # elapsed times (injectable for snapshots)
        self.supervision_status = SupervisionStatus(id="supervision", clock=clock)
        # A lead's managed agents are read from the store: at most ten times a second.
        self._supervision_frames = FrameScheduler(self, self.refresh_supervision, delay=0.1)
        self.queued = QueuedInputs(id="queued")
        self.completion_list = CompletionList(id="completions")
        self.editor = Editor(id="editor", placeholder="Ask anything; / for commands")
        self.footer = StatusFooter(id="footer")
        self.commands = CommandRunner(self)

    def compose(self) -> ComposeResult:
        yield self.transcript
        yield self.progress
        yield self.task_panel
        yield self.supervision_status
        yield self.queued
        yield self.completion_list
        yield self.editor
        yield self.footer

    @property
    def runtime(self) -> Runtime:
        """The runtime the host holds (for tests and embedders; the App reads it only
        through the read model)."""
        return self.host.runtime

    # ---- runtime lifecycle ----------------------------------------------------------

    async def on_mount(self) -> None:
        self.editor.focus()
        root = await self.host.start(self._runtime_stopped)
        if isinstance(root, HostFailure):
            self._fail(root.title, root.message)
            return
        self._unfollow = [
            follow_changes(self.model, self._frames.poke),
            follow_changes(self.model, self._supervision_frames.poke),
        ]
        self.show_root(root)
        self._ask_trust(root)

    def _ask_trust(self, root: Agent) -> None:
        """A lead opened in a project whose own definitions are not trusted yet: ask,
        and pass the answer on to the host."""
        question = self.host.trust_question(root)
        if question is None:
            return

        def answered(trusted: bool | None) -> None:
            notice = self.host.answer_trust(question, trusted)
            self.transcript.notice(notice.text, error=notice.kind == "error")
            if trusted and notice.kind != "error":
                for problem in definition_problems(self.model, root.cwd):  # now they count
                    self.transcript.notice(problem.text, kind=problem.severity)

        self.push_screen(TrustScreen(question.project, list(question.untrusted)), callback=answered)

    def _runtime_stopped(self, failure: HostFailure) -> None:
        self.call_later(self._fail, failure.title, failure.message)

    def _fail(self, title: str, message: str) -> None:
        """Show an error until the user dismisses it, then exit."""

        async def leave(_: None) -> None:
            await self.close_runtime()
            self.exit(EXIT_FAILED)

        self.push_screen(ErrorScreen(title, message), callback=leave)

    async def close_runtime(self) -> None:
        """Stop following the root, then have the host take every Agent offline and close
        the store; safe to call twice."""
        self._unlisten()
        for unfollow in self._unfollow:
            unfollow()
        self._unfollow = []
        self.transcript.unfollow()
        self.progress.unfollow()
        await self.host.stop()

    async def on_unmount(self) -> None:
        await self.close_runtime()

    async def action_quit(self) -> None:
        await self.close_runtime()
        self.exit(EXIT_OK)

    # ---- the root ----------------------------------------------------------------------

    def show_root(self, root: Agent) -> None:
        """Make `root` the current Agent: its transcript, panel and footer."""
        self._unlisten()
        self.root = root
        self._unlisten_root = self.model.subscribe(self._on_root_event)
        self.transcript.reset()
        self.transcript.follow(self.model, root)
        self.progress.follow(self.model, root)
        self._show_problems(root)
        self.refresh_status(root_changed=True)
        self.refresh_supervision()

    def _show_problems(self, root: Agent) -> None:
        """Settings and extension warnings, a thinking level the model cannot use and a
        lead's definition problems, where the conversation now stands (they name what
        to fix; the defaults are used meanwhile)."""
        for problem in session_problems(self.model, root):
            self.transcript.notice(problem.text, kind=problem.severity)

    def _unlisten(self) -> None:
        if self._unlisten_root is not None:
            self._unlisten_root()
            self._unlisten_root = None

    def _on_root_event(self, event: RuntimeEvent) -> None:
        root = self.root
        if (
            isinstance(event, AgentLoopEvent)
            and root is not None
            and event.agent_id == root.id
            and not isinstance(event.event, AssistantDelta)
        ):
            self._root_changed = True
            self._frames.poke()

    def refresh_status(self, *, root_changed: bool = False) -> None:
        """Repaint the task panel, the footer and the queued inputs from the runtime."""
        root = self.root
        if root is None:
            return
        # A lead's managed agents show in the supervision status instead.
        lead = self.model.is_lead(root)
        rows = [] if lead else task_rows(take_snapshot(self.model, root), self.panel_rows())
        self.task_panel.show_rows(rows)
        state = self.model.state_of(root.id)
        shown = self.footer.status
        if root_changed or self._root_changed or shown is None or shown.state != state:
            self._root_changed = False
            self.footer.show(status_of(root, state))
            self.queued.show_inputs(self.model.queued_inputs(root.id))

    def refresh_supervision(self) -> None:
        """Repaint the supervision status: a lead's managed agents, else nothing."""
        root = self.root
        if root is None or self.host.closing or not self.model.is_lead(root):
            self.supervision_status.show_snapshot(None, None)
            return
        snapshot = take_supervision_snapshot(self.model, root)
        self.supervision_status.show_snapshot(snapshot, self.panel_rows())

    def panel_rows(self) -> int:
        """Rows the task panel may use: about a quarter of the screen."""
        return max(3, (self.size.height - 8) // 4)

    def on_resize(self) -> None:
        self._frames.poke()
        self._supervision_frames.poke()

    # ---- the editor --------------------------------------------------------------------

    def on_editor_submitted(self, message: Editor.Submitted) -> None:
        text = message.text.strip()
        if not text or self.root is None:
            return
        self._hide_completions()
        self.editor.clear()
        command = parse(text)
        if command is not None:
            self.commands.run(*command)
            return
        root = self.root
        delivery: InputDelivery = (
            "steer" if self.model.in_turn(root.id) and not message.follow_up else "followUp"
        )
        try:
            self.model.send(root, text, delivery)
        except (AgentCallError, RuntimeError) as exc:
            self.transcript.notice(str(exc), error=True)
        self.transcript.anchor()

    def on_text_area_changed(self, message: TextArea.Changed) -> None:
        if message.text_area is not self.editor:
            return
        self._quit_armed = False
        root = self.root
        models = [str(root.model)] if root is not None else []
        levels = THINKING_LEVELS if root is None or has_thinking_levels(root.model) else ("off",)
        self.completion_list.offer(completions(self.editor.text, models, levels))
        self.editor.completing = self.completion_list.display

    def _hide_completions(self) -> None:
        self.completion_list.hide()
        self.editor.completing = False

    def on_editor_completion_key(self, message: Editor.CompletionKey) -> None:
        if message.key in ("up", "down"):
            self.completion_list.move(-1 if message.key == "up" else 1)
            return
        chosen = self.completion_list.chosen
        if chosen is None:
            return
        typed_in_full = chosen.value.rstrip() == self.editor.text.rstrip()
        if message.key == "enter" and (chosen.submit or typed_in_full):
            self.editor.post_message(Editor.Submitted(self.editor, chosen.value, False))
            return
        self.editor.set_text(chosen.value)

    def on_editor_cleared(self, message: Editor.Cleared) -> None:
        if self._quit_armed:
            self.call_later(self.action_quit)
            return
        self._quit_armed = True
        self.notify("Press Ctrl+C again to quit.", timeout=3)

    # ---- keys --------------------------------------------------------------------------

    def action_interrupt(self) -> None:
        if self.completion_list.display:
            self._hide_completions()
            return
        root = self.root
        if root is not None and self.model.busy(root.id):
            self._interrupt(root)

    @work(group="interrupt")
    async def _interrupt(self, root: Agent) -> None:
        withdrawn = await self.model.stop(root)
        texts = [i.text for i in withdrawn]
        if texts:
            current = self.editor.text
            self.editor.set_text("\n\n".join([*texts, current] if current else texts))

    def shown_transcript(self) -> Transcript | None:
        """The transcript on screen: the main one, a viewer's, or none (a list or dialog
        is open, and the keys are its own)."""
        screen = self.screen
        if isinstance(screen, ViewerScreen):
            return screen.transcript
        return self.transcript if screen is self.screen_stack[0] else None

    def action_toggle_tools(self) -> None:
        transcript = self.shown_transcript()
        if transcript is None:
            raise SkipAction()
        transcript.set_expanded(not transcript.expanded)

    def action_scroll_transcript(self, direction: int) -> None:
        transcript = self.shown_transcript()
        if transcript is None:
            raise SkipAction()  # PageUp/PageDown page the open list instead
        if direction < 0:
            transcript.scroll_page_up_or_earlier()
        else:
            transcript.scroll_page_down()

    # ---- screens -----------------------------------------------------------------------

    def toggle_tasks(self) -> bool:
        enabled = not self.task_panel.enabled
        self.task_panel.set_enabled(enabled)
        self.supervision_status.set_enabled(enabled)
        return enabled

    def open_agents(self) -> None:
        root = self.root
        if root is None:
            return

        def chosen(agent_id: str | None) -> None:
            if agent_id is not None:
                self.open_viewer(agent_id)

        if self.model.is_lead(root):
            self.push_screen(SupervisionScreen(self.model, root, self.clock), callback=chosen)
            return
        self.push_screen(AgentListScreen(self.model, root), callback=chosen)

    def open_viewer(self, agent_id: str) -> None:
        if self.root is not None:
            self.push_screen(ViewerScreen(self.model, self.root, agent_id, clock=self.clock))
