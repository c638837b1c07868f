"""What each slash command does to the current session."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from piagents.agent import Agent
from piagents.ai.models import THINKING_LEVELS, has_thinking_levels
from piagents.ai.registry import ProviderConfigError
from piagents.counted import counted
from piagents.harness.compaction import CompactionError
from piagents.store.base import StoreError
from piagents.tui.commands import BY_NAME, help_text
from piagents.tui.message_text import one_line
from piagents.tui.problems import no_levels, thinking_note
from piagents.tui.session_picker import SessionPicker

if TYPE_CHECKING:
    from piagents.hosting import RuntimeHost
    from piagents.read_model import ReadModel
    from piagents.tui.transcript import Transcript


class CommandHost(Protocol):
    """What the commands use of the app that runs them (the app is one; tests may pass
    another)."""

    @property
    def root(self) -> Agent | None: ...

    @property
    def host(self) -> RuntimeHost: ...

    @property
    def model(self) -> ReadModel: ...

    @property
    def transcript(self) -> Transcript: ...

    def refresh_status(self, *, root_changed: bool = False) -> None: ...

    def show_root(self, root: Agent) -> None: ...

    def toggle_tasks(self) -> bool: ...

    def open_agents(self) -> None: ...

    def run_worker(
        self,
        work: Any,
        name: str | None = "",
        group: str = "default",
        description: str = "",
        exit_on_error: bool = True,
        start: bool = True,
        exclusive: bool = False,
        thread: bool = False,
    ) -> Any: ...

    def push_screen(
        self,
        screen: Any,
        callback: Any = None,
        wait_for_dismiss: bool = False,
        *,
        mode: str | None = None,
    ) -> Any: ...

    def call_later(self, callback: Any, *args: Any, **kwargs: Any) -> bool: ...

    async def action_quit(self) -> None: ...


class CommandRunner:
    """Runs `/name args` for the app; slow commands run as workers so the UI stays live."""

    def __init__(self, app: CommandHost) -> None:
        self.app = app

    @property
    def root(self) -> Agent:
        assert self.app.root is not None
        return self.app.root

    def say(self, text: str, *, error: bool = False) -> None:
        self.app.transcript.notice(text, error=error)

    def run(self, name: str, args: str) -> None:
        if name not in BY_NAME:
            self.say(f"Unknown command /{name}. Type /help for the list.", error=True)
            return
        getattr(self, f"cmd_{name}")(args)

    # ---- settings of the session -------------------------------------------------------

    def cmd_model(self, args: str) -> None:
        if not args:
            self.say(f"Model: {self.root.model}")
            return
        try:
            self.root.set_model(args)
        except (ValueError, ProviderConfigError) as exc:
            self.say(str(exc), error=True)
            return
        note = thinking_note(self.root.model, self.root.thinking)
        self.say(
            f"Model: {self.root.model} (thinking {self.root.thinking})"
            + (f". {note}" if note else "")
        )
        self.app.refresh_status(root_changed=True)

    def cmd_thinking(self, args: str) -> None:
        model = self.root.model
        levels = has_thinking_levels(model)
        if not args:
            which = f"levels: {', '.join(THINKING_LEVELS)}" if levels else no_levels(model)
            self.say(f"Thinking: {self.root.thinking} ({which})")
            return
        if not levels and args != "off":
            self.say(f"{no_levels(model)}; thinking stays {self.root.thinking}.", error=True)
            return
        try:
            self.root.set_thinking(args)
        except ValueError as exc:
            self.say(str(exc), error=True)
            return
        self.say(f"Thinking: {self.root.thinking}")
        self.app.refresh_status(root_changed=True)

    def cmd_name(self, args: str) -> None:
        if not args:
            self.say(f"Name: {self.root.name or '(none)'}")
            return
        self.root.set_name(args)
        self.say(f"Name: {args}")
        self.app.refresh_status(root_changed=True)

    # ---- sessions ----------------------------------------------------------------------

    def cmd_new(self, args: str) -> None:
        self.app.run_worker(self._switch(None), group="switch", exclusive=True)

    def cmd_resume(self, args: str) -> None:
        sessions = self.app.model.root_sessions(exclude=self.root.id)
        shown = {sid: one_line(text, 120) for sid, text in sessions.latest_requests.items()}

        def chosen(session_id: str | None) -> None:
            if session_id is not None:
                self.app.run_worker(self._switch(session_id), group="switch", exclusive=True)

        self.app.push_screen(SessionPicker(sessions.records, shown), callback=chosen)

    async def _switch(self, session_id: str | None) -> None:
        host = self.app.host
        old = self.root
        try:
            new = await host.open_root(old.cwd, session=session_id)
        except (StoreError, ProviderConfigError, ValueError) as exc:
            self.say(str(exc), error=True)
            return
        self.app.show_root(new)
        if new is not old:
            await host.unload(old)

    def cmd_compact(self, args: str) -> None:
        if self.app.model.busy(self.root.id):
            self.say("Wait for the turn to end (or press Escape) before compacting.", error=True)
            return
        self.app.run_worker(self._compact(args or None), group="compact", exclusive=True)

    async def _compact(self, instructions: str | None) -> None:
        self.say("Compacting…")
        try:
            # Done, it is announced as the root's `Compacted` event: the transcript says
            # "Context compacted (…)".
            entry = await self.root.compact(instructions)
        except (CompactionError, ProviderConfigError, RuntimeError) as exc:
            self.say(str(exc), error=True)
            return
        if entry is None:
            self.say("Nothing to compact yet.")
        self.app.refresh_status(root_changed=True)

    def cmd_export(self, args: str) -> None:
        root = self.root
        path = (
            Path(args).expanduser() if args else Path(root.cwd) / f"pi-agents-{root.id[:8]}.jsonl"
        )
        if not path.is_absolute():
            path = Path(root.cwd) / path
        try:
            n = self.app.model.export(root.id, path)
        except (OSError, StoreError) as exc:
            self.say(f"Export failed: {exc}", error=True)
            return
        self.say(f"Exported {counted(n, 'entry', 'entries')} to {path}")

    # ---- views ----------------------------------------------------------------------------

    def cmd_tasks(self, args: str) -> None:
        shown = self.app.toggle_tasks()
        self.say("Task panel shown." if shown else "Task panel hidden; /tasks shows it.")

    def cmd_agents(self, args: str) -> None:
        self.app.open_agents()

    def cmd_help(self, args: str) -> None:
        self.say(help_text())

    def cmd_quit(self, args: str) -> None:
        self.app.call_later(self.app.action_quit)
