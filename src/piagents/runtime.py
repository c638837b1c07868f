"""The runtime: one home (settings, store, outputs), its loaded Agents and their tasks."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from pathlib import Path
from types import TracebackType
from typing import Any

from piagents.agent import Agent, new_loop
from piagents.agents import texts
from piagents.agents.clock import WaitClock
from piagents.agents.coordinator import AgentCallError
from piagents.agents.operations import fork_entries
from piagents.agents.ports import WakePolicy
from piagents.agents.woken import WokenRoots
from piagents.ai.faux import FunctionModel
from piagents.ai.models import ModelRef, ThinkingLevel, parse_thinking_level
from piagents.ai.registry import NO_MODEL, ProviderConfigError, ProviderRegistry, default_model
from piagents.background import contained
from piagents.composition import compose
from piagents.config import Settings, SettingsError, check_agent_api, default_home, load_settings
from piagents.events.hub import EventHub, Listener, Subscription
from piagents.events.records import ChangedElsewhere, RuntimeEvent, TakenOver
from piagents.events.states import StateTracker
from piagents.events.store import publishing
from piagents.extensions import load_extensions
from piagents.harness.context_files import ContextFileCache
from piagents.harness.session import Session
from piagents.harness.system_prompt import prompt_for_cwd
from piagents.harness.tools.base import Tool
from piagents.presence import Presence
from piagents.programs.texts import CALLER_OFFLINE, RUNTIME_CLOSED
from piagents.store.base import LeaseHolder, SessionNotFound, Store, StoreError
from piagents.store.records import GenerationPlacement, SessionRecord
from piagents.store.selection import open_store
from piagents.store.sqlite_errors import home_error
from piagents.supervision import briefing
from piagents.tool_choice import ToolChoice, choose_tools

log = logging.getLogger("piagents")


class Runtime:
    """Owns the store, the providers and every loaded Agent of one home. Use as
    `async with Runtime(...) as rt:`; closing takes its Agents offline.
    `wait_clock` times the `agent` tool's waits (tests pass one that needs no real time).
    """

    def __init__(
        self,
        home: str | Path | None = None,
        *,
        model: str | FunctionModel | None = None,
        thinking: str | None = None,
        settings: dict[str, Any] | None = None,
        tools: list[str] | None = None,
        system_prompt: str | None = None,
        append_system_prompt: str | None = None,
        store: Store | None = None,
        wait_clock: WaitClock | None = None,
        program_only: bool = False,
    ) -> None:
        self.home = Path(home).expanduser() if home is not None else default_home()
        try:
            self.home.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise home_error(self.home, exc) from exc
        self.settings: Settings = load_settings(self.home, settings)
        self._settings_given = settings
        if self.settings.errors:
            raise SettingsError("\n".join(self.settings.errors))
        function_model = model if isinstance(model, FunctionModel) else None
        # A model given here beats the saved one of every session this runtime reopens.
        self.explicit_model: str | None = (
            f"faux/{function_model.model_id}"
            if function_model is not None
            else (model if isinstance(model, str) and model else None)
        )
        self.default_model: str | None = self.explicit_model or default_model(self.settings)
        self.default_thinking: ThinkingLevel = (
            parse_thinking_level(thinking) if thinking else self.settings.default_thinking
        )
        self._thinking_given = thinking
        self.providers = ProviderRegistry(self.settings, function_model)
        self.tool_names = tools
        self.tool_choice = ToolChoice(tuple(tools) if tools is not None else None, program_only)
        self.custom_system_prompt, self.append_system_prompt = system_prompt, append_system_prompt
        self.context_files = ContextFileCache()  # read once per directory while unchanged
        self._store = store
        self._tg: asyncio.TaskGroup | None = None
        self.holder: LeaseHolder | None = None
        self.agents: dict[str, Agent] = {}
        # events: what front ends subscribe to, and the states the coordinator touches.
        self.event_hub = EventHub()
        self.agent_states = StateTracker(self.event_hub)
        self.closing = False
        # An input to an offline root loads it here (the SDK), or in a background
        # `pi-agents serve` process (the command line); a worker resumes leftovers.
        self.wake_policy = WakePolicy(in_process=True)
        # Its lease holder in the store, that holder's heartbeat, and its mailbox.
        self.presence = Presence(self.agents, self._on_poke, self._taken_over)
        self._extensions: list[Tool] | None = None
        self.abandoned: list[str] = []  # Agents whose work did not stop when unloaded
        self.extension_warnings: list[str] = []
        # Where managed agents run when settings name no placement (the CLI: `process`).
        self.default_placement: GenerationPlacement = "inline"
        parts = compose(self, self.event_hub, self.agent_states, self.wake_policy, wait_clock)
        self.coordinator = parts.coordinator
        self.delivery = parts.delivery
        self.operations = parts.operations
        self.supervisor = parts.supervisor
        self.read_model = parts.read_model  # what front ends read beside the events
        self.programs = parts.programs  # Programs of the `program` tool; their sandbox
        # Roots woken by an input from another Agent; unloaded again once idle.
        self._woken = WokenRoots(
            agents=self.agents,
            # A root with a Program running is not idle: its Program would stop.
            state_of=lambda i: (
                "running" if self.programs.running(i) else self.coordinator.state_of(i)
            ),
            unload=self.unload,
            background=self.background,
            closing=lambda: self.closing or self._tg is None,
        )

    def worker_options(self) -> dict[str, Any]:
        """What a managed agent's worker process needs of this runtime's own options
        (those not in the home's settings file), as JSON."""
        options: dict[str, Any] = {
            "settings": self._settings_given,
            "tools": self.tool_names,
            "systemPrompt": self.custom_system_prompt,
            "appendSystemPrompt": self.append_system_prompt,
            "thinking": self._thinking_given,
        }
        return {k: v for k, v in options.items() if v is not None}

    @property
    def warnings(self) -> tuple[str, ...]:
        """Problems with settings and extensions, to show at startup."""
        self._extension_tools()
        return (*self.settings.warnings, *self.extension_warnings)

    def events(self, maxsize: int = 10_000) -> Subscription:
        """Every runtime event from now on, as a bounded async iterator (`events.hub`)."""
        return self.event_hub.events(maxsize)

    def subscribe(
        self, listener: Listener, kinds: tuple[type[RuntimeEvent], ...] | None = None
    ) -> Callable[[], None]:
        """Call `listener` with every runtime event from now on (or those of `kinds`
        only); returns its unsubscribe."""
        return self.event_hub.subscribe(listener, kinds)

    @property
    def store(self) -> Store:
        if self._store is None:
            raise RuntimeError("the runtime is not open: use `async with Runtime(...)`")
        return self._store

    # ---- lifecycle ------------------------------------------------------------

    async def __aenter__(self) -> Runtime:
        leases = self.settings.agents
        if self._store is None:
            lapse = leases.lease_lapse_ms / 1000
            self._store = open_store(self.home, self.settings.store, lease_lapse=lapse)
        self._store = publishing(self._store, self.event_hub)  # events: commits announced
        self._tg = asyncio.TaskGroup()
        await self._tg.__aenter__()
        self.holder = await self.presence.open(self._store, leases.lease_renew_ms / 1000)
        return self

    def background(self, work: Coroutine[Any, Any, object], what: str) -> None:
        """Run `work` in the runtime's task group, where an error it raises is logged
        and ends only that work: it never takes the runtime and its Agents down."""
        if self._tg is None:
            work.close()
            return
        self._tg.create_task(contained(work, what))

    def _on_poke(self) -> None:
        self.event_hub.publish(ChangedElsewhere())  # events: another process wrote
        self.delivery.on_poke()

    def _taken_over(self, agent: Agent) -> None:
        """Another runtime took its lease after ours lapsed: unloaded here (the store
        refuses what it would still write)."""
        if not self.closing:
            self.event_hub.publish(TakenOver(agent.id))  # events
            self.background(self.unload(agent), "unloading a session taken over")

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            await self.presence.close_mailbox()
            await self.close_agents()
        finally:
            try:
                assert self._tg is not None
                # The body's own error comes out as itself, not wrapped in an
                # ExceptionGroup: the group only learns of cancellation.
                if isinstance(exc, asyncio.CancelledError):
                    await self._tg.__aexit__(exc_type, exc, tb)
                else:
                    await self._tg.__aexit__(None, None, None)
            finally:
                await self.presence.close()
                self.event_hub.close()
                self.store.close()

    async def close_agents(self) -> None:
        """Take every Agent offline, owned ones bottom-up before their roots."""
        self.closing = True
        self.supervisor.shut_down()
        await self.programs.close()  # Programs stop (recorded) before their Agents go
        timeout = self.settings.agents.abort_timeout_ms / 1000
        for agent in sorted(self.agents.values(), key=self._depth, reverse=True):
            await self.unload(agent, timeout)

    def _depth(self, agent: Agent) -> int:
        depth, record = 0, agent.session.record
        while record.owner_id is not None:
            depth += 1
            owner = self.agents.get(record.owner_id)
            if owner is None:
                break
            record = owner.session.record
        return depth

    async def unload(self, agent: Agent, timeout: float | None = None) -> None:
        if agent.session.record.is_root:
            for child in sorted(
                (a for a in self.agents.values() if a.session.record.root_id == agent.id),
                key=self._depth,
                reverse=True,
            ):
                await self.unload(child, timeout)
        await self.programs.stop_for(agent.id, RUNTIME_CLOSED if self.closing else CALLER_OFFLINE)
        if await agent.loop.close(timeout):
            # Its tools know the Agent: without them the Agent, its loop and its session
            # (a long one is most of the memory) are freed when the last reference
            # goes, not at some later collection of cycles.
            agent.loop.tools = {}
        else:
            # Abandoned: it no longer counts as live work, but may run until we exit.
            self.abandoned.append(agent.id)
            log.warning(
                "Agent %s did not stop within %.1f s while going offline and may still be "
                "running until this process exits.",
                agent.name or agent.id,
                timeout if timeout is not None else 0.0,
            )
        if self.holder is not None and agent.session.record.is_root:
            # Its tree's last writes (a run's end, say) may still be on the store's write
            # threads, fenced by the lease about to be given up.
            with contextlib.suppress(Exception):
                await self.store.later_writes()
        self.agents.pop(agent.id, None)
        self.coordinator.detach(agent)
        self._woken.discard(agent.id)
        if self.holder is not None and agent.session.record.is_root:
            with contextlib.suppress(Exception):
                self.store.set_state(agent.id, "idle")
                self.store.release_lease(agent.id, self.holder)
        self.agent_states.unloaded(agent.id)  # events: once its lease is released

    # ---- agents -------------------------------------------------------------

    async def open_root(
        self,
        cwd: str | Path | None = None,
        *,
        session: str | None = None,
        name: str | None = None,
        model: str | None = None,
        thinking: str | None = None,
        agent_api: str | None = None,
    ) -> Agent:
        """Open a new root Agent, or reopen the saved session `session`."""
        if session is not None:
            loaded = self.agents.get(session)
            if loaded is not None:
                return loaded
            record = self.store.get_session(session)
            if record is None:
                raise SessionNotFound(f"No session {session}")
            assert self.holder is not None
            self.store.acquire_lease(session, self.holder)
            try:
                s = Session.load(self.store, session)
                agent = self._load(s, model=model, thinking=thinking, reopened=True)
            except BaseException:
                self.store.release_lease(session, self.holder)
                raise
            if self.supervisor.face(agent.session.record) == "supervision":
                self.supervisor.recover(agent.id)
            return agent
        ref = self._model_ref(model)
        level = self._thinking(thinking, ref)
        meta: dict[str, Any] = {}
        if agent_api is not None:
            check_agent_api(agent_api)
            meta["agentApi"] = agent_api
        s = Session.create(
            self.store,
            cwd=str(Path(cwd).expanduser().resolve() if cwd is not None else Path.cwd()),
            model=str(ref) if ref else "",
            thinking=level,
            name=name,
            meta=meta,
        )
        assert self.holder is not None
        self.store.acquire_lease(s.id, self.holder)
        return self._load(s)

    def _model_ref(self, model: str | None) -> ModelRef | None:
        text = model or self.default_model
        return ModelRef.parse(text) if text else None

    def _thinking(self, thinking: str | None, ref: ModelRef | None) -> ThinkingLevel:
        if thinking:
            return parse_thinking_level(thinking)
        if ref is not None and ref.thinking is not None:
            return ref.thinking
        return self.default_thinking

    def _load(
        self,
        session: Session,
        *,
        model: str | None = None,
        thinking: str | None = None,
        reopened: bool = False,
    ) -> Agent:
        """Load `session`; a session `reopened` from the store runs on the model and
        thinking level given to this runtime, if any, instead of its saved ones."""
        if reopened:
            model = model or self.explicit_model
        ref = self._model_ref(model or session.record.model or None)
        if ref is None:
            raise ProviderConfigError(NO_MODEL)
        if model is not None and str(ref) != session.record.model:
            session.set_model(str(ref))  # a model chosen at reopen is kept with the session
        if thinking is None and model is not None and ref.thinking is not None:
            thinking = ref.thinking  # `provider/model:level` chosen now beats the saved level
        if thinking is None and reopened:
            thinking = self._thinking_given
        level = self._thinking(thinking or session.record.thinking, ref)
        if level != session.record.thinking:
            session.set_thinking(level)
        assert self._tg is not None
        loop = new_loop(
            session,
            task_group=self._tg,
            providers=self.providers,
            settings=self.settings,
            model=ref,
            thinking=level,
            output_dir=self.home / "outputs" / session.id,
        )
        agent = Agent(
            session,
            loop,
            providers=self.providers,
            settings=lambda: self.settings,
            user=self.coordinator,
            programs=self.programs.scope,  # what its `program()` opens
        )
        tools = self.tools_for(agent)
        loop.tools = {t.name: t for t in tools}
        loop.system_prompt = prompt_for_cwd(
            Path(session.record.cwd),
            tools,
            self.home,
            custom=self.custom_system_prompt,
            append=self.append_system_prompt,
            find=self.context_files.find,
        )
        face = self.supervisor.face(session.record)
        if face == "managed":
            loop.system_prompt = briefing.managed_system_prompt(
                self.supervisor, agent, loop.system_prompt
            )
        elif face == "supervision":
            addition = briefing.system_prompt_addition(self.supervisor, agent)
            if addition:
                loop.system_prompt = f"{loop.system_prompt}\n\n{addition}"
        if reopened:  # its Programs a killed process left running end `stopped`
            self.programs.caller_loaded(session.id)
        self.agents[session.id] = agent
        loop.listeners.append(self.event_hub.loop_listener(session.id))  # events
        self.agent_states.loaded(session.record)  # events
        try:
            self.coordinator.attach(agent)
            if session.record.is_root:
                self.delivery.drain()
        except BaseException:  # e.g. the store failed: leave nothing half-loaded
            self.agents.pop(session.id, None)
            self.agent_states.unloaded(session.id)  # events
            self.coordinator.detach(agent)
            raise
        return agent

    def load_managed(self, session: Session) -> Agent:
        """Load a managed agent's session here (placement `inline`); its model must resolve."""
        self.providers.resolve(ModelRef.parse(session.record.model))
        return self._load(session)

    def create_owned(
        self, owner: Agent, *, name: str, cwd: str, model: str, thinking: ThinkingLevel, fork: bool
    ) -> Agent:
        """A new Agent owned by `owner`, in its tree, running in this runtime."""
        record = owner.session.record
        session = Session.create(
            self.store,
            cwd=cwd,
            model=model,
            thinking=thinking,
            name=name,
            owner_id=record.id,
            root_id=record.root_id or record.id,
        )
        try:
            if fork:
                entries = fork_entries(owner)
                if entries:
                    session.append(*entries)
            return self._load(session)
        except BaseException:
            self._discard(session.record.id)
            raise

    async def discard_owned(self, agent: Agent) -> None:
        """Take back an owned Agent whose spawn failed before its first input was
        accepted: nothing of it stays, and its name is free again."""
        await self.unload(agent)
        self._discard(agent.id)
        self.coordinator.session_discarded(agent.session.record)

    def _discard(self, session_id: str) -> None:
        try:
            self.store.discard_session(session_id)
        except StoreError as exc:  # the store cannot be written: it stays, idle
            log.warning("A half-made Agent %s could not be removed: %s", session_id, exc)

    async def wake(self, record: SessionRecord) -> Agent:
        """Load an Agent that is not loaded here, for an input sent to it."""
        if not record.is_root:
            root = self.agents.get(record.root_id or "")
            if root is None:
                raise AgentCallError(texts.no_match(record.id))
            return self._load(Session.load(self.store, record.id), reopened=True)
        assert self.holder is not None
        self.store.acquire_lease(record.id, self.holder)
        try:
            agent = self._load(Session.load(self.store, record.id), reopened=True)
        except BaseException:
            self.store.release_lease(record.id, self.holder)
            raise
        self._woken.add(agent)
        return agent

    def tools_for(self, agent: Agent) -> list[Tool]:
        return choose_tools(
            agent,
            supervisor=self.supervisor,
            operations=self.operations,
            extensions=self._extension_tools(),
            choice=self.tool_choice,
            default_tools=self.settings.default_tools,
            owner=self.agents.get(agent.session.record.owner_id or ""),
            programs=lambda: self.programs,
        )

    def extension_tools(self) -> list[Tool]:
        """The tools of the extensions in settings (loaded once)."""
        return self._extension_tools()

    def _extension_tools(self) -> list[Tool]:
        if self._extensions is None:
            tools, warnings = load_extensions(self.settings.agents.extensions, self.home)
            self._extensions = tools
            self.extension_warnings = warnings
        return list(self._extensions)

    def latest_session(self, cwd: str | Path) -> str | None:
        sessions = self.store.list_sessions(cwd=str(Path(cwd).resolve()), roots_only=True, limit=1)
        return sessions[0].id if sessions else None
