"""Placement `workers`: a managed agent's generation run by a `pi-agents worker` of the
store (a process of its own, started on the worker's machine), controlled and
inspected through the store, and `lost` once it is proven gone."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

import piagents
from piagents.agent import Agent
from piagents.ai.messages import ToolResultMessage
from piagents.events import AgentLoaded
from piagents.store.records import GenerationRecord, MessageEntry
from piagents.testing_workers import WorkerProcess, registered, start_workers
from support import until

HERE = Path(__file__).parent
MODEL = "faux/worker_routes:route"
LEASES = {"leaseLapseMs": 1500, "leaseRenewMs": 300}
pytestmark = pytest.mark.timeout(180)


@pytest.fixture(autouse=True)
def _routes_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(HERE))


@pytest.fixture
def pool(postgres_url: str, tmp_path: Path) -> Iterator[list[WorkerProcess]]:
    workers = start_workers(  # heartbeats as often as the lead expects them
        postgres_url,
        [tmp_path / "worker0"],
        pythonpath=[str(HERE)],
        poll=0.2,
        settings={"pi-agents": LEASES},
    )
    yield workers
    for w in workers:
        w.stop()


@pytest.fixture
def started() -> Iterator[list[int]]:
    """Pids of generation processes; whatever is left is killed afterwards."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)


@pytest.fixture
async def lead(
    home: Path, work: Path, postgres_url: str, pool: list[WorkerProcess]
) -> AsyncIterator[tuple[piagents.Runtime, Agent]]:
    settings = {
        "store": postgres_url,
        "pi-agents": {"agentApi": "supervision", "spawnPlacement": "workers", **LEASES},
    }
    async with piagents.Runtime(home, model=MODEL, settings=settings) as rt:
        await registered(rt.store, pool)
        yield rt, await rt.open_root(cwd=work)


async def delegate(lead: Agent, task: str, started: list[int]) -> dict[str, Any]:
    result = await lead.call_tool(
        "agent", {"action": "delegate", "definition": "generalist", "task": task}
    )
    assert not result.is_error, result.text
    started.append(result.details["startup"]["pid"])
    return result.details


async def ended(rt: piagents.Runtime, request: str) -> GenerationRecord:
    def outcome() -> GenerationRecord | None:
        g = rt.store.get_generation(request)
        return g if g is not None and g.outcome is not None else None

    g: GenerationRecord = await until(outcome, "the generation to end", timeout=60)
    return g


async def test_a_generation_runs_in_a_process_the_worker_started_and_its_result_comes_once(
    lead: tuple[piagents.Runtime, Agent], pool: list[WorkerProcess], started: list[int]
) -> None:
    rt, agent = lead
    details = await delegate(agent, "hello", started)
    startup = details["startup"]
    assert startup["placement"] == "workers"
    assert startup["pid"] not in (os.getpid(), pool[0].pid)  # the worker's child
    g = await ended(rt, details["request"])
    assert (g.outcome, g.result) == ("completed", "done: hello")
    results = await until(
        lambda: (
            [i for i in rt.store.inputs(recipient_ids=[agent.id]) if details["request"] in i.text]
            or None
        ),
        "the result for the lead",
    )
    assert len(results) == 1 and "completed" in results[0].text
    log = (pool[0].home / "runs" / g.id / "worker.log").read_text()
    assert "done: hello" in log  # it ran on the worker's machine, in the worker's home


async def test_a_generation_on_a_worker_is_inspected_and_closed_through_the_store(
    lead: tuple[piagents.Runtime, Agent], started: list[int]
) -> None:
    rt, agent = lead
    details = await delegate(agent, "sleep 30", started)
    label = details["agent"]

    async def running_sleep() -> dict[str, Any] | None:
        shown = await agent.call_tool("agent", {"action": "inspect", "agent": label})
        assert not shown.is_error, shown.text
        found = any("sleep 30" in p["command"] for p in shown.details["processes"])
        return shown.details if found else None

    shown = await until(running_sleep, "the worker's evidence to show the sleep", timeout=30)
    assert "$ bash" in shown["recent_output"]
    closed = await agent.call_tool("agent", {"action": "close", "agent": label})
    assert not closed.is_error, closed.text
    g = await ended(rt, details["request"])
    assert g.outcome == "closed"


