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

import argparse
import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from piagents.ai.messages import AssistantMessage, ToolResultMessage, now_ms
from piagents.config import SettingsError, default_home
from piagents.harness.events import AssistantDelta, LoopEvent, MessageCommitted, ToolStarted
from piagents.harness.tools.foreground import foreground
from piagents.store.records import GenerationRecord, InputRecord
from piagents.supervision import controls, placement, remote

if TYPE_CHECKING:
    from piagents.agent import Agent
    from piagents.runtime import Runtime

log = logging.getLogger("piagents.worker")

EVIDENCE_INTERVAL_S = 0.25  # inspect evidence is rewritten at most 4 times a second
SAFETY_DRAIN_S = 1.0  # look in the inbox even when no poke came


class WorkerLink:
    """The worker's side: its one generation, the lead's controls, its evidence."""

    def __init__(self, runtime: Runtime, generation_id: str) -> None:
        self.rt = runtime
        self.generation_id = generation_id
        self.agent: Agent | None = None
        self.wake = asyncio.Event()
        self.stopping = False  # a signal: end as the runtime closing does (`aborted`)
        self._last_evidence: Any = None
        self._told: tuple[str, str | None] | None = None

    # ---- startup --------------------------------------------------------------------

    async def run(self) -> int:
        rt, store = self.rt, self.rt.store
        g = store.get_generation(self.generation_id)
        if g is None or g.outcome is not None:
            log.error("generation %s is not waiting for a worker", self.generation_id)
            return 1
        holder = rt.holder
        assert holder is not None
        from piagents.harness.session import Session
        from piagents.store.base import SessionInUse

        try:
            store.acquire_lease(g.session_id, holder)
        except SessionInUse:
            log.error("session %s is held by another runtime", g.session_id)
            return 1
        try:
            return await self._run(g, Session.load(store, g.session_id))
        finally:
            with contextlib.suppress(Exception):
                store.release_lease(g.session_id, holder)

    async def _run(self, g: GenerationRecord, session: Any) -> int:
        rt, sup = self.rt, self.rt.supervisor
        holder = rt.holder
        assert holder is not None
        roster = sup._roster_quietly(session.record.cwd)
        definition = roster.get(g.definition) if roster is not None else None
        if definition is None:
            self._fail(g, f"the definition {g.definition!r} is not available to the worker")
            return 1
        try:
            agent = rt.load_managed(session)
        except Exception as exc:
            self._fail(g, f"the agent could not be loaded: {exc}")
            return 1
        self.agent = agent
        pane = os.environ.get("TMUX_PANE") if g.placement == "tmux" else None
        me = msgspec.structs.replace(
            rt.store.get_generation(g.id) or g,
            pid=holder.pid,
            host=holder.host,
            started=holder.started,
            token=holder.token,
            pane=pane or f"process:{holder.pid}",
            updated=now_ms(),
        )
        if not rt.store.update_generation(me, expect_state="starting"):
            log.error("generation %s was ended or taken before the worker started", g.id)
            await rt.unload(agent)
            return 1
        sup.adopt(me, agent, definition)
        agent.loop.listeners.append(self._echo)
        self._say(f"pi-agents worker: {me.label} ({me.definition}), session {me.session_id}\n")
        sup.listeners.append(self.wake.set)
        self._write_evidence()
        rt.coordinator.drain()  # the assignment
        await self._serve()
        return 0

    def _fail(self, g: GenerationRecord, error: str) -> None:
        failed = msgspec.structs.replace(
            g, state="ended", outcome="failed", error=error, updated=now_ms(), ended=now_ms()
        )
        self.rt.store.update_generation(failed, end=True)
        log.error("%s", error)

    async def _serve(self) -> None:
        """Until the generation ends and the agent is offline: keep the evidence fresh
        and look in the inbox now and then."""
        sup, agent = self.rt.supervisor, self.agent
        assert agent is not None
        loop = asyncio.get_running_loop()
        next_drain = loop.time() + SAFETY_DRAIN_S
        while (self.generation_id in sup.live or agent.id in self.rt.agents) and not self.stopping:
            self.wake.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(EVIDENCE_INTERVAL_S):
                    await self.wake.wait()
            self._write_evidence()
            await self._tell_state()
            if loop.time() >= next_drain and self.generation_id in sup.live:
                next_drain = loop.time() + SAFETY_DRAIN_S
                self.rt.coordinator.drain()
            await asyncio.sleep(EVIDENCE_INTERVAL_S)  # throttle: at most 4 writes a second

    async def _tell_state(self) -> None:
        """Nudge the lead when the generation's recorded state changed or the agent
        committed entries, so its views (list, the status widget, a viewer of this
        agent) follow without polling."""
        live = self.rt.supervisor.live.get(self.generation_id)
        if live is None or self.agent is None:
            return
        told = (live.gen.state, self.agent.session.leaf_id)
        if told == self._told:
            return
        self._told = told
        await remote.poke_holder(self.rt.supervisor, live.gen.owner_id)

    # ---- evidence ---------------------------------------------------------------------

    def _write_evidence(self) -> None:
        live = self.rt.supervisor.live.get(self.generation_id)
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
        self._last_evidence = evidence
        with contextlib.suppress(OSError):
            placement.write_inspect(self.rt.home, self.generation_id, evidence)

    def _echo(self, event: LoopEvent) -> None:
        """The agent's live output on stdout: the tmux pane the user watches, or the log."""
        text = ""
        if isinstance(event, AssistantDelta) and event.kind == "text":
            text = event.text
        elif isinstance(event, ToolStarted):
            text = f"\n$ {event.call.name} {json.dumps(event.call.args)[:200]}\n"
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
        if data.get("generation") != self.generation_id or self.rt._tg is None:
            return
        op = data.get("op")
        if op == "reply":
            self._reply(str(data.get("ask") or ""), str(data.get("text") or ""))
        elif op == "interrupt":
            self.rt.background(self._interrupt(str(data.get("input") or "")), "an interrupt")
        elif op == "close":
            self.rt.background(self.close(), "closing the worker")

    def _reply(self, ask: str, text: str) -> None:
        live = self.rt.supervisor.live.get(self.generation_id)
        if live is None or live.ask is None or live.gen.ask_id != ask:
            return
        if not live.ask.done():
            live.ask.set_result(text)

    async def _interrupt(self, input_id: str) -> None:
        live = self.rt.supervisor.live.get(self.generation_id)
        if live is None or self.agent is None:
            return
        live.interrupting = True
        replacement: InputRecord | None = None
        try:
            await self.agent.loop.abort(self.rt.settings.agents.abort_timeout_ms / 1000)
            recorded = self.rt.store.inputs(recipient_ids=[self.agent.id], delivered=True)
            replacement = next((i for i in recorded if i.id == input_id), None)
            if replacement is not None:
                self.rt.coordinator.submit_stored(self.agent, replacement)
        finally:
            live.interrupting = False
        if replacement is None:  # nothing to continue with: the assignment ends as it is
            self.rt.supervisor._check_settled(live)

    async def close(self) -> None:
        """Close this generation: its own agents first, then it (`closed`)."""
        live = self.rt.supervisor.live.get(self.generation_id)
        if live is not None:
            await controls.close_generation(self.rt.supervisor, live.gen, [])
        self.wake.set()


