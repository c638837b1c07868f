"""/agents for a supervision lead: Running, Definitions, Context retirement, Message limits
and Stop all."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, cast

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, OptionList, Static, Switch, TabbedContent, TabPane
from textual.widgets.option_list import Option

from piagents.agent import Agent
from piagents.ai.models import THINKING_LEVELS, ThinkingLevel
from piagents.read_model import ReadModel
from piagents.supervision.definitions import AgentDefinition, DefinitionError, Roster
from piagents.supervision.errors import SupervisionError
from piagents.tui.changes import follow_changes
from piagents.tui.frames import FrameScheduler
from piagents.tui.problems import definition_problems
from piagents.tui.settings_file import SettingsFileError, apply_agents_setting, parse_limit
from piagents.tui.supervision_rows import (
    SupervisionSnapshot,
    definition_row,
    running_row,
    tree_order,
)
from piagents.tui.supervision_status import Clock, take_supervision_snapshot

DEFINITIONS_HINT = "Enter enables or disables · m sets the model · t sets the thinking level"
RETIREMENT_HINT = (
    "When a managed agent reaches the automatic compaction threshold it is retired "
    "instead of compacted: it finishes its coherent work and hands off."
)
LIMITS_HINT = "Bytes, from 1024 to 1048576; Enter writes the value."
STOP_HINT = "Closes every managed agent of this lead (their own agents first), after asking once."


class DefinitionList(OptionList):
    """The roster; `m` and `t` ask for a definition's model and thinking level."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("m", "edit('model')", "Model"),
        Binding("t", "edit('thinking')", "Thinking"),
    ]

    def action_edit(self, field: str) -> None:
        option = self.highlighted_option
        if option is not None and option.id is not None:
            cast(SupervisionScreen, self.screen).edit_definition(option.id, field)


