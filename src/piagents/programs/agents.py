"""A running Program's own Agents (the `ProgramAgents` port), over the Pi Agents face.

A Program's Agent is an owned session of the caller's tree, marked as the Program's
(`agents.program_members`): it takes the tree's slots and counts toward its
`maxOutstanding`, and only the Program's Agents and the Agents under them see it.
The Program sends with the caller's ownership (the session's owner), and the Agent
reads its messages as from its owner, the Program (`from="Program"` and the Program's
short ID), never from the caller it cannot see. Its inputs have no Pi Agents result:
no `wait` and no notification reach the caller for them; `send()` gets the answer
from the run that handles the input. When the Program ends (`close`), its
Agents are aborted and unloaded, sub-Agents first; the delivery path never wakes an
offline Program Agent again, so they stay offline for good.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from piagents.agents import texts as agent_texts
from piagents.agents.coordinator import Coordinator
from piagents.agents.errors import AgentCallError
from piagents.agents.operations import Operations
from piagents.agents.ports import AgentsPorts
from piagents.agents.program_members import marked
from piagents.agents.texts import Shown
from piagents.agents.tree import AgentMarks
from piagents.harness.events import LoopEvent, RunEnded, RunOutcome, RunStarted
from piagents.harness.loop_records import AbortResult
from piagents.programs import agent_texts as texts
from piagents.programs.ports import Closed, ProgramScope
from piagents.programs.script_api import ToolError
from piagents.programs.script_values import JsonValue
from piagents.programs.submit_result import SubmitResult, Submitted, schema_problem
from piagents.store.base import StoreError
from piagents.store.records import InputDelivery

if TYPE_CHECKING:
    from piagents.agent import Agent

Unload = Callable[["Agent", float | None], Coroutine[Any, Any, None]]

OPTION_NAMES = ("name", "cwd", "context", "model", "thinking_level")
DELIVERIES = ("followUp", "steer", "write")


@dataclass(slots=True)
class _Program:
    """The Agents one running Program made here, by ID, and whether it has ended."""

    agents: dict[str, Agent] = field(default_factory=dict)
    closed: bool = False


class CoordinatedProgramAgents:
    """`ProgramAgents` for the runtime whose coordinator and `agent` operations these are.
    `unload` takes an Agent offline in that runtime (`Runtime.unload`)."""

    def __init__(
        self, coordinator: Coordinator, operations: Operations, ports: AgentsPorts, unload: Unload
    ) -> None:
        self.c = coordinator
        self.operations = operations
        self.ports = ports
        self.unload = unload
        self._programs: dict[str, _Program] = {}
        # Schema inputs not ended yet, by recipient and input ID (`submit_result`'s).
        self._schemas: dict[str, dict[str, Submitted]] = {}

    # ---- create ---------------------------------------------------------------------

    def create(self, scope: ProgramScope, options: dict[str, JsonValue]) -> tuple[str, str]:
        program = self._running(scope)
        given: dict[str, str] = {}
        for key, value in options.items():
            if key not in OPTION_NAMES:
                raise ToolError(agent_texts.invalid(f"unknown option {key!r}."))
            if value is None:
                continue
            if not isinstance(value, str):
                raise ToolError(texts.bad_option(key, value))
            given[key] = value
        names = {a.name for a in program.agents.values()}
        name = given.get("name") or _generated_name(names)
        if name in names:
            raise ToolError(texts.name_taken(name))
        caller = scope.caller
        try:
            spawn = self.operations.spawn_options(
                caller,
                {
                    "cwd": given.get("cwd"),
                    "model": given.get("model"),
                    "thinkingLevel": given.get("thinking_level"),
                    "context": given.get("context"),
                },
            )
        except AgentCallError as exc:
            raise ToolError(str(exc)) from exc
        store = self.ports.store()
        agent: Agent | None = None
        try:
            with store.batch(atomic=True):  # made and marked in one commit: never seen unmarked
                agent = self.ports.loader.create_owned(
                    caller,
                    name=name,
                    cwd=spawn.cwd,
                    model=spawn.model,
                    thinking=spawn.thinking,
                    fork=spawn.fork,
                )
                record = agent.session.record
                agent.session.record = store.update_session(
                    agent.id, meta=marked(record, scope.program_id)
                )
        except (AgentCallError, StoreError) as exc:
            if agent is not None:  # nothing half-made stays behind
                self.ports.background(self.ports.loader.discard_owned(agent), "discarding")
            raise ToolError(str(exc)) from exc
        self.c.sessions_changed(agent.session.record)
        agent.loop.listeners.append(lambda event: self._on_loop_event(agent, event))
        recorded = agent.loop.hooks.after_run  # the coordinator's: it records how inputs end
        if recorded is not None:
            agent.loop.hooks.after_run = lambda loop, outcome: recorded(
                loop, self._judged(agent, outcome)
            )
        program.agents[agent.id] = agent
        self.c.changed(agent.id)
        return agent.id, name

    def _running(self, scope: ProgramScope) -> _Program:
        program = self._programs.setdefault(scope.program_id, _Program())
        if program.closed or self.ports.closing():
            raise ToolError(texts.program_ended())
        return program

    def _member(self, scope: ProgramScope, agent_id: str) -> Agent:
        agent = self._running(scope).agents.get(agent_id)
        if agent is None:
            raise ToolError(texts.not_an_agent(agent_id))
        if self.ports.agents.get(agent_id) is not agent:  # unloaded: the runtime closes
            raise ToolError(texts.program_ended())
        return agent

    # ---- send and abort -----------------------------------------------------------------

    async def send(
        self,
        scope: ProgramScope,
        agent_id: str,
        message: str,
        deliver_as: str,
        schema: JsonValue,
    ) -> JsonValue:
        agent = self._member(scope, agent_id)
        if not isinstance(message, str) or not message:
            raise ToolError(texts.bad_message(message))
        if deliver_as not in DELIVERIES:
            raise ToolError(texts.bad_delivery(deliver_as))
        if schema is not None:
            if deliver_as != "followUp":
                raise ToolError(texts.schema_needs_follow_up())
            problem = schema_problem(schema)
            if problem is not None:
                raise ToolError(texts.bad_schema(problem))
        delivery = cast(InputDelivery, deliver_as)
        try:
            # No Pi Agents result: the Program's, from the run, not the caller's to wait for.
            accepted = self.c.accept(
                scope.caller,
                agent,
                message,
                delivery,
                has_result=False,
                rendered=agent_texts.agent_message(
                    Shown(texts.PROGRAM_SENDER, scope.short_id), message, reply_note=False
                ),
            )
        except (AgentCallError, StoreError) as exc:
            raise ToolError(str(exc)) from exc
        if deliver_as != "followUp" or accepted.future is None:
            return None
        input_id = accepted.record.id
        submitted: Submitted | None = None
        if schema is not None:  # before the run starts: it starts in a later task
            submitted = Submitted(input_id, cast(dict[str, Any] | bool, schema))
            self._schemas.setdefault(agent.id, {})[input_id] = submitted
        try:
            outcome = await accepted.future
        finally:
            pending = self._schemas.get(agent.id, {})
            pending.pop(input_id, None)
            if not pending:
                self._schemas.pop(agent.id, None)
        return _answer(_label(agent), outcome, submitted)

    def _on_loop_event(self, agent: Agent, event: LoopEvent) -> None:
        """Offer `submit_result` to the run that handles a schema input, for that run only."""
        if isinstance(event, RunStarted):
            pending = self._schemas.get(agent.id, {})
            for inp in event.inputs:
                submitted = pending.get(inp.id)
                if submitted is not None:
                    agent.loop.tools[texts.SUBMIT_RESULT] = SubmitResult(submitted)
                    break
        elif isinstance(event, RunEnded):
            tool = agent.loop.tools.get(texts.SUBMIT_RESULT)
            if isinstance(tool, SubmitResult):
                del agent.loop.tools[texts.SUBMIT_RESULT]

    def _judged(self, agent: Agent, outcome: RunOutcome) -> RunOutcome:
        """A completed run that handled a schema input without a valid `submit_result`
        call fails that input, and is recorded so."""
        pending = self._schemas.get(agent.id, {})
        missing = [i for i in outcome.inputs if i.id in pending and not pending[i.id].done]
        if outcome.status != "completed" or not missing:
            return outcome
        return RunOutcome(outcome.inputs, "failed", texts.no_result(_label(agent)))

    async def abort(self, scope: ProgramScope, agent_id: str) -> None:
        agent = self._member(scope, agent_id)
        result = await self._stop(agent, self.c.abort_timeout)
        if result.had_work:  # as after an owner's abort: others' messages only add now
            self.c.marks.setdefault(agent.id, AgentMarks()).stopped = True
        if not result.stopped:
            raise ToolError(texts.did_not_stop(_label(agent)))

    # ---- close ---------------------------------------------------------------------------

    async def close(self, scope: ProgramScope, timeout: float) -> Closed:
        program = self._programs.setdefault(scope.program_id, _Program())
        program.closed = True
        try:
            return await self._take_offline(scope.program_id, timeout)
        finally:
            program.agents.clear()  # the ended mark stays: later calls say it has ended

    async def _take_offline(self, program_id: str, timeout: float) -> Closed:
        """Abort the Program's Agents and those under them, deepest first, then unload them
        in the same order, all within `timeout` seconds."""
        members = [
            a
            for a in list(self.ports.agents.values())
            if self.c.program_of(a.session.record) == program_id
        ]
        ids = {a.id for a in members}
        levels = itertools.groupby(
            sorted(members, key=lambda a: _depth(a, ids, self.ports.agents), reverse=True),
            key=lambda a: _depth(a, ids, self.ports.agents),
        )
        order = [list(level) for _, level in levels]
        clock = asyncio.get_running_loop()
        deadline = clock.time() + timeout
        abandoned: list[str] = []
        for level in order:  # sub-Agents stop before their owners, who might act on them
            results = await asyncio.gather(*(self._stop(a, deadline - clock.time()) for a in level))
            abandoned.extend(
                _label(a) for a, r in zip(level, results, strict=True) if not r.stopped
            )
        for level in order:
            for agent in level:
                if self.ports.agents.get(agent.id) is agent:
                    await self.unload(agent, max(0.0, deadline - clock.time()))
        return Closed(tuple(f"Agent {name}" for name in abandoned))

    async def _stop(self, agent: Agent, timeout: float) -> AbortResult:
        """Abort as the owner does: the inputs that end tell nobody (their owners are
        going offline too)."""
        marks = self.c.marks.setdefault(agent.id, AgentMarks())
        marks.aborting_by_owner = True
        try:
            return await agent.loop.abort(max(0.0, timeout))
        finally:
            marks.aborting_by_owner = False


def _answer(name: str, outcome: RunOutcome, submitted: Submitted | None) -> JsonValue:
    """What `send()` returns for the run that handled its input, or raises."""
    if outcome.status == "aborted":
        raise ToolError(texts.input_aborted(name))
    if outcome.status == "failed":
        raise ToolError(texts.input_failed(name, outcome.answer))
    if submitted is None:
        return outcome.answer
    if not submitted.done:
        raise ToolError(texts.no_result(name))
    return submitted.value


def _label(agent: Agent) -> str:
    return agent.name or agent.id


def _generated_name(taken: set[str | None]) -> str:
    """The first `agent-N` no Agent of the Program is called."""
    for n in itertools.count(1):
        name = f"agent-{n}"
        if name not in taken:
            return name
    raise AssertionError("unreachable")


def _depth(agent: Agent, members: set[str], loaded: Mapping[str, Agent]) -> int:
    """How far below the Program's own Agents `agent` is (0: one of them)."""
    depth, record = 0, agent.session.record
    while record.owner_id in members:
        depth += 1
        owner = loaded.get(record.owner_id)
        if owner is None:
            break
        record = owner.session.record
    return depth
