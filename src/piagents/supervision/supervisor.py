"""The supervision face at run time: managed agents, their generations, the nine actions.

One `Supervisor` per runtime: who may supervise (`face`, `controller`), the roster
of definitions, what `list` shows, and the entry points of the actions. The work is
done along its seams: `delegation` (delegate, continue), `controls` (steer,
interrupt, reply, close, inspect, transcript), `ask_owner`, `recovery`, `remote`
(generations in worker processes), and `generations`, the state machine that
alone writes a live generation's flags and ends it once.

The supervisor sees the runtime only through its `SupervisionPorts`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import cast

from piagents.ai.messages import now_ms
from piagents.config import Placement
from piagents.harness.tools import BUILTIN_TOOL_NAMES
from piagents.harness.tools.base import ToolResult
from piagents.store.records import GenerationRecord, InputRecord, SessionRecord
from piagents.supervision import ask_owner as asking
from piagents.supervision import delegation, error_texts, recovery, remote, texts
from piagents.supervision.attachments import (
    ComposedMessage,
    compose_message,
    resolve_attachments,
)
from piagents.supervision.definitions import (
    AgentDefinition,
    DefinitionError,
    DefinitionProblem,
    Roster,
    discover,
    survey,
)
from piagents.supervision.errors import SupervisionError
from piagents.supervision.generations import Generations
from piagents.supervision.live import LiveGeneration
from piagents.supervision.ports import AgentHandle, ControlReceiver, SupervisionPorts
from piagents.supervision.records import (
    MANAGED,
    Face,
    Observed,
    agent_record,
    recorded_state,
)
from piagents.supervision.requests import (
    AskOwnerRequest,
    ContinueRequest,
    DelegateRequest,
)
from piagents.supervision.texts import State
from piagents.supervision.trust import TrustError, is_trusted


class Supervisor:
    def __init__(self, ports: SupervisionPorts) -> None:
        self.ports = ports
        self.listeners: list[Callable[[], None]] = []  # called when records change
        self.generations = Generations(ports, self.listeners)

    @property
    def live(self) -> dict[str, LiveGeneration]:
        """The generations running here, by generation id."""
        return self.generations.live

    @property
    def worker(self) -> ControlReceiver | None:
        """In a `pi-agents worker` process: its link to the lead (see `worker`)."""
        return self.generations.worker

    @worker.setter
    def worker(self, link: ControlReceiver | None) -> None:
        self.generations.worker = link

    # ---- faces, controllers and definitions ---------------------------------------

    def face(self, record: SessionRecord) -> Face:
        """`agents`, `supervision` (a lead), or `managed` (made from a definition)."""
        if MANAGED in record.meta:
            return MANAGED
        api = record.meta.get("agentApi")
        if api == "agents" or api == "supervision":
            return "agents" if api == "agents" else "supervision"
        return self.ports.settings().agents.agent_api

    @property
    def placement(self) -> Placement:
        """Where new managed agents run: `process`, `tmux` or `inline`. A worker runs its
        own agents inline, in its process."""
        if self.worker is not None:
            return "inline"
        where = self.ports.settings().agents.spawn_placement or self.ports.default_placement()
        return cast(Placement, where)  # the runtime's default is one of them too

    def roster(self, cwd: str, operation: str) -> Roster:
        project = project_dir(Path(cwd))
        try:
            trusted = is_trusted(self.ports.home, project)
        except TrustError:
            trusted = False  # a damaged trust file trusts nothing; `pi-agents trust` reports it
        try:
            return discover(self.ports.home, project, trusted, tools=self.tool_names())
        except DefinitionError as exc:
            raise SupervisionError(
                "invalid_request",
                error_texts.definitions_unusable(exc),
                operation,
                next_action=error_texts.NEXT_FIX_DEFINITIONS,
            ) from exc

    def tool_names(self) -> list[str]:
        """The tools a definition may name: the built-in ones and the extensions'."""
        return [*BUILTIN_TOOL_NAMES, *(t.name for t in self.ports.extension_tools())]

    def definition_problems(self, cwd: str) -> tuple[DefinitionProblem, ...]:
        """Every problem of the definitions a lead in `cwd` would use (errors and warnings,
        each naming its file), for a user interface to show."""
        project = project_dir(Path(cwd))
        try:
            trusted = is_trusted(self.ports.home, project)
        except TrustError:
            trusted = False
        return survey(self.ports.home, project, trusted, tools=self.tool_names()).problems

    def generation_of(self, session_id: str) -> GenerationRecord | None:
        running = self.generations.of_session(session_id)
        if running is not None:
            return running
        gens = self.ports.store().generations(session_id=session_id, live=True)
        return gens[-1] if gens else None

    def controller(
        self, caller: AgentHandle, operation: str
    ) -> tuple[Roster, AgentDefinition | None]:
        """The roster and the caller's definition (None for the lead); refuses callers
        that may not supervise."""
        record = caller.session.record
        face = self.face(record)
        roster = self.roster(caller.cwd, operation)
        if face == "supervision" and record.is_root:
            return roster, None
        gen = self.generation_of(record.id)
        if face == MANAGED and gen is not None:
            definition = roster.get(gen.definition)
            if definition is not None and definition.is_delegating and gen.owner_id == gen.root_id:
                return roster, definition
        raise SupervisionError(
            "invalid_request",
            error_texts.NOT_A_CONTROLLER,
            operation,
        )

    def roster_quietly(self, cwd: str) -> Roster | None:
        """The roster for `cwd`, or None where it cannot be read (its error is reported
        by the actions that need it)."""
        try:
            return self.roster(cwd, "agent")
        except SupervisionError:
            return None

    # ---- list ------------------------------------------------------------------------

    def visible(
        self, caller: AgentHandle, definition: AgentDefinition | None
    ) -> list[GenerationRecord]:
        record = caller.session.record
        if definition is None:
            gens = self.ports.store().generations(root_id=record.id, live=True)
        else:
            gens = self.ports.store().generations(owner_id=record.id, live=True)
        return [self.recovered(g) for g in gens]

    def observe(self, g: GenerationRecord) -> Observed:
        live = self.live.get(g.id)
        has_transcript = self._has_entries(g.session_id)
        if live is None:
            if remote.is_remote(g):
                return remote.observe(self, g, has_transcript)
            return Observed(
                recorded_state(g), has_transcript=has_transcript, last_activity=g.updated
            )
        agent = live.agent
        children = [
            c for c in self.ports.store().generations(owner_id=agent.id, live=True) if c.live
        ]
        loop = agent.loop
        state: State
        if live.ending:
            state = "settling"
        elif live.ask is not None:
            state = "blocked"
        elif loop.phase == "running":
            state = "working"
        elif children and not loop.busy:
            state = "blocked"
        elif loop.busy or loop.phase == "queued":
            state = "working" if loop.in_turn else "starting"
        else:
            state = "settling"
        return Observed(
            state,
            pending_ask=live.ask is not None,
            waiting_on_children=bool(children) and state == "blocked" and live.ask is None,
            has_transcript=has_transcript,
            last_activity=live.last_activity,
            tokens=agent.session.context_tokens(),
        )

    def _has_entries(self, session_id: str) -> bool:
        agent = self.ports.agents.get(session_id)
        if agent is not None:
            return agent.session.leaf_id is not None
        return self.ports.store().has_entries(session_id)  # not a decode of the whole session

    def list_agents(self, caller: AgentHandle) -> ToolResult:
        roster, definition = self.controller(caller, "list")
        gens = self.visible(caller, definition)
        now = now_ms()
        labels = {g.session_id: g.label for g in gens}
        records = []
        lines = []
        for g in gens:
            observed = self.observe(g)
            direct = g.owner_id == caller.id
            rec = agent_record(
                g,
                observed,
                direct=direct,
                now_ms=now,
                workspace_id=self.ports.store().location,
                session_path=self.session_path(g.session_id),
                tab_label=caller.session.record.name or g.root_id,
                parent_visible=g.owner_id in labels,
            )
            records.append(rec)
            lines.append(
                texts.AgentLine(
                    agent=g.label,
                    state=observed.state,
                    available_actions=tuple(rec["available_actions"]),
                    definition=g.definition,
                    session=g.session_id,
                    request=g.id,
                    stale=rec["stale"],
                    parent=rec.get("parent_label"),
                )
            )
        defs = roster.records(definition)
        text = texts.list_text([texts.definition_line_record(d) for d in defs], lines)
        details = {"action": "list", "agent_definitions": defs, "agents": records}
        if roster.warnings and definition is None:
            details["definition_warnings"] = [w.text for w in roster.warnings]
        return ToolResult(text, details)

    def session_path(self, session_id: str) -> str:
        return f"{self.ports.store().location}#{session_id}"

    # ---- delegate, continue and ask_owner -------------------------------------------------

    async def delegate(self, caller: AgentHandle, req: DelegateRequest) -> ToolResult:
        return await delegation.delegate(self, caller, req)

    async def continue_(self, caller: AgentHandle, req: ContinueRequest) -> ToolResult:
        return await delegation.continue_(self, caller, req)

    async def ask_owner(
        self, agent: AgentHandle, req: AskOwnerRequest, turn_calls: Sequence[str]
    ) -> ToolResult:
        return await asking.ask_owner(self, agent, req, turn_calls)

    def compose(
        self, caller: AgentHandle, message: str, files: Sequence[str], operation: str
    ) -> ComposedMessage:
        settings = self.ports.settings().agents
        attachments = resolve_attachments(
            files,
            caller.cwd,
            inline_limit_bytes=settings.inline_attachment_limit_bytes,
            operation=operation,
        )
        return compose_message(
            message,
            attachments,
            payload_limit_bytes=settings.mailbox_payload_limit_bytes,
            operation=operation,
        )

    # ---- recovery, controls from the lead, shutdown ---------------------------------------

    def recovered(self, g: GenerationRecord) -> GenerationRecord:
        return recovery.recovered(self.generations, g)

    def recover(self, root_id: str) -> None:
        """Check the generations of a lead that was just opened."""
        recovery.recover(self.generations, root_id)

    def on_control(self, stored: InputRecord) -> None:
        """A control message from the lead (interrupt, reply, close) for the generation
        this worker runs; other runtimes have none."""
        if self.worker is not None:
            self.worker.on_control(stored)

    def shut_down(self) -> None:
        """The runtime is closing: generations running here end `aborted`; their owners
        get the result when they next run."""
        self.generations.shut_down()

    def changed(self) -> None:
        self.generations.changed()


def project_dir(cwd: Path) -> Path:
    """The project a working directory belongs to: the nearest ancestor with
    `.pi-agents/agents`, else with `.git`, else the directory itself."""
    cwd = cwd.resolve()
    for marker in (Path(".pi-agents") / "agents", Path(".git")):
        for folder in (cwd, *cwd.parents):
            if (folder / marker).exists():
                return folder
    return cwd