class SupervisionScreen(ModalScreen[str | None]):
    """Dismisses with the session id of the managed agent to focus, or None."""

    DEFAULT_CSS = """
    SupervisionScreen { align: center middle; }
    SupervisionScreen > Vertical {
        width: 90%; height: 85%; border: round $primary; background: $surface; padding: 0 1;
    }
    SupervisionScreen .title { text-style: bold; }
    SupervisionScreen .hint { color: $text-muted; padding: 0 0 1 0; }
    SupervisionScreen TabbedContent { height: 1fr; }
    SupervisionScreen OptionList { height: 1fr; border: none; }
    SupervisionScreen #definition-input { display: none; }
    SupervisionScreen #definition-problems { color: $text-warning; padding: 0 0 1 0; }
    SupervisionScreen #definition-problems.-error { color: $text-error; }
    SupervisionScreen .setting { height: auto; }
    SupervisionScreen .setting > .name { width: 32; padding: 1 1 0 0; }
    SupervisionScreen .setting > Input { width: 24; }
    SupervisionScreen #supervision-message { height: auto; }
    SupervisionScreen #supervision-message.error { color: $error; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Close")]

    def __init__(self, model: ReadModel, lead: Agent, clock: Clock) -> None:
        super().__init__()
        self.model = model  # the lead's agents, definitions and settings
        self._unfollow: Callable[[], None] | None = None
        self.lead = lead
        self.clock = clock
        self.running: list[str] = []  # the rows of Running, to repaint only on a change
        self.message = ""
        self.message_is_error = False
        self._editing: tuple[str, str] | None = None  # (definition, field)
        self._stop_armed = False  # Stop all pressed once: the next press closes
        self._frames = FrameScheduler(self, self._refresh_running, delay=0.2)  # reads the store
        self._snapshot = SupervisionSnapshot(lead.id)

    def compose(self) -> ComposeResult:
        agents = self.model.agents_settings()
        with Vertical():
            yield Static("Managed agents of this lead (Escape closes)", classes="title")
            with TabbedContent(initial="running"):
                with TabPane("Running", id="running"):
                    yield Static("Enter opens an agent's conversation.", classes="hint")
                    yield OptionList(id="running-list")
                with TabPane("Definitions", id="definitions"):
                    yield Static(DEFINITIONS_HINT, classes="hint")
                    yield Static(id="definition-problems")
                    yield DefinitionList(id="definition-list")
                    yield Input(id="definition-input")
                with TabPane("Context retirement", id="retirement"):
                    yield Static(RETIREMENT_HINT, classes="hint")
                    with Horizontal(classes="setting"):
                        yield Static("contextRetirement", classes="name")
                        yield Switch(agents.context_retirement, id="retirement-switch")
                with TabPane("Message limits", id="limits"):
                    yield Static(LIMITS_HINT, classes="hint")
                    with Horizontal(classes="setting"):
                        yield Static("inlineAttachmentLimitBytes", classes="name")
                        yield Input(
                            str(agents.inline_attachment_limit_bytes),
                            type="integer",
                            id="inlineAttachmentLimitBytes",
                        )
                    with Horizontal(classes="setting"):
                        yield Static("mailboxPayloadLimitBytes", classes="name")
                        yield Input(
                            str(agents.mailbox_payload_limit_bytes),
                            type="integer",
                            id="mailboxPayloadLimitBytes",
                        )
                with TabPane("Stop all", id="stop"):
                    yield Static(STOP_HINT, classes="hint")
                    yield Button("Stop all", id="stop-all", variant="error")
            yield Static(id="supervision-message")

    def on_mount(self) -> None:
        self._refresh_running()
        self._refresh_definitions()
        self._unfollow = follow_changes(self.model, self._frames.poke)
        self.set_interval(1.0, self._render_running)
        self.query_one("#running-list").focus()

    def on_unmount(self) -> None:
        if self._unfollow is not None:
            self._unfollow()
            self._unfollow = None

    def say(self, text: str, *, error: bool = False) -> None:
        self.message, self.message_is_error = text, error
        shown = self.query_one("#supervision-message", Static)
        shown.set_class(error, "error")
        shown.update(Text(text))

    def action_cancel(self) -> None:
        if self._editing is not None:
            self._stop_editing()
            return
        self.dismiss(None)

    # ---- Running ------------------------------------------------------------------------

    def _refresh_running(self) -> None:
        self._snapshot = take_supervision_snapshot(self.model, self.lead)
        self._render_running()

    def _render_running(self) -> None:
        """The rows of the last snapshot at the clock's time (the 1 s timer repaints
        elapsed times without reading the store)."""
        now = self.clock()
        ordered = tree_order(self._snapshot)
        rows = [running_row(a, depth, now) for a, depth in ordered]
        if rows == self.running and rows:
            return
        self.running = rows
        options = self.query_one("#running-list", OptionList)
        highlighted = options.highlighted_option.id if options.highlighted_option else None
        options.clear_options()
        if not rows:
            options.add_option(Option("No managed agents.", disabled=True))
            return
        ids = [a.session_id for a, _ in ordered]
        options.add_options([Option(Text(row), id=sid) for row, sid in zip(rows, ids, strict=True)])
        options.highlighted = ids.index(highlighted) if highlighted in ids else 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option_list.id == "running-list":
            self.dismiss(event.option.id)
        elif event.option_list.id == "definition-list" and event.option.id is not None:
            self._toggle_definition(event.option.id)

    # ---- Definitions ------------------------------------------------------------------

    def _roster(self, *, quiet: bool = False) -> Roster | None:
        try:
            return self.model.definitions(self.lead.cwd)
        except SupervisionError as exc:
            if not quiet:  # else the section lists the problems already
                self.say(str(exc), error=True)
            return None

    def _refresh_definitions(self) -> None:
        problems = definition_problems(self.model, self.lead.cwd)
        shown = self.query_one("#definition-problems", Static)
        shown.update(Text("\n".join(p.text for p in problems)))
        shown.set_class(any(p.severity == "error" for p in problems), "-error")
        shown.display = bool(problems)
        options = self.query_one("#definition-list", OptionList)
        highlighted = options.highlighted
        options.clear_options()
        roster = self._roster(quiet=True)
        if roster is None:
            options.add_option(Option("The definitions cannot be read.", disabled=True))
            return
        for record in roster.records():
            trusted = bool(record.get("trusted", True))
            options.add_option(
                Option(
                    Text(definition_row(record)),
                    id=str(record["name"]) if trusted else None,
                    disabled=not trusted,
                )
            )
        if options.option_count:
            options.highlighted = min(highlighted or 0, options.option_count - 1)

    def _toggle_definition(self, name: str) -> None:
        roster = self._roster()
        definition = roster.get(name) if roster is not None else None
        if roster is None or definition is None:
            return
        cwd = self.lead.cwd
        self._write(
            name,
            lambda: self.model.set_definition_enabled(
                cwd, definition, roster, not definition.enabled
            ),
        )

    def edit_definition(self, name: str, field: str) -> None:
        roster = self._roster()
        definition = roster.get(name) if roster is not None else None
        if definition is None:
            return
        self._editing = (name, field)
        editor = self.query_one("#definition-input", Input)
        if field == "model":
            editor.placeholder = f"Model of {name}: provider/model; empty for the default"
            editor.value = definition.model or ""
        else:
            editor.placeholder = (
                f"Thinking of {name}: {'|'.join(THINKING_LEVELS)}; empty for the default"
            )
            editor.value = definition.thinking or ""
        editor.display = True
        editor.focus()

    def _stop_editing(self) -> None:
        self._editing = None
        editor = self.query_one("#definition-input", Input)
        editor.display = False
        self.query_one("#definition-list").focus()

    def _set_definition_field(self, name: str, field: str, text: str) -> None:
        roster = self._roster()
        definition = roster.get(name) if roster is not None else None
        if roster is None or definition is None:
            return
        value: str | None = text.strip() or None
        cwd = self.lead.cwd
        if field == "model":
            self._write(
                name, lambda: self.model.set_definition_model(cwd, definition, roster, value)
            )
            return
        level = cast(ThinkingLevel | None, "off" if value == "false" else value)
        self._write(
            name, lambda: self.model.set_definition_thinking(cwd, definition, roster, level)
        )

    def _write(self, name: str, write: Callable[[], AgentDefinition]) -> None:
        """Write a definition's override (the read model announces it), and say so."""
        try:
            written = write()
        except (DefinitionError, OSError) as exc:
            self.say(str(exc), error=True)
        else:
            state = "enabled" if written.enabled else "disabled"
            self.say(
                f"{name}: {state}, model {written.model or 'default'}, thinking "
                f"{written.thinking or 'default'} (written to {written.path})"
            )
        self._refresh_definitions()

    # ---- settings ---------------------------------------------------------------------

    def on_switch_changed(self, event: Switch.Changed) -> None:
        event.stop()
        try:
            apply_agents_setting(self.model, "contextRetirement", event.value)
        except SettingsFileError as exc:
            self.say(str(exc), error=True)
            with event.switch.prevent(Switch.Changed):
                event.switch.value = not event.value
            return
        self.say(f"Context retirement {'on' if event.value else 'off'}.")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.input.id == "definition-input":
            editing = self._editing
            self._stop_editing()
            if editing is not None:
                self._set_definition_field(*editing, event.value)
            return
        key = event.input.id or ""
        try:
            value = parse_limit(key, event.value)
            apply_agents_setting(self.model, key, value)
        except SettingsFileError as exc:
            self.say(str(exc), error=True)
            return
        self.say(f"{key} = {value}.")

    # ---- Stop all ---------------------------------------------------------------------

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Stop all asks first: the first press names what it would close, the second
        closes it; moving away from the button cancels."""
        event.stop()
        if event.button.id != "stop-all":
            return
        if not self._stop_armed:
            labels = self.model.live_labels(self.lead)
            if not labels:
                self.say("No managed agent to stop.")
                return
            self._stop_armed = True
            event.button.label = f"Confirm: stop {len(labels)}"
            self.say(
                f"Press again to close {len(labels)}: {', '.join(labels)} "
                "(and their own agents). Move away to cancel."
            )
            return
        self._disarm_stop()
        event.button.disabled = True
        self._stop_all()

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        if self._stop_armed and event.widget.id == "stop-all":
            self._disarm_stop()
            self.say("Stop all cancelled.")

    def _disarm_stop(self) -> None:
        self._stop_armed = False
        self.query_one("#stop-all", Button).label = "Stop all"

    @work(group="stop-all", exclusive=True)
    async def _stop_all(self) -> None:
        try:
            closed, errors = await self.model.stop_all(self.lead)
        finally:
            self.query_one("#stop-all", Button).disabled = False
        parts = [f"Stopped {len(closed)}: {', '.join(closed)}."] if closed else []
        if errors:
            parts.append("Not stopped: " + "; ".join(errors))
        self.say(" ".join(parts) or "No managed agent to stop.", error=bool(errors))
        self._refresh_running()
