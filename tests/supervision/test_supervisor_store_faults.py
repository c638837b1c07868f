"""The supervision face when the store cannot be written for a while: a managed
agent's generation still ends, and its owner still gets the result, once it can."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import piagents
from piagents.ai.messages import AssistantMessage
from piagents.harness.events import LoopEvent, MessageCommitted, RunEnded
from piagents.store.records import MessageEntry
from piagents.store.sqlite import SQLiteStore
from piagents.testing import FunctionModel

SETTINGS = {"pi-agents": {"spawnPlacement": "inline", "abortTimeoutMs": 2000}}


async def test_a_generation_whose_end_the_store_refused_reports_to_the_lead_once_it_can(
    tmp_path: Path,
) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    store = SQLiteStore(home / "store.db", busy_timeout=0.05)
    blocker = sqlite3.connect(home / "store.db", isolation_level=None)
    run_ended = asyncio.Event()
    reported = asyncio.Event()

    def lock_once_answered(event: LoopEvent) -> None:
        answer = isinstance(event, MessageCommitted) and isinstance(event.message, AssistantMessage)
        if answer and not blocker.in_transaction:
            blocker.execute("BEGIN IMMEDIATE")  # the run's end and its generation's: refused
        if isinstance(event, RunEnded):
            run_ended.set()

    def route(call: Any) -> str:
        if call.agent_name is None:  # the lead
            if "status=" in call.messages[-1].text:
                reported.set()
            return "noted"
        loop = rt.agents[call.agent_id].loop
        if lock_once_answered not in loop.listeners:
            loop.listeners.append(lock_once_answered)
        return "the work is done"

    async with piagents.Runtime(
        home=home, model=FunctionModel(route), settings=SETTINGS, store=store
    ) as rt:
        lead = await rt.open_root(cwd=work, agent_api="supervision")
        res = await lead.call_tool(
            "agent", {"action": "delegate", "definition": "generalist", "task": "do the work"}
        )
        assert not res.is_error, res.text
        # The generation tries to end as the run ends (its listener came first), locked out.
        await run_ended.wait()

        blocker.execute("ROLLBACK")
        async with asyncio.timeout(30):
            await reported.wait()

        [gen] = rt.store.generations(root_id=lead.id)
        assert gen.outcome is not None and not gen.live
        reports = [
            e.message.text
            for e in lead.session.entries
            if isinstance(e, MessageEntry) and "status=" in e.message.text
        ]
        assert len(reports) == 1 and "agent=generalist-1" in reports[0]
    blocker.close()
