"""/agents: the Agents of the current tree, busy first and newest first."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from piagents.agent import Agent
from piagents.agents.listing import one_line
from piagents.agents.program_members import program_mark
from piagents.read_model import ReadModel
from piagents.store.records import SessionRecord
from piagents.tui.changes import follow_changes
from piagents.tui.frames import FrameScheduler

if TYPE_CHECKING:
    pass

REQUEST_WIDTH = 120


@dataclass(frozen=True, slots=True)
class AgentEntry:
    id: str
    label: str  # `<name>`, or `<name> ‹ <owner> ‹ …` when not owned by the current Agent
    short_id: str
    state: str
    first_input: str
    created: int
    where: str = ""  # the process it runs in when not this one (`presence.held_elsewhere`)


def owners_label(
    record: SessionRecord,
    by_id: Mapping[str, SessionRecord],
    current_id: str,
    program_shorts: Mapping[str, str] | None = None,
) -> str:
    """`<name> ‹ <owner> ‹ …` up to (not including) the current Agent; a Program's own
    Agent has its Program for owner: `<name> ‹ Program <id> ‹ <caller> ‹ …`, the
    Program by its short ID in `program_shorts` (else its first 8 characters)."""
    names: list[str] = []
    seen: set[str] = set()
    shown: SessionRecord | None = record
    while shown is not None and shown.id not in seen:
        seen.add(shown.id)
        names.append(shown.name or shown.id[:8])
        program_id = program_mark(shown)
        if program_id is not None:
            short = (program_shorts or {}).get(program_id, program_id[:8])
            names.append(f"Program {short}")
        if shown.owner_id is None or shown.owner_id == current_id:
            break
        shown = by_id.get(shown.owner_id)
    return " ‹ ".join(names)


def agent_entries(
    records: Sequence[SessionRecord],
    current_id: str,
    states: Mapping[str, str],
    shorts: Mapping[str, str],
    first_inputs: Mapping[str, str],
    program_shorts: Mapping[str, str] | None = None,
    where: Mapping[str, str] | None = None,
) -> list[AgentEntry]:
    """The list's rows: busy Agents first, newest first within each group (pure)."""
    by_id = {r.id: r for r in records}
    entries = [
        AgentEntry(
            id=r.id,
            label=owners_label(r, by_id, current_id, program_shorts),
            short_id=shorts.get(r.id, r.id[:8]),
            state=states.get(r.id, "idle"),
            first_input=one_line(first_inputs.get(r.id, ""), REQUEST_WIDTH),
            created=r.created,
            where=(where or {}).get(r.id, ""),
        )
        for r in records
        if r.id != current_id
    ]
    entries.sort(key=lambda e: (e.state == "idle", -e.created, e.id))
    return entries


def tree_entries(model: ReadModel, root: Agent) -> list[AgentEntry]:
    """The entries of `root`'s tree as the runtime and store know them now."""
    tree = model.tree(root)
    return agent_entries(
        tree.records,
        root.id,
        tree.states,
        tree.shorts,
        tree.first_inputs,
        tree.program_shorts,
        tree.where,
    )


def entry_text(entry: AgentEntry) -> Text:
    text = Text()
    text.append(f"{entry.label} ({entry.short_id})", style="bold")
    text.append(f"  {entry.state}", style="dim" if entry.state == "idle" else "")
    if entry.where:
        text.append(f"  in {entry.where}", style="dim")
    if entry.first_input:
        text.append(f"\n  {entry.first_input}", style="dim")
    return text


class AgentListScreen(ModalScreen[str | None]):
    """Dismisses with the id of the Agent to open, or None; follows state changes."""

    DEFAULT_CSS = """
    AgentListScreen { align: center middle; }
    AgentListScreen > Vertical {
        width: 90%; height: 80%; border: round $primary; background: $surface; padding: 0 1;
    }
    AgentListScreen .title { text-style: bold; padding: 0 0 1 0; }
    AgentListScreen OptionList { height: 1fr; border: none; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Close")]

    def __init__(self, model: ReadModel, root: Agent) -> None:
        super().__init__()
        self.model = model
        self.root = root
        self._unfollow: Callable[[], None] | None = None
        self.entries: list[AgentEntry] = []
        self._frames = FrameScheduler(self, self._refresh_entries, delay=0.2)  # reads the store

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Agents (Enter opens, Escape closes)", classes="title")
            yield OptionList()

    def on_mount(self) -> None:
        self._refresh_entries()
        self._unfollow = follow_changes(self.model, self._frames.poke)

    def on_unmount(self) -> None:
        if self._unfollow is not None:
            self._unfollow()
            self._unfollow = None

    def _refresh_entries(self) -> None:
        entries = tree_entries(self.model, self.root)
        if entries == self.entries and entries:
            return
        self.entries = entries
        options = self.query_one(OptionList)
        highlighted = options.highlighted_option.id if options.highlighted_option else None
        options.clear_options()
        if not entries:
            options.add_option(Option("No Agents in this tree yet.", disabled=True))
            return
        options.add_options([Option(entry_text(e), id=e.id) for e in entries])
        ids = [e.id for e in entries]
        options.highlighted = ids.index(highlighted) if highlighted in ids else 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
