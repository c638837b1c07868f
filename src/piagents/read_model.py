"""What a front end reads of a runtime: snapshots of a tree, a roster, a transcript page
and a lead's managed agents, plus the few requests a user makes. Fed by the same
state the event stream announces; front ends subscribe to events and read here.

The runtime builds one (`Runtime.read_model`) from its collaborators; nothing here is
a copy that could go stale: every call reads the runtime's state of now. What a user
changes here (a setting, a definition's override) is used and announced from then on.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from piagents.agents.coordinator import AgentCallError
from piagents.agents.program_members import program_mark
from piagents.ai.models import ModelRef, ThinkingLevel
from piagents.ai.registry import ProviderRegistry
from piagents.config import LIVE_AGENTS_FIELDS, AgentsSettings, Settings
from piagents.events.hub import EventHub, Listener
from piagents.events.records import DefinitionsChanged, SettingsChanged
from piagents.events.states import StateTracker
from piagents.export import export_jsonl
from piagents.harness.events import Input, LoopEvent, Phase
from piagents.presence import held_elsewhere
from piagents.programs.addressing import shown_ids
from piagents.store.base import Store
from piagents.store.records import (
    Entry,
    GenerationRecord,
    InputDelivery,
    ProgramKind,
    SessionRecord,
)
from piagents.supervision.definitions import (
    AgentDefinition,
    DefinitionReport,
    Roster,
    survey,
    write_global_override,
)
from piagents.supervision.errors import SupervisionError
from piagents.supervision.trust import TrustError, is_trusted

if TYPE_CHECKING:
    from piagents.agent import Agent
    from piagents.agents.coordinator import Accepted, Coordinator
    from piagents.supervision.supervisor import Supervisor

__all__ = [
    "AgentCallError",
    "DefinitionSurvey",
    "ManagedAgent",
    "ProgramEntry",
    "ReadModel",
    "RootSessions",
    "RosterEntry",
    "TreeSnapshot",
]


@dataclass(frozen=True, slots=True)
class RosterEntry:
    """One loaded owned Agent of a tree, as the task panel shows it."""

    id: str
    owner_id: str | None
    name: str | None
    short_id: str
    state: str
    queued: int
    program_id: str | None = None  # the Program it belongs to (its own Agents and those under)


@dataclass(frozen=True, slots=True)
class TreeSnapshot:
    """Every session of a tree (loaded or not), with states, short ids as the reader
    sees them and each one's first input."""

    records: tuple[SessionRecord, ...]
    states: Mapping[str, str]
    shorts: Mapping[str, str]
    first_inputs: Mapping[str, str]
    # The Program each of a Program's Agents (and each Agent under one) belongs to.
    programs: Mapping[str, str] = dataclasses.field(default_factory=dict)
    # Those Programs' short IDs among their callers' Programs (`addressing.shown_ids`).
    program_shorts: Mapping[str, str] = dataclasses.field(default_factory=dict)
    where: Mapping[str, str] = dataclasses.field(default_factory=dict)  # run elsewhere


@dataclass(frozen=True, slots=True)
class ProgramEntry:
    """One running Program of a tree, as the task panel shows it under its caller."""

    id: str
    caller_id: str
    short_id: str  # among its caller's Programs (`addressing.shown_ids`)
    background: bool
    kind: ProgramKind = "script"  # a script of the `program` tool, or an SDK scope


@dataclass(frozen=True, slots=True)
class ManagedAgent:
    """One live generation of a lead's tree, as the supervision widget needs it."""

    request: str  # the generation's id
    session_id: str
    owner_id: str  # the lead, or the delegating agent's session
    label: str
    state: str  # one of supervision_rows.COUNTED
    created: int  # ms since the epoch
    model: str
    thinking: str
    tokens: int | None = None  # context tokens in use; None when not known
    context_window: int = 0


@dataclass(frozen=True, slots=True)
class RootSessions:
    """Saved root sessions, newest first, each with the text of its latest request
    (those with none are not in `latest_requests`)."""

    records: tuple[SessionRecord, ...]
    latest_requests: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class DefinitionSurvey:
    """What discovery finds for a lead working in a directory (it never raises), and why
    no project is trusted when the trust file cannot be read."""

    report: DefinitionReport
    trust_error: str | None = None


@dataclass(frozen=True, slots=True)
class SettingsPort:
    """The settings a runtime uses now, and how a front end's change replaces them."""

    current: Callable[[], Settings]
    replace: Callable[[Settings], None]
    warnings: Callable[[], tuple[str, ...]]  # settings and extension problems