async def test_interrupt_and_reply_reach_a_generation_on_a_worker_through_the_store(
    lead: tuple[piagents.Runtime, Agent], started: list[int]
) -> None:
    rt, agent = lead
    first = await delegate(agent, "sleep 30", started)

    def state(request: str) -> str | None:
        g = rt.store.get_generation(request)
        return g.state if g is not None else None

    await until(lambda: state(first["request"]) == "working", "the first to work", timeout=30)
    interrupted = await agent.call_tool(
        "agent", {"action": "interrupt", "agent": first["agent"], "message": "answer now"}
    )
    assert not interrupted.is_error, interrupted.text
    g = await ended(rt, first["request"])
    assert (g.outcome, g.result) == ("completed", "done: answer now")

    second = await delegate(agent, "ask: which colour?", started)
    await until(lambda: state(second["request"]) == "blocked", "the question", timeout=30)
    replied = await agent.call_tool(
        "agent", {"action": "reply", "agent": second["agent"], "message": "blue"}
    )
    assert not replied.is_error, replied.text
    g = await ended(rt, second["request"])
    assert g.outcome == "completed" and g.result is not None and "blue" in g.result


async def test_a_generation_whose_process_is_killed_is_found_lost_and_its_lead_told_once(
    lead: tuple[piagents.Runtime, Agent], started: list[int]
) -> None:
    rt, agent = lead
    details = await delegate(agent, "sleep 30", started)
    label, request = details["agent"], details["request"]

    def working() -> bool:
        g = rt.store.get_generation(request)
        return g is not None and g.state == "working"

    await until(working, "the generation to work", timeout=30)
    # kill -9. On this machine its pid proves it gone; on another, its heartbeat's lapse
    # does (tests/supervision/test_recovery.py).
    os.killpg(details["startup"]["pid"], signal.SIGKILL)

    async def listed_lost() -> bool:
        listed = await agent.call_tool("agent", {"action": "list"})
        return any(a["agent"] == label and a["state"] == "lost" for a in listed.details["agents"])

    await until(listed_lost, "the lead to find it lost", timeout=30)
    g = rt.store.get_generation(request)
    assert g is not None and g.state == "lost"
    lost = [i for i in rt.store.inputs(recipient_ids=[agent.id]) if request in i.text]
    assert len(lost) == 1 and "lost" in lost[0].text


async def test_without_a_worker_the_placement_fails_at_once_saying_so(
    home: Path, work: Path, postgres_url: str
) -> None:
    settings = {"store": postgres_url, "pi-agents": {"agentApi": "supervision",
                                                     "spawnPlacement": "workers"}}  # fmt: skip
    async with piagents.Runtime(home, model=MODEL, settings=settings) as rt:
        agent = await rt.open_root(cwd=work)
        result = await agent.call_tool(
            "agent", {"action": "delegate", "definition": "generalist", "task": "hi"}
        )
        assert result.is_error
        assert "no pi-agents worker is running for this store" in result.text
        assert rt.store.generations(root_id=agent.id) == []


async def test_a_placed_lead_delegates_to_a_generation_another_process_runs_and_hears_back(
    home: Path, work: Path, postgres_url: str, tmp_path: Path, started: list[int]
) -> None:
    """A tree across processes of the pool: the lead, a root with no runtime of its own,
    is placed on a worker when its input comes; the managed agent it delegates to runs
    in a process a worker starts; its result, left while the lead is offline again,
    places the lead once more, and the lead reads it."""
    supervising = {"pi-agents": {"agentApi": "supervision", "spawnPlacement": "workers"}}
    workers = start_workers(
        postgres_url,
        [tmp_path / "w0", tmp_path / "w1"],
        pythonpath=[str(HERE)],
        poll=0.2,
        settings=supervising,
    )
    try:
        settings = {"store": postgres_url, **supervising}
        async with piagents.Runtime(home, model=MODEL, settings=settings) as rt:
            await registered(rt.store, workers)
            root = await rt.open_root(cwd=work, model=MODEL)
            root_id = root.id
            await rt.unload(root)  # offline: a worker takes it when its input comes
            loaded_here: list[AgentLoaded] = []
            rt.subscribe(loaded_here.append, kinds=(AgentLoaded,))
            record = rt.store.get_session(root_id)
            assert record is not None
            accepted = await rt.delivery.deliver(None, record, "delegate: hello", "followUp")
            assert accepted.route == "placed"

            def generation() -> GenerationRecord | None:
                found = rt.store.generations(root_id=root_id)
                return found[0] if found and found[0].outcome is not None else None

            g: GenerationRecord = await until(generation, "the generation to end", timeout=60)
            assert g.pid is not None
            started.append(g.pid)
            assert (g.outcome, g.result) == ("completed", "done: hello")
            assert g.pid not in {w.pid for w in workers} | {os.getpid()}

            def lead_read_it() -> bool:
                texts = [
                    e.message.text
                    for e in rt.store.entries(root_id)
                    if getattr(e, "message", None) is not None
                ]
                results = [i for i in rt.store.inputs(recipient_ids=[root_id]) if g.id in i.text]
                read = any(g.id in t for t in texts) and texts[-1] == "noted"
                # its end is committed just after the answer it got
                return read and [r.status for r in results] == ["completed"]

            await until(lead_read_it, "the lead to read the result, once, and answer", timeout=60)
            assert loaded_here == []  # the lead ran on the workers only, twice
    finally:
        for w in workers:
            w.stop()


