"""A loaded Agent: one session, its loop and its tools, as users and tests drive it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from piagents.agents.accepted import Accepted
from piagents.ai.messages import ToolCall
from piagents.ai.models import ModelRef, ThinkingLevel, parse_thinking_level
from piagents.ai.registry import ProviderRegistry
from piagents.config import Settings
from piagents.harness.compaction import auto_compaction
from piagents.harness.events import Delivery, Input, RunOutcome
from piagents.harness.loop import AgentLoop, LoopHooks
from piagents.harness.loop_records import LoopConfig
from piagents.harness.session import Session
from piagents.store.records import CompactionEntry, InputDelivery, SessionRecord

ProgramScopes = Callable[["Agent"], AbstractAsyncContextManager[Any]]
"""Opens a Program scope for a caller (`programs.sdk.ProgramScopeSession`, whose Agents
are the runtime's Program Agents)."""


class RunFailed(Exception):
    """A prompt's run ended `failed`; the message is the model's or provider's error."""


@dataclass(frozen=True, slots=True)
class ToolCallResult:
    """What `call_tool` returns: exactly what the model would read."""

    text: str
    details: Any
    is_error: bool


class UserSide(Protocol):
    """What the user of an Agent asks of the Pi Agents coordinator."""

    def user_input(
        self, agent: Agent, text: str, delivery: InputDelivery = "followUp"
    ) -> Accepted: ...

    async def user_stop(self, agent: Agent) -> list[Input]: ...

    def sessions_changed(self, record: SessionRecord) -> None: ...


class Agent:
    """A loaded Agent. Roots come from `Runtime.open_root`."""

    def __init__(
        self,
        session: Session,
        loop: AgentLoop,
        *,
        providers: ProviderRegistry,
        settings: Callable[[], Settings],
        user: UserSide,
        programs: ProgramScopes | None = None,
    ) -> None:
        self.session = session
        self.loop = loop
        self._providers = providers
        self._settings = settings
        self._user = user
        self._programs = programs  # what `program()` opens

    @property
    def id(self) -> str:
        return self.session.id

    @property
    def name(self) -> str | None:
        return self.session.record.name

    @property
    def cwd(self) -> str:
        return self.session.record.cwd

    @property
    def model(self) -> ModelRef:
        return self.loop.model

    @property
    def thinking(self) -> ThinkingLevel:
        return self.loop.thinking

    @property
    def context_window(self) -> int:
        """The current model's context window in tokens, as settings, its server (once asked)
        or the table of known models give it; what the footer shows."""
        return self._providers.model_info(self.loop.model).context_window

    @property
    def tool_names(self) -> list[str]:
        return list(self.loop.tools)

    async def prompt(self, text: str) -> str:
        """Send one user input and run it to its answer.

        Raises RunFailed when the run fails (its message says why, e.g. the store
        could not record it), or a StoreError when the store cannot take the input."""
        outcome = await self.prompt_outcome(text)
        if outcome.status == "failed":
            raise RunFailed(outcome.answer)
        return outcome.answer

    async def prompt_outcome(self, text: str) -> RunOutcome:
        accepted = self._user.user_input(self, text)
        assert accepted.future is not None
        return await accepted.future

    def send(self, text: str, deliver_as: Delivery = "followUp") -> None:
        """A user input (`followUp` or `steer`) or a write, without waiting for it."""
        if deliver_as not in ("followUp", "steer", "write"):
            raise ValueError(f"unknown delivery {deliver_as!r}")
        self._user.user_input(self, text, deliver_as)

    async def call_tool(self, name: str, args: dict[str, Any]) -> ToolCallResult:
        """Invoke a tool this Agent is offered, as if its model had called it.

        `details` is always a dict (empty when the tool reports none)."""
        if self.loop.closed:
            raise RuntimeError("the agent is closed")  # as a prompt to it says
        result = await self.loop.run_tool(
            ToolCall(name, dict(args) if isinstance(args, dict) else args)
        )
        details = result.details if isinstance(result.details, dict) else {}
        return ToolCallResult(result.text, details, result.is_error)

    async def abort(self) -> list[Input]:
        """Stop the current turn as its user; returns the user's inputs taken back."""
        return await self._user.user_stop(self)

    async def compact(self, instructions: str | None = None) -> CompactionEntry | None:
        """Summarise older context now (manual compaction); None when there is nothing
        to summarise. Raises `CompactionError` when the model cannot summarise."""
        if self.loop.busy:
            raise RuntimeError("cannot compact while a turn is running; wait for it or abort it")
        from piagents.harness.compaction import compact, fit_to_window
        from piagents.harness.events import Compacted

        window = await self._providers.context_window(self.loop.model)
        entry = await compact(
            self.session,
            self._providers.resolve(self.loop.model),
            self.loop.model,
            fit_to_window(self._settings().compaction, window),
            custom_instructions=instructions,
            retry=self._settings().retry,
        )
        if entry is not None:
            self.loop.emit(Compacted(entry.summary, entry.tokens_before))
        return entry

    def program(self) -> AbstractAsyncContextManager[Any]:
        """A Program scope for the embedder's own Python (`async with root.program() as p`,
        a `programs.ProgramScopeSession`): `p.agent(...)` makes Agents that belong to it,
        as a Program's do, and go offline when it ends; `await h.send(..., schema=Model)`
        returns a `Model`."""
        if self._programs is None:
            raise RuntimeError("this Agent was given no Program scopes")
        return self._programs(self)

    def clear_queue(self) -> list[Input]:
        """Take back the user's queued inputs; other Agents' messages stay queued."""
        return self.loop.withdraw_queued(lambda i: i.meta.get("sender") is None)

    def set_model(self, model: str) -> None:
        ref = ModelRef.parse(model)
        self._providers.resolve(ref)  # fail now, not at the next turn
        self.loop.model = ref
        self.session.set_model(str(ref))
        if ref.thinking is not None:
            self.set_thinking(ref.thinking)

    def set_thinking(self, level: str) -> None:
        self.loop.thinking = parse_thinking_level(level)
        self.session.set_thinking(self.loop.thinking)

    def set_name(self, name: str | None) -> None:
        self.session.set_name(name)
        self.loop.agent_name = name
        self._user.sessions_changed(self.session.record)


def new_loop(
    session: Session,
    *,
    task_group: asyncio.TaskGroup,
    providers: ProviderRegistry,
    settings: Settings,
    model: ModelRef,
    thinking: ThinkingLevel,
    output_dir: Path,
) -> AgentLoop:
    """The loop of a session being loaded, as settings configure it (tools and system
    prompt come once the Agent exists)."""
    return AgentLoop(
        session,
        task_group=task_group,
        resolve_provider=providers.resolve,
        model=model,
        thinking=thinking,
        tools=[],
        system_prompt="",
        output_dir=output_dir,
        config=LoopConfig(
            tool_execution=settings.tool_execution,
            steering_mode=settings.steering_mode,
            follow_up_mode=settings.follow_up_mode,
            retry=settings.retry,
            max_model_calls=settings.agents.max_model_calls_per_run,
        ),
        hooks=LoopHooks(
            before_model_call=auto_compaction(settings.compaction, providers.context_window)
        ),
        agent_name=session.record.name,
    )