class ReadModel:
    """Reads for front ends, and the requests their users make."""

    def __init__(
        self,
        agents: Mapping[str, Agent],
        states: StateTracker,
        store: Callable[[], Store],
        coordinator: Coordinator,
        supervisor: Supervisor,
        providers: ProviderRegistry,
        hub: EventHub,
        *,
        home: Path,
        settings: SettingsPort,
    ) -> None:
        self._agents = agents
        self._states = states
        self._store = store
        self._coordinator = coordinator
        self._supervisor = supervisor
        self._providers = providers
        self._hub = hub
        self._home = home
        self._settings = settings

    @property
    def home(self) -> Path:
        """The runtime's home: its settings file and the global agent definitions."""
        return self._home

    # ---- events -----------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Every runtime event from now on (`Runtime.subscribe`); returns its unsubscribe."""
        return self._hub.subscribe(listener)

    def follow(self, agent_id: str, listener: Callable[[LoopEvent], None]) -> Callable[[], None]:
        """The loop events of one Agent only (a transcript's); returns what stops them."""
        return self._hub.follow(agent_id, listener)

    # ---- Agents ---------------------------------------------------------------------

    def agent(self, agent_id: str) -> Agent | None:
        """The Agent when it is loaded here."""
        return self._agents.get(agent_id)

    def session(self, agent_id: str) -> SessionRecord | None:
        agent = self._agents.get(agent_id)
        return agent.session.record if agent is not None else self._store().get_session(agent_id)

    def state_of(self, agent_id: str) -> str:
        """running, waiting, queued or idle (idle when not loaded here)."""
        return self._coordinator.state_of(agent_id)

    def conversation(self, agent: Agent) -> Sequence[Entry]:
        """A loaded Agent's entries so far, as its session holds them (no store read)."""
        return agent.session.entries

    def phase(self, agent_id: str) -> Phase:
        """Its loop's phase: idle, queued (for a slot) or running."""
        agent = self._agents.get(agent_id)
        return agent.loop.phase if agent is not None else "idle"

    def queued_inputs(self, agent_id: str) -> list[Input]:
        agent = self._agents.get(agent_id)
        return agent.loop.queued_inputs() if agent is not None else []

    def busy(self, agent_id: str) -> bool:
        agent = self._agents.get(agent_id)
        return agent is not None and agent.loop.busy

    def in_turn(self, agent_id: str) -> bool:
        agent = self._agents.get(agent_id)
        return agent is not None and agent.loop.in_turn

    def tree_sessions(self, root_id: str) -> list[SessionRecord]:
        """The owned sessions of a tree, as the store has them (newest first)."""
        return self._store().list_sessions(root_id=root_id)

    def short_id(self, reader: SessionRecord, agent_id: str) -> str:
        return self._coordinator.short_map(reader).get(agent_id, agent_id[:8])

    def roster(self, root: Agent) -> tuple[RosterEntry, ...]:
        """The loaded owned Agents of `root`'s tree, in the order they were loaded; reads
        only that tree's Agents."""
        shorts = self._coordinator.short_map(root.session.record)
        out = []
        for agent_id in self._states.members(root.id):
            agent = self._agents.get(agent_id)
            if agent is None:
                continue
            record = agent.session.record
            if record.is_root or record.root_id != root.id:
                continue
            out.append(
                RosterEntry(
                    id=agent_id,
                    owner_id=record.owner_id,
                    name=record.name,
                    short_id=shorts.get(agent_id, agent_id[:8]),
                    state=self._coordinator.state_of(agent_id),
                    queued=len(agent.loop.queued_inputs()),
                    program_id=self._coordinator.program_of(record),
                )
            )
        return tuple(out)

    def running_programs(self, root: Agent) -> tuple[ProgramEntry, ...]:
        """The Programs running for the loaded Agents of `root`'s tree (root first, then in
        the order they were loaded), oldest first for each caller."""
        store = self._store()
        out: list[ProgramEntry] = []
        for caller_id in dict.fromkeys((root.id, *self._states.members(root.id))):
            agent = self._agents.get(caller_id)
            if agent is None or (caller_id != root.id and agent.session.record.root_id != root.id):
                continue
            running = store.programs(caller_id, state="running")
            if not running:
                continue
            shorts = shown_ids(store.programs(caller_id))
            out.extend(
                ProgramEntry(p.id, caller_id, shorts[p.id], p.background, p.kind)
                for p in reversed(running)
            )
        return tuple(out)

    def tree(self, root: Agent) -> TreeSnapshot:
        """The sessions of `root`'s tree as the store and the runtime know them now."""
        store = self._store()
        records = store.list_sessions(root_id=root.id)
        ids = [r.id for r in records]
        first: dict[str, str] = {}
        for inp in sorted(store.inputs(recipient_ids=ids), key=lambda i: i.seq):
            if inp.kind == "input":
                first.setdefault(inp.recipient_id, inp.text)
        programs = {r.id: self._coordinator.program_of(r) for r in records}
        return TreeSnapshot(
            tuple(records),
            {i: self._coordinator.state_of(i) for i in ids},
            self._coordinator.short_map(root.session.record),
            first,
            {i: p for i, p in programs.items() if p is not None},
            self.program_shorts(records),
            held_elsewhere(store, [i for i in ids if i not in self._agents]),
        )

    def program_shorts(self, records: Sequence[SessionRecord]) -> dict[str, str]:
        """The short ID of each Program that owns Agents among `records`, among its
        caller's Programs (the owner of its Agents; `addressing.shown_ids`); one with no
        record by its first 8 characters."""
        callers: dict[str, str] = {}
        for r in records:
            mark = program_mark(r)
            if mark is not None and r.owner_id is not None:
                callers.setdefault(mark, r.owner_id)
        out: dict[str, str] = {}
        store = self._store()
        for caller_id in set(callers.values()):
            shorts = shown_ids(store.programs(caller_id))
            for program_id in (p for p, c in callers.items() if c == caller_id):
                out[program_id] = shorts.get(program_id, program_id[:8])
        return out

    def transcript_page(self, agent_id: str, after: str | None = None) -> list[Entry]:
        """An Agent's committed entries, all or those after the entry `after`."""
        return self._store().entries(agent_id, after=after)

    def root_sessions(self, *, exclude: str | None = None) -> RootSessions:
        """Every saved root session but `exclude` (the one shown), newest first."""
        store = self._store()
        records = tuple(s for s in store.list_sessions(roots_only=True) if s.id != exclude)
        requests = store.latest_requests([s.id for s in records])
        return RootSessions(records, {sid: text for sid, (_, text) in requests.items()})

    def export(self, session_id: str, path: Path) -> int:
        """Write a session as Pi-style JSONL to `path` (`piagents.export`); the number of
        entries written. Raises OSError or StoreError."""
        with path.open("w", encoding="utf-8") as out:
            return export_jsonl(self._store(), session_id, out)

    # ---- settings ----------------------------------------------------------------------

    def warnings(self) -> tuple[str, ...]:
        """Problems with settings and extensions: the defaults are used, or the extension
        is not."""
        return self._settings.warnings()

    def agents_settings(self) -> AgentsSettings:
        """The `pi-agents` settings in use now."""
        return self._settings.current().agents

    def use_agents_setting(self, key: str, value: object) -> None:
        """Use `value` for the `pi-agents` setting `key` (as the settings file names it,
        one of `config.LIVE_AGENTS_FIELDS`) from now on, and announce it (SettingsChanged).
        Writing the settings file is the caller's."""
        field = LIVE_AGENTS_FIELDS.get(key)
        if field is None:
            raise ValueError(f"pi-agents.{key} cannot be changed while the runtime runs")
        settings = self._settings.current()
        changes: dict[str, Any] = {field: value}
        agents = dataclasses.replace(settings.agents, **changes)
        self._settings.replace(dataclasses.replace(settings, agents=agents))
        self._hub.publish(SettingsChanged(key, value))

    # ---- supervision -----------------------------------------------------------------

    def face(self, agent: Agent) -> str:
        """`agents`, `supervision` (a lead's) or `managed`."""
        return self._supervisor.face(agent.session.record)

    def is_lead(self, agent: Agent) -> bool:
        """True when `agent` is a root of the supervision face (a lead)."""
        record = agent.session.record
        return record.is_root and self._supervisor.face(record) == "supervision"

    def managed_agents(self, lead: Agent) -> tuple[ManagedAgent, ...]:
        """The lead's generations not yet ended (lost and unknown ones included)."""
        gens = self._store().generations(root_id=lead.id, live=True)
        return tuple(self._managed(g) for g in gens)

    def live_labels(self, owner: Agent) -> list[str]:
        """The labels of the generations `owner` delegated that have not ended."""
        return [g.label for g in self._store().generations(owner_id=owner.id, live=True)]

    def _managed(self, g: GenerationRecord) -> ManagedAgent:
        observed = self._supervisor.observe(g)
        agent = self._agents.get(g.session_id)
        if agent is not None:
            model, thinking = str(agent.model), str(agent.thinking)
        else:
            record = self._store().get_session(g.session_id)
            model = record.model if record is not None else ""
            thinking = record.thinking if record is not None else ""
        window = 0
        if model:
            try:
                window = self._providers.model_info(ModelRef.parse(model)).context_window
            except ValueError:
                window = 0
        return ManagedAgent(
            request=g.id,
            session_id=g.session_id,
            owner_id=g.owner_id,
            label=g.label,
            state=observed.state,
            created=g.created,
            model=model or "?",
            thinking=thinking or "?",
            tokens=observed.tokens,
            context_window=window,
        )

    def definitions(self, cwd: str) -> Roster:
        """The definitions a lead in `cwd` may delegate to (raises SupervisionError)."""
        return self._supervisor.roster(cwd, "agents")

    def project_of(self, cwd: str) -> Path:
        """The project a working directory belongs to (whose definitions it sees)."""
        from piagents.supervision.supervisor import project_dir

        return project_dir(Path(cwd))

    def supervision_tool_names(self) -> list[str]:
        return list(self._supervisor.tool_names())

    def definition_survey(self, cwd: str) -> DefinitionSurvey:
        """Every problem of the definitions a lead in `cwd` would use; a damaged trust
        file trusts no project (as the supervisor then does)."""
        project = self.project_of(cwd)
        trust_error: str | None = None
        try:
            trusted = is_trusted(self._home, project)
        except TrustError as exc:
            trusted, trust_error = False, str(exc)
        report = survey(self._home, project, trusted, tools=self.supervision_tool_names())
        return DefinitionSurvey(report, trust_error)

    def set_definition_enabled(
        self, cwd: str, definition: AgentDefinition, roster: Roster, enabled: bool
    ) -> AgentDefinition:
        """Enable or disable a definition in the global layer (`write_global_override`:
        raises DefinitionError or OSError, and nothing is written); announced for the
        project of `cwd` (DefinitionsChanged). Returns the definition as written."""
        written = write_global_override(self._home, definition, enabled=enabled, roster=roster)
        return self._definition_written(cwd, definition, written)

    def set_definition_model(
        self, cwd: str, definition: AgentDefinition, roster: Roster, model: str | None
    ) -> AgentDefinition:
        """As `set_definition_enabled`, for its model (None: the default)."""
        written = write_global_override(self._home, definition, model=model, roster=roster)
        return self._definition_written(cwd, definition, written)

    def set_definition_thinking(
        self, cwd: str, definition: AgentDefinition, roster: Roster, level: ThinkingLevel | None
    ) -> AgentDefinition:
        """As `set_definition_enabled`, for its thinking level (None: the default)."""
        written = write_global_override(self._home, definition, thinking=level, roster=roster)
        return self._definition_written(cwd, definition, written)

    def _definition_written(
        self, cwd: str, definition: AgentDefinition, written: AgentDefinition
    ) -> AgentDefinition:
        self._hub.publish(DefinitionsChanged(str(self.project_of(cwd)), definition.name))
        return written

    async def stop_all(self, lead: Agent) -> tuple[list[str], list[str]]:
        """Close every live agent the lead owns directly, through the supervisor's
        `close` (which closes their own agents first); the labels closed and the errors."""
        from piagents.supervision import controls
        from piagents.supervision.requests import CloseRequest

        closed: list[str] = []
        errors: list[str] = []
        for g in self._store().generations(owner_id=lead.id, live=True):
            try:
                result = await controls.close(self._supervisor, lead, CloseRequest(g.label))
            except SupervisionError as exc:
                errors.append(f"{g.label}: {exc}")
                continue
            details = result.details if isinstance(result.details, dict) else {}
            closed.extend(str(label) for label in details.get("cascaded", ()))
            closed.append(g.label)
        return closed, errors

    def live_output(self, agent_id: str, lines: int) -> str:
        """The last `lines` of what a worker process last wrote for an Agent it runs
        (not loaded here), uncommitted text included; empty when none runs it."""
        from piagents.supervision import controls, remote

        for g in self._store().generations(session_id=agent_id, live=True):
            if controls.runs_elsewhere(self._supervisor, g):
                output = remote.inspect(self._supervisor, g)[0].rstrip("\n")
                return "\n".join(output.splitlines()[-lines:])
        return ""

    # ---- what users ask ------------------------------------------------------------------

    def send(self, agent: Agent, text: str, delivery: InputDelivery) -> Accepted:
        """The user's input to a loaded Agent (raises AgentCallError when refused)."""
        return self._coordinator.user_input(agent, text, delivery)

    async def stop(self, agent: Agent) -> list[Input]:
        """The user stops the turn; returns the user's inputs taken back."""
        return await self._coordinator.user_stop(agent)

    async def deliver(self, agent_id: str, text: str) -> None:
        """The user's input to an Agent that may not be loaded here (it is woken, or
        the runtime holding it gets it)."""
        record = self._store().get_session(agent_id)
        if record is not None:
            await self._coordinator.delivery.deliver(None, record, text, "followUp")