def _bash_results(rt: piagents.Runtime, session_id: str) -> list[ToolResultMessage]:
    """The session's committed results of `bash` calls (its steps done)."""
    return [
        e.message for e in rt.store.entries(session_id)
        if isinstance(e, MessageEntry) and isinstance(e.message, ToolResultMessage)
        and e.message.tool_name == "bash"
    ]  # fmt: skip


async def test_a_tree_across_three_workers_survives_a_kill_9_of_the_worker_holding_its_busy_lead(
    home: Path, work: Path, postgres_url: str, tmp_path: Path, started: list[int]
) -> None:
    """The multi-worker scenario with a tree that spans the pool: a placed lead delegates
    to a managed agent (a process a worker starts, with a session of its own) and goes
    on with steps of its own; the worker holding the lead is killed -9 mid-step. A
    survivor takes the lead over and ends its turn (the step that was running ends
    interrupted, never run twice), the managed agent, untouched by the kill, finishes,
    and its result reaches the lead once; nothing committed before the kill is lost
    and every input ends once."""
    supervising = {"pi-agents": {"agentApi": "supervision", "spawnPlacement": "workers", **LEASES}}
    workers = start_workers(
        postgres_url,
        [tmp_path / f"w{i}" for i in range(3)],
        pythonpath=[str(HERE)],
        poll=0.2,
        settings=supervising,
    )
    try:
        async with piagents.Runtime(
            home, model=MODEL, settings={"store": postgres_url, **supervising}
        ) as rt:
            await registered(rt.store, workers)
            root = await rt.open_root(cwd=work, model=MODEL)
            root_id = root.id
            await rt.unload(root)  # offline: a worker takes it when its input comes
            record = rt.store.get_session(root_id)
            assert record is not None
            accepted = await rt.delivery.deliver(
                None, record, "delegate then 4 sleeps of 0.6: 2 sleeps of 1", "followUp"
            )
            assert accepted.route == "placed"
            by_token = {w.token: w for w in workers}

            def holder_mid_step() -> WorkerProcess | None:
                lease = rt.store.lease_of(root_id)
                steps = _bash_results(rt, root_id)
                return by_token.get(lease.token) if lease is not None and steps else None

            victim = await until(holder_mid_step, "the lead mid-step on a worker", timeout=60)
            [g] = rt.store.generations(root_id=root_id)
            assert g.pid is not None
            started.append(g.pid)
            sessions = [root_id, g.session_id]
            before = {sid: [e.id for e in rt.store.entries(sid)] for sid in sessions}
            victim.kill()
            survivors = {str(w.pid) for w in workers if w is not victim}

            def settled() -> bool:
                done = rt.store.get_generation(g.id)
                idle = rt.store.lease_of(root_id) is None
                quiet = not rt.store.inputs(recipient_ids=[root_id], outstanding=True)
                return done is not None and done.outcome is not None and idle and quiet

            await until(
                settled, "the lead's turn, the generation and its result settled", timeout=90
            )

            for sid, entry_ids in before.items():  # nothing committed was lost
                assert [e.id for e in rt.store.entries(sid)][: len(entry_ids)] == entry_ids
            done = rt.store.get_generation(g.id)
            assert done is not None
            assert (done.outcome, done.result) == ("completed", "done: 2 sleeps of 1")
            inputs = rt.store.inputs(recipient_ids=[root_id])
            assert {i.status for i in inputs} == {"completed"}, [(i.text, i.status) for i in inputs]
            [turn] = [i for i in inputs if i.id == accepted.record.id]
            assert turn.result is not None and turn.result.startswith("lead done by ")
            by, interrupted = turn.result[len("lead done by ") :].split(": ")
            assert by in survivors  # the turn went on elsewhere and ended once
            assert interrupted in ("0 interrupted", "1 interrupted")  # a step is never re-run
            answers = [
                e.message.text for e in rt.store.entries(root_id)
                if getattr(e, "message", None) is not None and e.message.role == "assistant"
                and e.message.text.startswith("lead done by")
            ]  # fmt: skip
            assert answers == [turn.result]
            assert len(_bash_results(rt, root_id)) == 4
            results = [i for i in inputs if g.id in i.text]
            assert len(results) == 1  # the managed agent's result, once
    finally:
        for w in workers:
            w.stop()
