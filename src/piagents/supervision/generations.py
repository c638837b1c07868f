"""The generation state machine: the one writer of a live generation's flags.

A generation runs here from `adopt` until it ends once: its outcome and the
result message for its owner are committed in one transaction
(`Store.update_generation`), then the message is delivered from the store, so a
crash between the two loses nothing and repeats nothing. The actions (`controls`,
`ask_owner`) and a worker's link change a live generation only through this
module's methods.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

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
    RunStarted,
    ToolStarted,
)
from piagents.harness.loop import AgentLoop
from piagents.store.base import StoreError
from piagents.store.records import GenerationRecord, InputRecord
from piagents.supervision import texts
from piagents.supervision.definitions import AgentDefinition
from piagents.supervision.live import LiveGeneration
from piagents.supervision.ports import AgentHandle, ControlReceiver, SupervisionPorts
from piagents.supervision.records import MANAGED
from piagents.supervision.texts import State, Status

log = logging.getLogger("piagents")


class Generations:
    """The generations running in this runtime, by generation id."""

    def __init__(self, ports: SupervisionPorts, listeners: list[Callable[[], None]]) -> None:
        self.ports = ports
        self.live: dict[str, LiveGeneration] = {}
        self.listeners = listeners  # called with no arguments when records change
        self.closing = False
        # In a `pi-agents worker` process: its link to the lead (see `worker`).
        self.worker: ControlReceiver | None = None
        # Agents of ended generations on their way offline, by session id: set once gone.
        self._going: dict[str, asyncio.Event] = {}

    def changed(self) -> None:
        for listener in list(self.listeners):
            listener()
        self.ports.publish(SupervisionChanged())  # events
        self.ports.coordinator.changed()

    def of_session(self, session_id: str) -> GenerationRecord | None:
        for live in self.live.values():
            if live.gen.session_id == session_id:
                return live.gen
        return None

    def of_agent(self, agent: AgentHandle) -> LiveGeneration | None:
        return next((v for v in self.live.values() if v.agent is agent), None)

    # ---- start ------------------------------------------------------------------------

    def adopt(self, gen: GenerationRecord, agent: AgentHandle, definition: AgentDefinition) -> None:
        """Run `gen` here, with `agent` loaded for it (inline, or in its worker)."""
        live = LiveGeneration(gen, agent, definition)
        agent.loop.hooks.before_model_call = self._retirement(
            live, agent.loop.hooks.before_model_call
        )
        self.live[gen.id] = live
        agent.loop.listeners.append(lambda event: self._on_event(live, event))

    def roll_back(self, gen: GenerationRecord) -> bool:
        """A start that failed: `gen` ends `failed`; False when that could not be recorded."""
        live = self.live.pop(gen.id, None)
        try:
            ended = msgspec.structs.replace(
                gen, state="ended", outcome="failed", error=texts.START_FAILED, ended=now_ms()
            )
            self.ports.store().update_generation(ended, end=True)
            if live is not None:
                self.ports.background(
                    self.ports.unload(live.agent, None), "taking an agent offline"
                )
            return True
        except Exception:
            return False

    def _retirement(
        self, live: LiveGeneration, compaction: Callable[[AgentLoop], Awaitable[None]] | None
    ) -> Callable[[AgentLoop], Awaitable[None]]:
        """With `contextRetirement` on, a managed agent whose context reaches the automatic
        compaction threshold is retired instead of compacted: told once to finish its
        coherent work and hand off, and its session can then not be continued."""

        async def before_model_call(loop: AgentLoop) -> None:
            settings = self.ports.settings()
            if not settings.agents.context_retirement:
                if compaction is not None:
                    await compaction(loop)
                return
            if live.retiring:
                return
            window = await self.ports.context_window(loop.model)
            threshold = compaction_threshold(window, self.ports.settings().compaction)
            if loop.session.context_tokens() > threshold:
                live.retiring = True
                entry = loop.session.append_message(UserMessage.of(texts.RETIREMENT_NOTICE))
                loop.emit(MessageCommitted(entry.message))
                self.changed()

        return before_model_call

    # ---- the live agents' events ---------------------------------------------------------

    def _on_event(self, live: LiveGeneration, event: LoopEvent) -> None:
        live.last_activity = now_ms()
        if isinstance(event, AssistantDelta) and event.kind == "text":
            live.tail.feed(event.text)
        elif isinstance(event, ToolStarted):
            live.tail.feed(texts.tail_tool_line(event.call.name, _compact(event.call.args)))
        elif isinstance(event, MessageCommitted):
            m = event.message
            if isinstance(m, ToolResultMessage):
                live.tail.feed(m.text + "\n")
            elif isinstance(m, AssistantMessage) and m.text:
                live.tail.feed("\n")
        elif isinstance(event, RunStarted):
            self.set_state(live, "working")
        elif isinstance(event, RunEnded):
            live.outcome = event.outcome
            with contextlib.suppress(RuntimeError):
                asyncio.get_running_loop().call_soon(self._settle, live, FIRST_RETRY_S)
        self.changed()

    def set_state(self, live: LiveGeneration, state: State) -> None:
        if live.gen.state == state or live.ending:
            return
        changed = msgspec.structs.replace(live.gen, state=state, updated=now_ms())
        if self.ports.store().update_generation(changed):
            live.gen = changed

    # ---- the end -------------------------------------------------------------------------

    def _settle(self, live: LiveGeneration, retry_in: float) -> None:
        """`check_settled`, again later while the store cannot record the end."""
        try:
            self.check_settled(live)
        except StoreError as exc:
            live.ending = False
            log.warning("The end of %s could not be recorded yet: %s", live.gen.label, exc)
            asyncio.get_running_loop().call_later(
                retry_in, self._settle, live, min(retry_in * 2, LAST_RETRY_S)
            )

    def check_settled(self, live: LiveGeneration) -> None:
        """After a run: end the generation when its agent has nothing left to do."""
        if live.ending or live.interrupting or self.closing or live.gen.id not in self.live:
            return
        agent = live.agent
        if agent.loop.busy or agent.loop.phase != "idle" or live.ask is not None:
            return
        children = self.ports.store().generations(owner_id=agent.id, live=True)
        if any(c.live for c in children):
            self.set_state(live, "blocked")
            return
        outcome = live.outcome
        if outcome is None:
            return
        status: Status = "aborted"  # a run that neither completed nor failed
        if outcome.status == "completed":
            status = "completed"
        elif outcome.status == "failed":
            status = "failed"
        if live.retiring and status == "completed":
            status = "retired"
        error = outcome.answer if status == "failed" else None
        self.end(live, status, "" if status == "failed" else outcome.answer, error)

    def end(self, live: LiveGeneration, status: Status, answer: str, error: str | None) -> bool:
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
            status=status,
            final_answer=answer,
            error=error,
        )
        result = self.ports.delivery.result_record(gen.owner_id, gen.session_id, gen.root_id, text)
        if status == "retired":
            self._mark_retired(gen.session_id)
        ended = self.ports.store().update_generation(final, end=True, result=result)
        live.gen = final
        self.live.pop(gen.id, None)
        if ended:
            self.deliver(gen.owner_id)
        if not self.ports.closing():
            gone = self._going.setdefault(live.agent.id, asyncio.Event())
            self.ports.background(self._take_offline(live.agent, gone), "taking an agent offline")
        self.changed()
        return ended

    async def _take_offline(self, agent: AgentHandle, gone: asyncio.Event) -> None:
        try:
            await asyncio.sleep(0)
            if agent.id in self.ports.agents:
                await self.ports.unload(agent, self._abort_timeout())
        finally:
            gone.set()
            if self._going.get(agent.id) is gone:
                del self._going[agent.id]

    def _abort_timeout(self) -> float:
        return self.ports.settings().agents.abort_timeout_ms / 1000

    async def offline(self, session_id: str) -> None:
        """Wait until the agent of `session_id`'s ended generation has gone offline, as it
        does right after its result (bounded: an agent that does not stop is abandoned
        within the abort timeout). Returns at once when none is on its way."""
        gone = self._going.get(session_id)
        if gone is not None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._abort_timeout() + 1):
                    await gone.wait()

    def _mark_retired(self, session_id: str) -> None:
        store = self.ports.store()
        record = store.get_session(session_id)
        if record is None:
            return
        meta = dict(record.meta)
        meta[MANAGED] = {**meta.get(MANAGED, {}), "retired": True}
        store.update_session(session_id, meta=meta)

    def deliver(self, recipient_id: str) -> None:
        """Hand messages waiting in the store to their recipient, wherever it is. A
        worker only nudges the lead: if it is down, it drains on restart."""
        self.ports.delivery.hand_over(recipient_id, wake=self.worker is None)

    # ---- interrupt, ask_owner and close ------------------------------------------------

    @contextlib.asynccontextmanager
    async def interrupting(self, live: LiveGeneration) -> AsyncIterator[None]:
        """While an interrupt aborts `live`'s run, the run's end is not the generation's."""
        live.interrupting = True
        try:
            yield
        finally:
            live.interrupting = False

    def begin_ask(
        self,
        live: LiveGeneration,
        asked: GenerationRecord,
        notice: InputRecord,
        future: asyncio.Future[str],
    ) -> bool:
        """Record `live`'s question (`asked`) with the owner's `notice`; False when the
        generation has ended meanwhile."""
        live.ask = future
        if not self.ports.store().update_generation(asked, result=notice):
            live.ask = None
            return False
        live.gen = asked
        self.deliver(asked.owner_id)
        self.changed()
        return True

    def end_ask(self, live: LiveGeneration) -> None:
        """The question was answered (or abandoned): `live` works again."""
        live.ask = None
        if live.gen.id in self.live and not live.ending:
            cleared = msgspec.structs.replace(
                live.gen, ask_id=None, question=None, state="working", updated=now_ms()
            )
            if self.ports.store().update_generation(cleared):
                live.gen = cleared
        self.changed()

    @staticmethod
    def answer(live: LiveGeneration, text: str) -> None:
        """The owner's reply to `live`'s pending question."""
        if live.ask is not None and not live.ask.done():
            live.ask.set_result(text)

    def close(self, live: LiveGeneration) -> bool:
        """`live` ends `closed` (its question, if any, abandoned: then True); its agent is
        still loaded."""
        live.ending = True
        abandoned = False
        if live.ask is not None and not live.ask.done():
            abandoned = True
            live.ask.cancel()
        self.live.pop(live.gen.id, None)
        closed = msgspec.structs.replace(
            live.gen, state="ended", outcome="closed", updated=now_ms(), ended=now_ms()
        )
        self.ports.store().update_generation(closed, end=True)
        return abandoned

    def shut_down(self) -> None:
        """The runtime is closing: generations running here end `aborted`; their owners
        get the result when they next run."""
        self.closing = True
        for live in list(self.live.values()):
            if live.ask is not None and not live.ask.done():
                live.ask.cancel()
            answer = live.outcome.answer if live.outcome is not None else ""
            self.end(live, "aborted", answer, texts.CLOSED_BEFORE_FINISHED)


def _compact(args: Any) -> str:
    text = msgspec.json.encode(args).decode()
    return text if len(text) <= 200 else text[:199] + "…"