async def run_worker(home: Path, generation_id: str) -> int:
    from piagents.runtime import Runtime

    folder = placement.run_dir(home, generation_id)
    folder.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(folder / placement.LOG_FILE)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    logging.getLogger("piagents").addHandler(handler)
    try:
        options = placement.read_options(home, generation_id)
        runtime = Runtime(
            home,
            thinking=options.get("thinking"),
            settings=options.get("settings"),
            tools=options.get("tools"),
            system_prompt=options.get("systemPrompt"),
            append_system_prompt=options.get("appendSystemPrompt"),
        )
    except (placement.OptionsError, SettingsError, ValueError) as exc:
        log.error("worker for generation %s cannot start: %s", generation_id, exc)
        return 1
    runtime.wake_in_process = False  # never load the lead here: its results wait in the store
    async with runtime:
        link = WorkerLink(runtime, generation_id)
        runtime.supervisor.worker = link
        loop = asyncio.get_running_loop()

        def stop() -> None:
            link.stopping = True
            link.wake.set()

        # Not from the lead (it sends `close`): the user closed the pane, or the system
        # stops us. The generation ends `aborted` and the owner is told.
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, stop)
        try:
            return await link.run()
        except Exception:
            log.exception("worker for generation %s failed", generation_id)
            return 1


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="pi-agents worker", description=__doc__)
    p.add_argument("--generation", required=True)
    p.add_argument("--home")
    args = p.parse_args(argv)
    home = Path(args.home).expanduser() if args.home else default_home()
    return asyncio.run(run_worker(home, args.generation))
