"""The supervision face at run time: managed agents, their generations, the nine actions.

One `Supervisor` per runtime. A managed agent is an Agent made from a
definition by `delegate` (or `continue`); each assignment is one generation,
recorded in the store before the call returns. A generation ends once: its
outcome and the result message for its owner are committed in one
transaction (`Store.update_generation`), then the message is delivered from
the store, so a crash between the two loses nothing and repeats nothing.

Placement `inline` runs the managed agent in this runtime, as an owned Agent of
the lead's tree (it shares the tree's slots). Placements `process` and `tmux` run
it in a `pi-agents worker` process of its own (`remote`, `placement`, `worker`):
the lead reaches it through the store and a poke, and a worker's own agents run
inline in the worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from piagents.agents.unrecorded import FIRST_RETRY_S, LAST_RETRY_S
from piagents.ai.messages import AssistantMessage, ToolResultMessage, UserMessage, now_ms
from piagents.events.records import SupervisionChanged
from piagents.harness.compaction import compaction_threshold
from piagents.harness.events import (
    AssistantDelta,
    LoopEvent,
    MessageCommitted,
    RunEnded,
    RunOutcome,
    RunStarted,
    ToolStarted,
)
from piagents.harness.loop import AgentLoop
from piagents.harness.session import Session
from piagents.harness.tools import BUILTIN_TOOL_NAMES
from piagents.harness.tools.base import ToolResult
from piagents.store import lease
from piagents.store.base import LeaseHolder, StoreError
from piagents.store.records import GenerationRecord, InputRecord, SessionRecord, new_id
from piagents.supervision import error_texts, remote, texts
from piagents.supervision.attachments import (
    ComposedMessage,
    attachment_details,
    compose_message,
    resolve_attachments,
)
from piagents.supervision.briefing import MANAGED
from piagents.supervision.definitions import (
    AgentDefinition,
    DefinitionError,
    DefinitionProblem,
    DefinitionRefused,
    Roster,
    discover,
    survey,
)
from piagents.supervision.errors import SupervisionError, invalid_request
from piagents.supervision.labels import automatic_label
from piagents.supervision.output_tail import OutputTail
from piagents.supervision.placement import REMOTE
from piagents.supervision.records import Observed, agent_record, within_reach
from piagents.supervision.requests import (
    AskOwnerRequest,
    ContinueRequest,
    DelegateRequest,
)
from piagents.supervision.trust import TrustError, is_trusted

if TYPE_CHECKING:
    from piagents.agent import Agent
    from piagents.runtime import Runtime
    from piagents.supervision.worker import WorkerLink

log = logging.getLogger("piagents")


@dataclass(slots=True)
class _Live:
    """A generation running in this runtime."""

    gen: GenerationRecord
    agent: Agent
    definition: AgentDefinition
    tail: OutputTail = field(default_factory=OutputTail)
    ask: asyncio.Future[str] | None = None
    interrupting: bool = False
    ending: bool = False
    outcome: RunOutcome | None = None
    last_activity: int = field(default_factory=now_ms)
    retiring: bool = False


class Supervisor:
    def __init__(self, runtime: Runtime) -> None:
        self.rt = runtime
        self.live: dict[str, _Live] = {}  # generation id -> running here
        self.closing = False
        self.listeners: list[Any] = []  # called with no arguments when records change
        # In a `pi-agents worker` process: its link to the lead (see `worker`).
        self.worker: WorkerLink | None = None

    # ---- faces, controllers and definitions ---------------------------------------

    def face(self, record: SessionRecord) -> str:
        """`agents`, `supervision` (a lead), or `managed` (made from a definition)."""
        if MANAGED in record.meta:
            return MANAGED
        api = record.meta.get("agentApi")
        if api in ("agents", "supervision"):
            return str(api)
        return self.rt.settings.agents.agent_api

    @property
    def placement(self) -> str:
        """Where new managed agents run: `process`, `tmux` or `inline`. A worker runs its
        own agents inline, in its process."""
        if self.worker is not None:
            return "inline"
        return self.rt.settings.agents.spawn_placement or self.rt.default_placement

    def roster(self, cwd: str, operation: str) -> Roster:
        project = project_dir(Path(cwd))
        try:
            trusted = is_trusted(self.rt.home, project)
        except TrustError:
            trusted = False  # a damaged trust file trusts nothing; `pi-agents trust` reports it
        try:
            return discover(self.rt.home, project, trusted, tools=self.tool_names())
        except DefinitionError as exc:
            raise SupervisionError(
                "invalid_request",
                error_texts.definitions_unusable(exc),
                operation,
                next_action=error_texts.NEXT_FIX_DEFINITIONS,
            ) from exc

    def tool_names(self) -> list[str]:
        """The tools a definition may name: the built-in ones and the extensions'."""
        return [*BUILTIN_TOOL_NAMES, *(t.name for t in self.rt.extension_tools())]

    def definition_problems(self, cwd: str) -> tuple[DefinitionProblem, ...]:
        """Every problem of the definitions a lead in `cwd` would use (errors and warnings,
        each naming its file), for a user interface to show."""
        project = project_dir(Path(cwd))
        try:
            trusted = is_trusted(self.rt.home, project)
        except TrustError:
            trusted = False
        return survey(self.rt.home, project, trusted, tools=self.tool_names()).problems

    def _generation_of(self, session_id: str) -> GenerationRecord | None:
        for live in self.live.values():
            if live.gen.session_id == session_id:
                return live.gen
        gens = self.rt.store.generations(session_id=session_id, live=True)
        return gens[-1] if gens else None

    def controller(self, caller: Agent, operation: str) -> tuple[Roster, AgentDefinition | None]:
        """The roster and the caller's definition (None for the lead); refuses callers
        that may not supervise."""
        record = caller.session.record
        face = self.face(record)
        roster = self.roster(caller.cwd, operation)
        if face == "supervision" and record.is_root:
            return roster, None
        gen = self._generation_of(record.id)
        if face == MANAGED and gen is not None:
            definition = roster.get(gen.definition)
            if definition is not None and definition.is_delegating and gen.owner_id == gen.root_id:
                return roster, definition
        raise SupervisionError(
            "invalid_request",
            error_texts.NOT_A_CONTROLLER,
            operation,
        )

    def _roster_quietly(self, cwd: str) -> Roster | None:
        """The roster for `cwd`, or None where it cannot be read (its error is reported
        by the actions that need it)."""
        try:
            return self.roster(cwd, "agent")
        except SupervisionError:
            return None

    # ---- list ------------------------------------------------------------------------

    def visible(self, caller: Agent, definition: AgentDefinition | None) -> list[GenerationRecord]:
        record = caller.session.record
        if definition is None:
            gens = self.rt.store.generations(root_id=record.id, live=True)
        else:
            gens = self.rt.store.generations(owner_id=record.id, live=True)
        return [self._recovered(g) for g in gens]

    def observe(self, g: GenerationRecord) -> Observed:
        live = self.live.get(g.id)
        has_transcript = self._has_entries(g.session_id)
        if live is None:
            if remote.is_remote(g):
                return remote.observe(self, g, has_transcript)
            return Observed(g.state, has_transcript=has_transcript, last_activity=g.updated)
        agent = live.agent
        children = [c for c in self.rt.store.generations(owner_id=agent.id, live=True) if c.live]
        loop = agent.loop
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
        agent = self.rt.agents.get(session_id)
        if agent is not None:
            return agent.session.leaf_id is not None
        return self.rt.store.has_entries(session_id)  # not a decode of the whole session

    def list_agents(self, caller: Agent) -> ToolResult:
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
                workspace_id=self.rt.store.location,
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
        return f"{self.rt.store.location}#{session_id}"

    # ---- delegate and continue ---------------------------------------------------------

    async def delegate(self, caller: Agent, req: DelegateRequest) -> ToolResult:
        roster, mine = self.controller(caller, "delegate")
        try:
            definition = roster.resolve(req.definition, mine)
        except DefinitionRefused as exc:
            raise invalid_request("delegate", str(exc), next_action="call list") from exc
        cwd = self._cwd(caller, req.cwd)
        label = req.label or automatic_label(definition.name, self._labels_in_use(caller))
        self._check_label_free(caller, label, "delegate")
        source: list[Any] = []
        if req.fork is not None:
            source_record = self._session_of(req.fork, "delegate", "fork")
            if not within_reach(caller.session.record, source_record, lead=mine is None):
                text = texts.fork_out_of_reach(source_record.id, lead=mine is None)
                raise invalid_request("delegate", text, next_action="call list")
            if source_record.meta.get(MANAGED, {}).get("retired"):
                raise invalid_request(
                    "delegate",
                    error_texts.retired_not_forkable(source_record.id),
                    next_action=error_texts.NEXT_DELEGATE_FRESH,
                )
            source = self._fork_entries(source_record.id)
        message = self._compose(caller, req.task, req.files, "delegate")
        model = definition.model or str(caller.model)
        remote.check_model(model, self.placement, "delegate")
        thinking = definition.thinking or self.rt.default_thinking
        session = Session.create(
            self.rt.store,
            cwd=cwd,
            model=model,
            thinking=thinking,
            name=label,
            owner_id=caller.id,
            root_id=caller.session.record.root_id or caller.id,
            meta={MANAGED: {"definition": definition.name, "label": label}},
        )
        if source:
            session.append(*source)
        return await self._start(
            caller,
            session,
            definition,
            label,
            message,
            cwd=cwd,
            kind="delegate",
            task=req.task,
            timeout_ms=req.timeout_ms,
        )

    async def continue_(self, caller: Agent, req: ContinueRequest) -> ToolResult:
        roster, mine = self.controller(caller, "continue")
        record = self._session_of(req.session, "continue", "session")
        if record.id == caller.id:
            raise invalid_request(
                "continue",
                error_texts.CONTINUE_OWN_SESSION,
                next_action=error_texts.NEXT_FORK_INSTEAD,
            )
        meta = record.meta.get(MANAGED)
        if not isinstance(meta, dict):
            raise invalid_request("continue", error_texts.not_managed_session(record.id))
        if not within_reach(caller.session.record, record, lead=mine is None):
            text = texts.continue_out_of_reach(record.id, lead=mine is None)
            raise invalid_request("continue", text)
        if meta.get("retired"):
            raise invalid_request(
                "continue",
                error_texts.retired_not_continuable(record.id),
                next_action=error_texts.NEXT_DELEGATE_FRESH,
            )
        if self.rt.agents.get(record.id) is not None or self.rt.store.generations(
            session_id=record.id, live=True
        ):
            raise SupervisionError(
                "agent_busy",
                error_texts.session_busy(record.id),
                "continue",
                next_action=error_texts.NEXT_STEER_OR_CLOSE,
            )
        try:
            definition = roster.resolve(str(meta.get("definition")), mine)
        except DefinitionRefused as exc:
            raise invalid_request("continue", str(exc), next_action="call list") from exc
        label = str(meta.get("label"))
        self._check_label_free(caller, label, "continue")
        remote.check_model(definition.model or record.model, self.placement, "continue")
        message = self._compose(caller, req.task, req.files, "continue")
        session = Session.load(self.rt.store, record.id)
        if definition.model and definition.model != session.record.model:
            session.set_model(definition.model)
        if definition.thinking and definition.thinking != session.record.thinking:
            session.set_thinking(definition.thinking)
        return await self._start(
            caller,
            session,
            definition,
            label,
            message,
            cwd=record.cwd,
            kind="continue",
            task=req.task,
            timeout_ms=req.timeout_ms,
        )

    def _cwd(self, caller: Agent, given: str | None) -> str:
        if given is None:
            return caller.cwd
        if "\0" in given:
            raise invalid_request("delegate", error_texts.cwd_has_nul(given))
        path = Path(caller.cwd, given).expanduser().resolve()
        if not path.is_dir():
            raise invalid_request("delegate", error_texts.cwd_not_a_directory(given, path))
        return str(path)

    def _labels_in_use(self, caller: Agent) -> set[str]:
        root = caller.session.record.root_id or caller.id
        return {g.label for g in self.rt.store.generations(root_id=root, live=True)}

    def _check_label_free(self, caller: Agent, label: str, operation: str) -> None:
        if label in self._labels_in_use(caller):
            raise SupervisionError(
                "agent_label_exists",
                error_texts.label_taken(label),
                operation,
                next_action=error_texts.label_taken_next(operation),
            )

    def _session_of(self, given: str, operation: str, field_name: str) -> SessionRecord:
        """An exact saved session: its full ID, or its path as `list` shows it."""
        session_id = given
        prefix = f"{self.rt.store.location}#"
        if given.startswith(prefix):
            session_id = given[len(prefix) :]
        record = self.rt.store.get_session(session_id)
        if record is None:
            raise SupervisionError(
                "target_not_found",
                error_texts.no_saved_session(given, field_name),
                operation,
                next_action=error_texts.NEXT_COPY_SESSION,
            )
        return record

    def _fork_entries(self, session_id: str) -> list[Any]:
        from piagents.harness.context import context_entries

        entries = self.rt.store.entries(session_id, from_last_compaction=True)
        return [msgspec.structs.replace(e, id=new_id()[:8]) for e in context_entries(entries)]

    def _compose(
        self, caller: Agent, message: str, files: Sequence[str], operation: str
    ) -> ComposedMessage:
        settings = self.rt.settings.agents
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

    async def _start(
        self,
        caller: Agent,
        session: Session,
        definition: AgentDefinition,
        label: str,
        message: ComposedMessage,
        *,
        cwd: str,
        kind: str,
        task: str,
        timeout_ms: int | None = None,
    ) -> ToolResult:
        holder = self.rt.holder
        assert holder is not None
        owner_gen = self._generation_of(caller.id)
        where = self.placement
        gen = GenerationRecord(
            id=new_id(),
            label=label,
            definition=definition.name,
            root_id=caller.session.record.root_id or caller.id,
            owner_id=caller.id,
            session_id=session.id,
            cwd=cwd,
            task=task,
            placement=where,
            kind=kind,
            pid=holder.pid,
            host=holder.host,
            started=holder.started,
            token=holder.token,
            pane=f"inline:{session.id}",
            parent_label=owner_gen.label if owner_gen is not None else None,
        )
        if where in REMOTE:
            # Its worker records its own process; until then, the lead's is the evidence.
            gen = await remote.start(self, caller, gen, message.text, timeout_ms, kind)
            self._changed()
            return self._started(gen, kind, message)
        self.rt.store.add_generation(gen)  # durable before anything runs
        try:
            agent = self.rt.load_managed(session)
            self.adopt(gen, agent, definition)
            self.rt.coordinator.accept(
                caller, agent, message.text, "followUp", has_result=False, plain=True
            )
        except Exception as exc:
            rolled_back = self._roll_back(gen)
            raise SupervisionError(
                "internal_failure" if rolled_back else "rollback_failure",
                error_texts.start_failed(exc),
                kind,
                rollback_occurred=rolled_back,
                next_action=error_texts.NEXT_CHECK_DEFINITION,
            ) from exc
        self._changed()
        return self._started(gen, kind, message)

    def _started(self, gen: GenerationRecord, kind: str, message: ComposedMessage) -> ToolResult:
        text = (texts.delegated if kind == "delegate" else texts.continued)(
            agent=gen.label, definition=gen.definition, session=gen.session_id, request=gen.id
        )
        return ToolResult(
            text,
            {
                "action": kind,
                "agent": gen.label,
                "definition": gen.definition,
                "session": gen.session_id,
                "sessionPath": self.session_path(gen.session_id),
                "request": gen.id,
                "startup": {
                    "placement": gen.placement,
                    "pid": gen.pid,
                    "host": gen.host,
                    "pane": gen.pane,
                    "state": gen.state,
                    "started": gen.started,
                },
                "attachments": attachment_details(message.attachments),
            },
        )

    def adopt(self, gen: GenerationRecord, agent: Agent, definition: AgentDefinition) -> None:
        """Run `gen` here, with `agent` loaded for it (inline, or in its worker)."""
        live = _Live(gen, agent, definition)
        agent.loop.hooks.before_model_call = self._retirement(
            live, agent.loop.hooks.before_model_call
        )
        self.live[gen.id] = live
        agent.loop.listeners.append(lambda event: self._on_event(live, event))

    def _roll_back(self, gen: GenerationRecord) -> bool:
        live = self.live.pop(gen.id, None)
        try:
            ended = msgspec.structs.replace(
                gen, state="ended", outcome="failed", error="start failed", ended=now_ms()
            )
            self.rt.store.update_generation(ended, end=True)
            if live is not None and self.rt._tg is not None:
                self.rt.background(self.rt.unload(live.agent), "taking an agent offline")
            return True
        except Exception:
            return False

    def _retirement(
        self, live: _Live, compaction: Callable[[AgentLoop], Awaitable[None]] | None
    ) -> Callable[[AgentLoop], Awaitable[None]]:
        """With `contextRetirement` on, a managed agent whose context reaches the automatic
        compaction threshold is retired instead of compacted: told once to finish its
        coherent work and hand off, and its session can then not be continued."""

        async def before_model_call(loop: AgentLoop) -> None:
            if not self.rt.settings.agents.context_retirement:
                if compaction is not None:
                    await compaction(loop)
                return
            if live.retiring:
                return
            window = await self.rt.providers.context_window(loop.model)
            threshold = compaction_threshold(window, self.rt.settings.compaction)
            if loop.session.context_tokens() > threshold:
                live.retiring = True
                entry = loop.session.append_message(UserMessage.of(texts.RETIREMENT_NOTICE))
                loop.emit(MessageCommitted(entry.message))
                self._changed()

        return before_model_call

    # ---- the live agents' events ---------------------------------------------------------

    def _on_event(self, live: _Live, event: LoopEvent) -> None:
        live.last_activity = now_ms()
        if isinstance(event, AssistantDelta) and event.kind == "text":
            live.tail.feed(event.text)
        elif isinstance(event, ToolStarted):
            live.tail.feed(f"\n$ {event.call.name} {_compact(event.call.args)}\n")
        elif isinstance(event, MessageCommitted):
            m = event.message
            if isinstance(m, ToolResultMessage):
                live.tail.feed(m.text + "\n")
            elif isinstance(m, AssistantMessage) and m.text:
                live.tail.feed("\n")
        elif isinstance(event, RunStarted):
            self._set_state(live, "working")
        elif isinstance(event, RunEnded):
            live.outcome = event.outcome
            with contextlib.suppress(RuntimeError):
                asyncio.get_running_loop().call_soon(self._settle, live, FIRST_RETRY_S)
        self._changed()

    def _set_state(self, live: _Live, state: str) -> None:
        if live.gen.state == state or live.ending:
            return
        changed = msgspec.structs.replace(live.gen, state=state, updated=now_ms())
        if self.rt.store.update_generation(changed):
            live.gen = changed

    def _settle(self, live: _Live, retry_in: float) -> None:
        """`_check_settled`, again later while the store cannot record the end."""
        try:
            self._check_settled(live)
        except StoreError as exc:
            live.ending = False
            log.warning("The end of %s could not be recorded yet: %s", live.gen.label, exc)
            asyncio.get_running_loop().call_later(
                retry_in, self._settle, live, min(retry_in * 2, LAST_RETRY_S)
            )

    def _check_settled(self, live: _Live) -> None:
        """After a run: end the generation when its agent has nothing left to do."""
        if live.ending or live.interrupting or self.closing or live.gen.id not in self.live:
            return
        agent = live.agent
        if agent.loop.busy or agent.loop.phase != "idle" or live.ask is not None:
            return
        children = self.rt.store.generations(owner_id=agent.id, live=True)
        if any(c.live for c in children):
            self._set_state(live, "blocked")
            return
        outcome = live.outcome
        if outcome is None:
            return
        status = {"completed": "completed", "failed": "failed"}.get(outcome.status, "aborted")
        if live.retiring and status == "completed":
            status = "retired"
        error = outcome.answer if status == "failed" else None
        self._end(live, status, "" if status == "failed" else outcome.answer, error)

    def _end(self, live: _Live, status: str, answer: str, error: str | None) -> bool:
        """Record the outcome and the owner's result in one transaction, then deliver it
        and take the agent offline."""
        live.ending = True
        gen = live.gen
        final = msgspec.structs.replace(
            gen,
            state="ended",
            outcome=status,
            result=answer,
            error=error,
            updated=now_ms(),
            ended=now_ms(),
        )
        text = texts.terminal_result(
            agent=gen.label,
            definition=gen.definition,
            session=gen.session_id,
            request=gen.id,
            status=status,  # type: ignore[arg-type]
            final_answer=answer,
            error=error,
        )
        result = self._message_for(gen.owner_id, gen.session_id, gen.root_id, text)
        if status == "retired":
            self._mark_retired(gen.session_id)
        ended = self.rt.store.update_generation(final, end=True, result=result)
        live.gen = final
        self.live.pop(gen.id, None)
        if ended:
            self._deliver(gen.owner_id)
        if self.rt._tg is not None and not self.rt.closing:
            self.rt.background(self._take_offline(live.agent), "taking an agent offline")
        self._changed()
        return ended

    async def _take_offline(self, agent: Agent) -> None:
        await asyncio.sleep(0)
        if agent.id in self.rt.agents:
            await self.rt.unload(agent, self.rt.settings.agents.abort_timeout_ms / 1000)

    def _mark_retired(self, session_id: str) -> None:
        record = self.rt.store.get_session(session_id)
        if record is None:
            return
        meta = dict(record.meta)
        meta[MANAGED] = {**meta.get(MANAGED, {}), "retired": True}
        self.rt.store.update_session(session_id, meta=meta)

    def _message_for(
        self, recipient_id: str, sender_id: str, root_id: str, text: str
    ) -> InputRecord:
        """A message for a controller, left undelivered: `_deliver` hands it over."""
        return InputRecord(
            id=new_id(),
            root_id=root_id,
            recipient_id=recipient_id,
            sender_id=sender_id,
            kind="notification",
            delivery="steer",
            text=text,
            delivered=False,
            rendered=text,
        )

    def _deliver(self, recipient_id: str) -> None:
        """Hand messages waiting in the store to their recipient, wherever it is."""
        if recipient_id in self.rt.agents:
            self.rt.coordinator.drain()
            return
        if self.worker is not None:  # only nudge the lead: if it is down, it drains on restart
            if self.rt._tg is not None:
                self.rt.background(remote.poke_holder(self, recipient_id), "waking the lead")
            return
        record = self.rt.store.get_session(recipient_id)
        if record is not None and self.rt._tg is not None and not self.rt.closing:
            self.rt.background(self.rt.coordinator.reach(record), "delivering a result")

    # ---- ask_owner -------------------------------------------------------------------------

    async def ask_owner(
        self, agent: Agent, req: AskOwnerRequest, turn_calls: Sequence[str]
    ) -> ToolResult:
        live = next((v for v in self.live.values() if v.agent is agent), None)
        if live is None:
            return ToolResult(texts.ASK_OWNER_NO_OWNER, None, True)
        if len(turn_calls) > 1:
            return ToolResult(texts.ASK_OWNER_NOT_ALONE, None, True)
        if live.gen.asked:
            return ToolResult(texts.ASK_OWNER_ALREADY_ASKED, None, True)
        message = self._compose(agent, req.question, req.files, "ask_owner")
        ask_id = new_id()
        gen = msgspec.structs.replace(
            live.gen,
            asked=True,
            ask_id=ask_id,
            question=message.text,
            state="blocked",
            updated=now_ms(),
        )
        notice = texts.question_notification(
            agent=gen.label,
            definition=gen.definition,
            session=gen.session_id,
            request=gen.id,
            ask=ask_id,
            question=message.text,
        )
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        live.ask = future
        if not self.rt.store.update_generation(
            gen, result=self._message_for(gen.owner_id, gen.session_id, gen.root_id, notice)
        ):
            live.ask = None
            return ToolResult("The assignment has ended; no question can be asked.", None, True)
        live.gen = gen
        self._deliver(gen.owner_id)
        self._changed()
        try:
            answer = await future
        finally:
            live.ask = None
            if live.gen.id in self.live and not live.ending:
                cleared = msgspec.structs.replace(
                    live.gen, ask_id=None, question=None, state="working", updated=now_ms()
                )
                if self.rt.store.update_generation(cleared):
                    live.gen = cleared
            self._changed()
        return ToolResult(answer, {"ask": ask_id, "request": gen.id})

    # ---- recovery and shutdown -------------------------------------------------------------

    def _recovered(self, g: GenerationRecord) -> GenerationRecord:
        """A generation not running here: `lost` once its runtime is proven gone, `unknown`
        when that cannot be proven; the first to prove it gone tells the owner once."""
        if g.id in self.live or g.state in ("lost", "unknown") or g.pid is None:
            return g
        holder = LeaseHolder(g.pid, g.host or "", g.token or "", g.started or "")
        presence = lease.presence(holder)
        if presence == "alive":
            return g
        state = "lost" if presence == "gone" else "unknown"
        changed = msgspec.structs.replace(g, state=state, updated=now_ms())
        notice = None
        if state == "lost":
            notice = self._message_for(
                g.owner_id,
                g.session_id,
                g.root_id,
                texts.terminal_result(
                    agent=g.label,
                    definition=g.definition,
                    session=g.session_id,
                    request=g.id,
                    status="lost",
                    final_answer="",
                ),
            )
        if self.rt.store.update_generation(changed, expect_state=g.state, result=notice):
            if notice is not None:
                self._deliver(g.owner_id)
            return changed
        return self.rt.store.get_generation(g.id) or changed

    def on_control(self, stored: InputRecord) -> None:
        """A control message from the lead (interrupt, reply, close) for the generation
        this worker runs; other runtimes have none."""
        if self.worker is not None:
            self.worker.on_control(stored)

    def recover(self, root_id: str) -> None:
        """Check the generations of a lead that was just opened."""
        for g in self.rt.store.generations(root_id=root_id, live=True):
            self._recovered(g)

    def shut_down(self) -> None:
        """The runtime is closing: generations running here end `aborted`; their owners
        get the result when they next run."""
        self.closing = True
        for live in list(self.live.values()):
            if live.ask is not None and not live.ask.done():
                live.ask.cancel()
            answer = live.outcome.answer if live.outcome is not None else ""
            self._end(live, "aborted", answer, "the runtime was closed before it finished")

    def _changed(self) -> None:
        for listener in list(self.listeners):
            listener()
        self.rt.event_hub.publish(SupervisionChanged())  # events
        self.rt.coordinator.changed()


def project_dir(cwd: Path) -> Path:
    """The project a working directory belongs to: the nearest ancestor with
    `.pi-agents/agents`, else with `.git`, else the directory itself."""
    cwd = cwd.resolve()
    for marker in (Path(".pi-agents") / "agents", Path(".git")):
        for folder in (cwd, *cwd.parents):
            if (folder / marker).exists():
                return folder
    return cwd


def _compact(args: Any) -> str:
    text = msgspec.json.encode(args).decode()
    return text if len(text) <= 200 else text[:199] + "…"
