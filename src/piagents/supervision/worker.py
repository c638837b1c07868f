"""`pi-agents worker --home H --generation G`: one managed agent's generation in its
own process (placements `process` and `tmux`).

The lead's runtime recorded the generation (state `starting`) and left the
assignment in the managed session's inbox before starting us. The worker opens
a runtime on the same home, takes the session's lease, loads the agent as the
lead would, records its own pid, host, start time and lease token in the
generation (the startup evidence, and what recovery checks), and runs. Its
supervisor ends the generation as inline placement does: the outcome and the
owner's result in one transaction, then a poke to the lead, which may be down:
the result waits in the store for its next drain. Control messages (interrupt,
reply, close) arrive through the same inbox.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sys
from typing import Any

import msgspec

from piagents.ai.messages import AssistantMessage, ToolResultMessage, now_ms
from piagents.harness.events import AssistantDelta, LoopEvent, MessageCommitted, ToolStarted
from piagents.harness.session import Session
from piagents.harness.tools.foreground import foreground
from piagents.store.base import SessionInUse, StoreError
from piagents.store.records import GenerationRecord, InputRecord
from piagents.supervision import controls, error_texts, placement, remote, texts
from piagents.supervision.host import Supervising
from piagents.supervision.ports import AgentHandle

log = logging.getLogger("piagents.worker")

EVIDENCE_INTERVAL_S = 0.25  # inspect evidence is rewritten at most 4 times a second
SAFETY_DRAIN_S = 1.0  # look in the inbox even when no poke came
PREVIOUS_EXIT_S = 10.0  # how long an ended generation's worker may take to let go


class WorkerLink:
    """The worker's side: its one generation, the lead's controls, its evidence."""

    def __init__(self, supervisor: Supervising, generation_id: str) -> None:
        self.sup = supervisor
        self.ports = supervisor.ports
        self.generation_id = generation_id
        self.agent: AgentHandle | None = None
        self.wake = asyncio.Event()
        self.stopping = False  # a signal: end as the runtime closing does (`aborted`)
        self._last_evidence: Any = None
        self._told: tuple[str, str | None] | None = None

    # ---- startup --------------------------------------------------------------------

    async def run(self) -> int:
        store = self.ports.store()
        g = store.get_generation(self.generation_id)
        if g is None or g.outcome is not None:
            log.error("generation %s is not waiting for a worker", self.generation_id)
            return 1
        holder = self.ports.holder()
        assert holder is not None
        if not await self._take_session(g.session_id):
            log.error("session %s is held by another runtime", g.session_id)
            return 1
        try:
            return await self._run(g, Session.load(store, g.session_id))
        finally:
            with contextlib.suppress(Exception):
                await store.later_writes()  # fenced by the lease given up next
            with contextlib.suppress(Exception):
                store.release_lease(g.session_id, holder)

    async def _take_session(self, session_id: str) -> bool:
        """Take the session's lease; while the worker of an earlier generation of it,
        which has ended (`continue` right after its outcome), is still exiting, wait for
        it to let go, up to PREVIOUS_EXIT_S."""
        store, holder = self.ports.store(), self.ports.holder()
        assert holder is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + PREVIOUS_EXIT_S
        while True:
            try:
                store.acquire_lease(session_id, holder)
                return True
            except SessionInUse as exc:
                ended = {e.token for e in store.generations(session_id=session_id, live=False)}
                if exc.holder.token not in ended or loop.time() >= deadline:
                    return False
            await asyncio.sleep(0.02)

    async def _run(self, g: GenerationRecord, session: Session) -> int:
        sup, ports = self.sup, self.ports
        holder = ports.holder()
        assert holder is not None
        roster = sup.roster_quietly(session.record.cwd)
        definition = roster.get(g.definition) if roster is not None else None
        if definition is None:
            self._fail(g, error_texts.definition_unavailable(g.definition))
            return 1
        try:
            agent = ports.load_managed(session)
        except Exception as exc:
            self._fail(g, error_texts.agent_not_loaded(exc))
            return 1
        self.agent = agent
        pane = os.environ.get("TMUX_PANE") if g.placement == "tmux" else None
        me = msgspec.structs.replace(
            ports.store().get_generation(g.id) or g,
            pid=holder.pid,
            host=holder.host,
            started=holder.started,
            token=holder.token,
            pane=pane or f"process:{holder.pid}",
            updated=now_ms(),
        )
        if not ports.store().update_generation(me, expect_state="starting"):
            log.error("generation %s was ended or taken before the worker started", g.id)
            await ports.unload(agent, None)
            return 1
        # The lead's `delegate` (or `continue`) waits for this record: tell it now.
        ports.background(ports.delivery.poke_holder(me.owner_id), "telling the lead")
        sup.generations.adopt(me, agent, definition)
        agent.loop.listeners.append(self._echo)
        self._say(texts.worker_banner(me.label, me.definition, me.session_id))
        sup.listeners.append(self.wake.set)
        self._write_evidence()
        ports.delivery.drain()  # the assignment
        await self._serve()
        return 0

    def _fail(self, g: GenerationRecord, error: str) -> None:
        failed = msgspec.structs.replace(
            g, state="ended", outcome="failed", error=error, updated=now_ms(), ended=now_ms()
        )
        self.ports.store().update_generation(failed, end=True)
        log.error("%s", error)

    async def _serve(self) -> None:
        """Until the generation ends and the agent is offline: keep the evidence fresh
        and look in the inbox now and then."""
        gens, agent = self.sup.generations, self.agent
        assert agent is not None
        loop = asyncio.get_running_loop()
        next_drain = loop.time() + SAFETY_DRAIN_S
        while (
            self.generation_id in gens.live or agent.id in self.ports.agents
        ) and not self.stopping:
            self.wake.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(EVIDENCE_INTERVAL_S):
                    await self.wake.wait()
            self._write_evidence()
            await self._tell_state()
            if loop.time() >= next_drain and self.generation_id in gens.live:
                next_drain = loop.time() + SAFETY_DRAIN_S
                self.ports.delivery.drain()
            await asyncio.sleep(EVIDENCE_INTERVAL_S)  # throttle: at most 4 writes a second

    async def _tell_state(self) -> None:
        """Nudge the lead when the generation's recorded state changed or the agent
        committed entries, so its views (list, the status widget, a viewer of this
        agent) follow without polling."""
        live = self.sup.generations.live.get(self.generation_id)
        if live is None or self.agent is None:
            return
        told = (live.gen.state, self.agent.session.leaf_id)
        if told == self._told:
            return
        self._told = told
        await self.ports.delivery.poke_holder(live.gen.owner_id)

    # ---- evidence ---------------------------------------------------------------------

    def _write_evidence(self) -> None:
        live = self.sup.generations.live.get(self.generation_id)
        if live is None or self.agent is None:
            return
        output, truncated = live.tail.snapshot()
        processes = [[pid, cmd] for pid, cmd in foreground.of(self.agent.id)]
        evidence = {
            "recent_output": output,
            "recent_output_truncated": truncated,
            "processes": processes,
            "tokens": self.agent.session.context_tokens(),
        }
        if evidence == self._last_evidence:
            return
        with contextlib.suppress(StoreError):  # evidence only: the next tick tries again
            placement.write_evidence(self.ports.store(), self.generation_id, evidence)
            self._last_evidence = evidence

    def _echo(self, event: LoopEvent) -> None:
        """The agent's live output on stdout: the tmux pane the user watches, or the log."""
        text = ""
        if isinstance(event, AssistantDelta) and event.kind == "text":
            text = event.text
        elif isinstance(event, ToolStarted):
            text = texts.tail_tool_line(event.call.name, json.dumps(event.call.args)[:200])
        elif isinstance(event, MessageCommitted):
            self.wake.set()  # the lead hears of it at the next look (at most 4 a second)
            m = event.message
            if isinstance(m, ToolResultMessage):
                text = m.text + "\n"
            elif isinstance(m, AssistantMessage) and m.text:
                text = "\n"
        if text:
            self._say(text)

    @staticmethod
    def _say(text: str) -> None:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.write(text)
            sys.stdout.flush()

    # ---- controls from the lead ------------------------------------------------------------

    def on_control(self, stored: InputRecord) -> None:
        data = remote.read_control(stored)
        if data.get("generation") != self.generation_id:
            return
        op = data.get("op")
        if op == "reply":
            self._reply(str(data.get("ask") or ""), str(data.get("text") or ""))
        elif op == "interrupt":
            self.ports.background(self._interrupt(str(data.get("input") or "")), "an interrupt")
        elif op == "close":
            self.ports.background(self.close(), "closing the worker")

    def _reply(self, ask: str, text: str) -> None:
        live = self.sup.generations.live.get(self.generation_id)
        if live is None or live.ask is None or live.gen.ask_id != ask:
            return
        self.sup.generations.answer(live, text)

    async def _interrupt(self, input_id: str) -> None:
        live = self.sup.generations.live.get(self.generation_id)
        if live is None or self.agent is None:
            return
        gens, ports = self.sup.generations, self.ports
        replacement: InputRecord | None = None
        async with gens.interrupting(live):
            await self.agent.loop.abort(ports.settings().agents.abort_timeout_ms / 1000)
            recorded = ports.store().inputs(recipient_ids=[self.agent.id], delivered=True)
            replacement = next((i for i in recorded if i.id == input_id), None)
            if replacement is not None:
                ports.delivery.submit_stored(self.agent, replacement)
        if replacement is None:  # nothing to continue with: the assignment ends as it is
            gens.check_settled(live)

    async def close(self) -> None:
        """Close this generation: its own agents first, then it (`closed`)."""
        live = self.sup.generations.live.get(self.generation_id)
        if live is not None:
            await controls.close_generation(self.sup, live.gen, [])
        self.wake.set()
