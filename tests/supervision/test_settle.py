"""A one-shot supervision run is settled only when nothing is left to reach its lead."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path

import pytest

import piagents
from piagents.store.records import MessageEntry
from piagents.supervision.settle import settled_answer

HERE = Path(__file__).parent
MODEL = "faux/worker_routes:route"
SETTINGS = {"pi-agents": {"agentApi": "supervision", "spawnPlacement": "process"}}


@pytest.fixture(autouse=True)
def _routes_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker (a subprocess) and this process both import `worker_routes`."""
    monkeypatch.syspath_prepend(str(HERE))
    paths = [str(HERE), os.environ.get("PYTHONPATH", "")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in paths if p))


def lead_inputs(lead: piagents.Agent) -> list[str]:
    return [
        e.message.text
        for e in lead.session.entries
        if isinstance(e, MessageEntry) and e.message.role == "user"
    ]


async def test_a_result_committed_without_a_poke_still_reaches_the_lead_before_it_settles(
    home: Path, work: Path
) -> None:
    async with piagents.Runtime(home, model=MODEL, settings=SETTINGS) as rt:
        lead = await rt.open_root(cwd=work)
        await (
            rt.presence.close_mailbox()
        )  # the worker's pokes reach nobody: only the store has its news
        answer = await lead.prompt("delegate: sleep 0.5")
        [generation] = rt.store.generations(root_id=lead.id)
        try:
            await asyncio.wait_for(settled_answer(rt, lead, answer), 30)
            ended = rt.store.get_generation(generation.id)
            assert ended is not None and ended.outcome == "completed"
            assert rt.store.inputs(recipient_ids=[lead.id], delivered=False) == []
            [result] = [t for t in lead_inputs(lead) if "done: sleep 0.5" in t]
            assert "completed" in result
            assert not lead.loop.busy  # and the lead has had its turn on it
        finally:
            pid = (rt.store.get_generation(generation.id) or generation).pid
            if pid is not None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pid, signal.SIGKILL)
