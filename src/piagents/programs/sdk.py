"""The SDK face of Programs: a Program scope for an embedder's own Python (not
sandboxed), with the handles a Program's script has.

    async with ProgramScopeSession(program_agents, root) as p:
        h = p.agent(name="counter")
        value = await h.send("Count them", schema=Count)  # a pydantic model: an instance

Its Agents belong to the scope as a Program's Agents belong to their Program (the same
`ProgramAgents` port the runner uses): the rest of the tree does not see them, and when
the scope ends they are aborted and go offline for good, bottom-up. A pydantic model
class may stand for a schema; `send()` then returns an instance of it.

Given `ScopeRecords` (a runtime's scopes are), the scope is a Program record of kind
`scope` from `async with` (running) to its end: `completed` when its body returns,
`failed` when it raises, `stopped` when it is cancelled or its runtime stops it.
"""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias

from piagents.programs.ports import Closed, ProgramAgents, ProgramScope
from piagents.programs.script_values import JsonValue
from piagents.store.records import new_program_id

if TYPE_CHECKING:
    from piagents.agent import Agent

CLEANUP_TIMEOUT_S = 10.0

ScopeEnd: TypeAlias = Literal["completed", "failed", "stopped"]

CANCELLED = "the scope's code was cancelled."


def raised(exc: BaseException) -> str:
    """Why a scope whose body raised `exc` failed."""
    detail = str(exc)
    return f"the scope's code raised {type(exc).__name__}" + (f": {detail}" if detail else ".")


class ScopeRecords(Protocol):
    """Where a scope is recorded (a runtime's `RecordedScopes`)."""

    def opened(self, session: ProgramScopeSession) -> None:
        """The scope opens: recorded running (raises when it cannot be, or the runtime is
        closing)."""
        ...

    def ended(self, session: ProgramScopeSession, state: ScopeEnd, reason: str | None) -> None:
        """The scope ended so, its Agents offline."""
        ...


class ProgramAgentHandle:
    """One Agent of an SDK Program scope: `id`, `name`, `send()` and `abort()`."""

    def __init__(self, agents: ProgramAgents, scope: ProgramScope, agent_id: str, name: str):
        self._agents = agents
        self._scope = scope
        self.id = agent_id
        self.name = name

    async def send(self, message: str, deliver_as: str = "followUp", schema: Any = None) -> Any:
        """Its answer (str); with `schema` (a JSON schema, or a pydantic model class) the
        value it submitted (an instance of the model); None once a steer or write is
        accepted. Raises `ToolError` when the input fails or is aborted."""
        model = schema if _is_model_class(schema) else None
        json_schema: JsonValue = model.model_json_schema() if model is not None else schema
        value = await self._agents.send(self._scope, self.id, message, deliver_as, json_schema)
        if model is not None:
            return model.model_validate(value)
        return value

    async def abort(self) -> None:
        """Abort its current turn and queued inputs; it stays available."""
        await self._agents.abort(self._scope, self.id)


class ProgramScopeSession:
    """A Program scope opened from a caller (`async with`): Agents made with `agent()`
    belong to it and go offline when it ends; `closed` says what did not stop."""

    def __init__(
        self,
        agents: ProgramAgents,
        caller: Agent,
        *,
        cleanup_timeout: float = CLEANUP_TIMEOUT_S,
        program_id: str | None = None,
        records: ScopeRecords | None = None,
    ) -> None:
        program_id = program_id or new_program_id()
        self.scope = ProgramScope(program_id, program_id[:8], caller)
        self._agents = agents
        self._cleanup_timeout = cleanup_timeout
        self._records = records
        self._opened = False
        self._ending: asyncio.Event | None = None
        self.closed: Closed | None = None

    @property
    def id(self) -> str:
        return self.scope.program_id

    def agent(
        self,
        name: str | None = None,
        cwd: str | None = None,
        context: str | None = None,
        model: str | None = None,
        thinking_level: str | None = None,
    ) -> ProgramAgentHandle:
        """A new idle Agent of the scope (options as `spawn` takes them)."""
        options: dict[str, JsonValue] = {
            "name": name,
            "cwd": cwd,
            "context": context,
            "model": model,
            "thinking_level": thinking_level,
        }
        given: dict[str, JsonValue] = {k: v for k, v in options.items() if v is not None}
        agent_id, made = self._agents.create(self.scope, given)
        return ProgramAgentHandle(self._agents, self.scope, agent_id, made)

    async def close(self) -> Closed:
        """End the scope: its Agents' unfinished inputs end `aborted`, and they go offline;
        recorded `completed`."""
        return await self.end("completed", None)

    async def end(self, state: ScopeEnd, reason: str | None) -> Closed:
        """End the scope as `state` says, once: a later or concurrent end waits for the
        first and changes nothing."""
        if self._ending is not None:
            await self._ending.wait()
            return self.closed or Closed()
        self._ending = asyncio.Event()
        try:
            self.closed = await self._agents.close(self.scope, self._cleanup_timeout)
        finally:
            if self._records is not None and self._opened:
                self._records.ended(self, state, reason)
            self._ending.set()
        return self.closed

    async def __aenter__(self) -> ProgramScopeSession:
        if self._records is not None and not self._opened:
            self._records.opened(self)
            self._opened = True
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is None:
            await self.close()
        elif isinstance(exc, Exception):
            await self.end("failed", raised(exc))
        else:  # cancelled (or interrupted): nothing of its own went wrong
            await self.end("stopped", CANCELLED)


def _is_model_class(schema: Any) -> bool:
    """A pydantic model class (told by its methods: pydantic is the embedder's import)."""
    return isinstance(schema, type) and all(
        callable(getattr(schema, m, None)) for m in ("model_json_schema", "model_validate")
    )
