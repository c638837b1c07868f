"""Placements `process` and `tmux`: managed agents in worker processes of their own,
controlled through the store, and found again after the lead is killed."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

import piagents
from piagents.agent import Agent
from piagents.store import lease
from piagents.store.base import LeaseHolder
from piagents.store.records import GenerationRecord, InputRecord
from piagents.testing import FunctionModel
from support import eventually, settled, until

HERE = Path(__file__).parent
MODEL = "faux/worker_routes:route"


@pytest.fixture(autouse=True)
def _routes_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers (subprocesses) and this process both import `worker_routes`."""
    monkeypatch.syspath_prepend(str(HERE))
    paths = [str(HERE), os.environ.get("PYTHONPATH", "")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in paths if p))


@pytest.fixture
def workers() -> Iterator[list[int]]:
    """Pids of workers a test started; whatever is left is killed afterwards."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        if not process_gone(pid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)


def process_gone(pid: int) -> bool:
    """What a restarted lead will find: the process is proven gone."""
    return lease.presence(LeaseHolder(pid, _host(), "", lease.process_start_time(pid))) == "gone"


def _host() -> str:
    import socket

    return socket.gethostname()


def _settings(placement: str = "process", **more: Any) -> dict[str, Any]:
    return {"pi-agents": {"agentApi": "supervision", "spawnPlacement": placement, **more}}


def results_for(rt: piagents.Runtime, lead: Agent, request: str) -> list[InputRecord]:
    """Terminal results and notices about `request` the lead was sent."""
    return [
        i
        for i in rt.store.inputs(recipient_ids=[lead.id])
        if f"request={request}" in i.text or request in i.text
    ]


def generation(rt: piagents.Runtime, request: str) -> GenerationRecord:
    g = rt.store.get_generation(request)
    assert g is not None
    return g


async def ended(rt: piagents.Runtime, request: str, timeout: float = 20.0) -> GenerationRecord:
    """The generation once it has an outcome."""
    g: GenerationRecord = await until(
        lambda: (g := generation(rt, request)).outcome and g, timeout=timeout
    )
    return g


async def delivered_once(rt: piagents.Runtime, lead: Agent, request: str) -> None:
    """The lead was given the generation's result, and only one."""
    await until(lambda: [i for i in results_for(rt, lead, request) if i.delivered])
    assert len(results_for(rt, lead, request)) == 1


async def delegate(lead: Agent, task: str, workers: list[int], **fields: Any) -> dict[str, Any]:
    result = await lead.call_tool(
        "agent", {"action": "delegate", "definition": "generalist", "task": task, **fields}
    )
    assert not result.is_error, result.text
    pid = result.details["startup"]["pid"]
    workers.append(pid)
    return result.details


@pytest.fixture
async def lead_rt(
    home: Path, work: Path, request: pytest.FixtureRequest
) -> AsyncIterator[tuple[piagents.Runtime, Agent]]:
    """A lead whose managed agents run in processes; on the home's SQLite store, or on
    a PostgreSQL database when the test asks for `postgres` (indirect parameter)."""
    settings = _settings()
    if getattr(request, "param", "sqlite") == "postgres":
        settings["store"] = request.getfixturevalue("postgres_url")
    async with piagents.Runtime(home, model=MODEL, settings=settings) as rt:
        lead = await rt.open_root(cwd=work)
        yield rt, lead


@pytest.mark.parametrize("lead_rt", ["sqlite", "postgres"], indirect=True)
async def test_delegate_in_a_process_returns_its_startup_evidence_and_the_result_once(
    lead_rt: tuple[piagents.Runtime, Agent], workers: list[int]
) -> None:
    rt, lead = lead_rt
    details = await delegate(lead, "hello", workers)
    startup = details["startup"]
    assert startup["placement"] == "process"
    assert startup["pid"] != os.getpid()
    assert startup["pane"] == f"process:{startup['pid']}"
    assert rt.supervisor.placement == "process"
    request = details["request"]
    g = await ended(rt, request)
    assert g.outcome == "completed"
    assert g.result == "done: hello"
    delivered = await until(
        lambda: [i for i in results_for(rt, lead, request) if i.delivered] or None
    )
    assert len(delivered) == 1
    assert "completed" in delivered[0].text
    await until(lambda: lease.presence(LeaseHolder(g.pid, g.host, g.token, g.started)) == "gone")
    await settled()
    # a window for a wrong second result: a slow machine only shortens it
    await asyncio.sleep(0.3)
    assert len(results_for(rt, lead, request)) == 1


async def call(lead: Agent, **args: Any) -> dict[str, Any]:
    result = await lead.call_tool("agent", args)
    assert not result.is_error, result.text
    return result.details


async def inspected_running(lead: Agent, label: str, command: str) -> dict[str, Any]:
    """Inspect until the agent's foreground processes show `command`."""

    async def showing() -> dict[str, Any] | None:
        details = await call(lead, action="inspect", agent=label)
        return details if any(command in p["command"] for p in details["processes"]) else None

    shown: dict[str, Any] = await until(showing, f"{label} to run {command!r}")
    return shown


def listed(details: dict[str, Any], label: str) -> dict[str, Any]:
    return next(a for a in details["agents"] if a["agent"] == label)


@pytest.mark.parametrize("lead_rt", ["sqlite", "postgres"], indirect=True)
async def test_steer_reaches_the_worker_at_its_next_boundary(
    lead_rt: tuple[piagents.Runtime, Agent], workers: list[int]
) -> None:
    rt, lead = lead_rt
    details = await delegate(lead, "sleep 1.5", workers)
    label, request = details["agent"], details["request"]
    shown = await inspected_running(lead, label, "sleep 1.5")
    assert shown["pane"] == details["startup"]["pane"]
    assert "$ bash" in shown["recent_output"]
    await call(lead, action="steer", agent=label, message="steered now")
    g = await ended(rt, request)
    assert (g.outcome, g.result) == ("completed", "done: steered now")
    await delivered_once(rt, lead, request)


async def test_interrupt_cancels_the_workers_operation_and_keeps_the_assignment(
    lead_rt: tuple[piagents.Runtime, Agent], workers: list[int]
) -> None:
    rt, lead = lead_rt
    details = await delegate(lead, "sleep 30", workers)
    label, request = details["agent"], details["request"]
    await inspected_running(lead, label, "sleep 30")
    record = listed(await call(lead, action="list"), label)
    assert record["state"] == "working"
    assert "interrupt" in record["available_actions"]
    assert record["tokens"] > 0
    assert record["pane_id"] == details["startup"]["pane"]
    started = time.monotonic()
    await call(lead, action="interrupt", agent=label, message="answer now")
    g = await ended(rt, request)
    assert time.monotonic() - started < 10
    assert (g.outcome, g.result) == ("completed", "done: answer now")
    await delivered_once(rt, lead, request)


@pytest.mark.parametrize("lead_rt", ["sqlite", "postgres"], indirect=True)
async def test_ask_owner_from_a_worker_blocks_until_the_leads_reply(
    lead_rt: tuple[piagents.Runtime, Agent], workers: list[int]
) -> None:
    rt, lead = lead_rt
    details = await delegate(lead, "ask: which colour?", workers)
    label, request = details["agent"], details["request"]
    await until(lambda: generation(rt, request).state == "blocked")
    question = await until(
        lambda: [i for i in results_for(rt, lead, request) if "which colour?" in i.text]
    )
    assert len(question) == 1
    record = listed(await call(lead, action="list"), label)
    assert record["state"] == "blocked"
    assert "reply" in record["available_actions"]
    await call(lead, action="reply", agent=label, message="blue")
    g = await ended(rt, request)
    assert g.outcome == "completed"
    assert g.result is not None and g.result.startswith("the owner said:")
    assert "blue" in g.result


async def test_close_ends_the_worker_and_its_commands(
    lead_rt: tuple[piagents.Runtime, Agent], workers: list[int]
) -> None:
    rt, lead = lead_rt
    details = await delegate(lead, "sleep 30", workers)
    label, request = details["agent"], details["request"]
    shown = await inspected_running(lead, label, "sleep 30")
    sleeper = next(p["pid"] for p in shown["processes"] if "sleep 30" in p["command"])
    started = time.monotonic()
    closed = await call(lead, action="close", agent=label)
    assert closed["action"] == "close"
    assert time.monotonic() - started < 10
    g = generation(rt, request)
    assert g.outcome == "closed"
    assert g.pid is not None
    gone = LeaseHolder(g.pid, g.host or "", g.token or "", g.started or "")
    await until(lambda: lease.presence(gone) == "gone", timeout=5)
    await until(lambda: not _running(sleeper), timeout=5)
    assert listed_labels(await call(lead, action="list")) == []
    assert not [i for i in results_for(rt, lead, request) if "status=completed" in i.text]


def _running(pid: int) -> bool:
    return lease.presence(LeaseHolder(pid, _host(), "", lease.process_start_time(pid))) == "alive"


def listed_labels(details: dict[str, Any]) -> list[str]:
    return [a["agent"] for a in details["agents"]]


async def test_a_worker_that_does_not_start_in_time_is_rolled_back(
    home: Path, work: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hang = tmp_path / "hang"
    hang.mkdir()
    (hang / "sitecustomize.py").write_text("import time\ntime.sleep(60)\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(hang), os.environ["PYTHONPATH"]]))
    async with piagents.Runtime(home, model=MODEL, settings=_settings()) as rt:
        lead = await rt.open_root(cwd=work)
        started = time.monotonic()
        result = await lead.call_tool(
            "agent",
            {"action": "delegate", "definition": "generalist", "task": "hi", "timeoutMs": 5001},
        )
        assert 5 <= time.monotonic() - started < 10
        assert result.is_error
        error = result.details["error"]
        assert error["category"] == "internal_failure"
        assert error["rollbackOccurred"] is True
        [g] = rt.store.generations(root_id=lead.id)
        assert (g.outcome, g.state) == ("failed", "ended")
        assert g.pid is not None
        holder = LeaseHolder(g.pid, g.host or "", "", g.started or "")
        await until(lambda: lease.presence(holder) == "gone", timeout=5)
        assert results_for(rt, lead, g.id) == []
        assert (await call(lead, action="list"))["agents"] == []


async def test_an_in_process_function_model_cannot_run_in_a_worker(home: Path, work: Path) -> None:
    async with piagents.Runtime(
        home, model=FunctionModel(lambda call: "hi"), settings=_settings()
    ) as rt:
        lead = await rt.open_root(cwd=work)
        result = await lead.call_tool(
            "agent", {"action": "delegate", "definition": "generalist", "task": "hi"}
        )
        assert result.is_error
        assert result.details["error"]["category"] == "invalid_request"
        assert "placement 'process'" in result.details["error"]["message"]
        assert rt.store.generations(root_id=lead.id) == []


LEAD_SCRIPT = (
    """
import asyncio, json, sys
import piagents

async def main(home, work, task, then="wait"):
    settings = {"pi-agents": {"agentApi": "supervision", "spawnPlacement": "process"}}
    async with piagents.Runtime(home, model="{model}", settings=settings) as rt:
        lead = await rt.open_root(cwd=work)
        result = await lead.call_tool(
            "agent", {"action": "delegate", "definition": "generalist", "task": task}
        )
        print(json.dumps({"lead": lead.id, "error": result.is_error, **result.details}), flush=True)
        if then == "wait":
            await asyncio.sleep(3600)  # the lead stays until the test kills it

asyncio.run(main(*sys.argv[1:]))
"""
).replace("{model}", MODEL)


def start_lead(
    home: Path, work: Path, task: str, workers: list[int], then: str = "wait"
) -> tuple[int, dict[str, Any]]:
    """A lead in a process of its own that delegates `task`, then is killed (-9) while
    it waits, or (`then="exit"`) closes its runtime and exits."""
    import json

    lead = subprocess.Popen(
        [sys.executable, "-c", LEAD_SCRIPT, str(home), str(work), task, then],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert lead.stdout is not None
    line = lead.stdout.readline()
    details = json.loads(line)
    assert not details["error"], details
    workers.append(details["startup"]["pid"])
    if then == "wait":
        lead.kill()  # kill -9
    assert lead.wait(timeout=20) in (0, -signal.SIGKILL)
    return lead.pid, details


async def test_a_restarted_lead_reattaches_a_live_worker_and_gets_its_result_once(
    home: Path, work: Path, workers: list[int]
) -> None:
    _, details = start_lead(home, work, "sleep 2", workers)
    lead_id, request, label = details["lead"], details["request"], details["agent"]
    async with piagents.Runtime(home, model=MODEL, settings=_settings()) as rt:
        lead = await rt.open_root(session=lead_id)
        record = listed(await call(lead, action="list"), label)
        assert record["state"] in ("starting", "working")
        assert "close" in record["available_actions"]
        g = await ended(rt, request)
        assert (g.outcome, g.result) == ("completed", "done: sleep 2")
        await until(lambda: [i for i in results_for(rt, lead, request) if i.delivered])
        await settled()
        # a window for a wrong second result: a slow machine only shortens it
        await asyncio.sleep(0.5)
        assert len(results_for(rt, lead, request)) == 1


async def test_a_result_recorded_while_the_lead_is_down_waits_for_its_restart(
    home: Path, work: Path, workers: list[int]
) -> None:
    _, details = start_lead(home, work, "sleep 1", workers)  # it ends after the lead is killed
    lead_id, request = details["lead"], details["request"]
    from piagents.store.sqlite import SQLiteStore

    store = SQLiteStore(home / "store.db")
    try:
        await until(
            lambda: (
                (r := store.get_generation(request)) is not None and r.outcome is not None and r
            ),
            "the generation's outcome",
        )
        waiting = [i for i in store.inputs(recipient_ids=[lead_id]) if request in i.text]
        assert [i.delivered for i in waiting] == [False]
    finally:
        store.close()
    async with piagents.Runtime(home, model=MODEL, settings=_settings()) as rt:
        lead = await rt.open_root(session=lead_id)
        await delivered_once(rt, lead, request)
        assert (await call(lead, action="list"))["agents"] == []


async def test_a_worker_killed_with_its_lead_is_lost_once_with_transcript_and_close(
    home: Path, work: Path, workers: list[int]
) -> None:
    _, details = start_lead(home, work, "sleep 30", workers)
    lead_id, request, label = details["lead"], details["request"], details["agent"]
    from piagents.store.sqlite import SQLiteStore

    store = SQLiteStore(home / "store.db")
    try:
        await until(
            lambda: (
                store.get_generation(request).token is not None
                and "sleep 30" in repr(store.entries(details["session"]))
            )
        )  # the worker is running and its bash call is recorded
    finally:
        store.close()
    worker = details["startup"]["pid"]
    os.killpg(worker, signal.SIGKILL)
    # SIGKILL is delivered asynchronously: until the worker has died it is still alive.
    await until(lambda: process_gone(worker))
    async with piagents.Runtime(home, model=MODEL, settings=_settings()) as rt:
        lead = await rt.open_root(session=lead_id)
        assert generation(rt, request).state == "lost"
        record = listed(await call(lead, action="list"), label)
        assert record["state"] == "lost"
        assert sorted(record["available_actions"]) == ["close", "transcript"]
        await until(lambda: [i for i in results_for(rt, lead, request) if i.delivered])
        lost = results_for(rt, lead, request)
        assert len(lost) == 1 and "lost" in lost[0].text
        transcript = await lead.call_tool("agent", {"action": "transcript", "agent": label})
        assert not transcript.is_error and "sleep 30" in transcript.text
        await call(lead, action="close", agent=label)
        assert generation(rt, request).outcome == "closed"
        assert (await call(lead, action="list"))["agents"] == []
    async with piagents.Runtime(home, model=MODEL, settings=_settings()) as rt:
        lead = await rt.open_root(session=lead_id)
        await settled()
        # a window for a wrong second result: a slow machine only shortens it
        await asyncio.sleep(0.3)
        assert len(results_for(rt, lead, request)) == 1


@pytest.fixture
def tmux_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A tmux server of this test's own (its socket in a fresh directory)."""
    import shutil
    import tempfile

    if shutil.which("tmux") is None:
        pytest.fail("tmux is not installed (.ci/run installs it)")
    folder = tempfile.mkdtemp(prefix="pa-tmux-")
    monkeypatch.setenv("TMUX_TMPDIR", folder)
    monkeypatch.delenv("TMUX", raising=False)
    yield
    subprocess.run(["tmux", "kill-server"], capture_output=True, check=False)
    shutil.rmtree(folder, ignore_errors=True)


async def test_tmux_placement_runs_in_a_pane_that_inspect_reads(
    home: Path, work: Path, workers: list[int], tmux_server: None
) -> None:

    async with piagents.Runtime(home, model=MODEL, settings=_settings("tmux")) as rt:
        lead = await rt.open_root(cwd=work)
        details = await delegate(lead, "sleep 30", workers)
        label, request = details["agent"], details["request"]
        pane = details["startup"]["pane"]
        assert details["startup"]["placement"] == "tmux"
        assert pane.startswith("%")
        panes = subprocess.run(
            ["tmux", "list-panes", "-a", "-F", "#{pane_id} #{session_name}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert f"{pane} pi-agents" in panes
        shown = await inspected_running(lead, label, "sleep 30")
        assert shown["pane"] == pane
        assert "$ bash" in shown["recent_output"]
        assert f"pi-agents worker: {label} (generalist)" in shown["recent_output"]
        # The pane, as the worker echoes it (its evidence file is written differently).
        assert '$ bash {"command": "sleep 30"}' in shown["recent_output"]
        assert shown["recent_output_truncated"] is False
        await call(lead, action="close", agent=label)
        assert generation(rt, request).outcome == "closed"


async def test_close_cascades_through_the_workers_own_agents_first(
    lead_rt: tuple[piagents.Runtime, Agent], workers: list[int]
) -> None:
    rt, lead = lead_rt
    result = await lead.call_tool(
        "agent",
        {"action": "delegate", "definition": "reviewer", "task": "delegate: ask: anything?"},
    )
    assert not result.is_error, result.text
    workers.append(result.details["startup"]["pid"])
    label, request = result.details["agent"], result.details["request"]
    scout = await until(
        lambda: [g for g in rt.store.generations(owner_id=result.details["session"])]
    )
    assert scout[0].placement == "inline"  # a worker runs its own agents itself
    assert scout[0].pid == result.details["startup"]["pid"]
    await until(lambda: rt.store.get_generation(scout[0].id).state == "blocked")
    listing = await call(lead, action="list")
    assert listed(listing, scout[0].label)["parent_label"] == label
    closed = await call(lead, action="close", agent=label)
    assert closed["cascaded"] == [scout[0].label]
    assert generation(rt, scout[0].id).outcome == "closed"
    assert generation(rt, request).outcome == "closed"
    assert (await call(lead, action="list"))["agents"] == []


async def test_a_worker_that_cannot_load_the_model_fails_the_delegation_with_its_reason(
    home: Path, work: Path, workers: list[int]
) -> None:
    (home / "agents").mkdir()
    (home / "agents" / "broken.md").write_text(
        "---\nname: broken\nmodel: faux/no_such_module_here:route\n---\nBroken.\n"
    )
    async with piagents.Runtime(home, model=MODEL, settings=_settings()) as rt:
        lead = await rt.open_root(cwd=work)
        result = await lead.call_tool(
            "agent", {"action": "delegate", "definition": "broken", "task": "hi"}
        )
        assert result.is_error
        error = result.details["error"]
        assert (error["category"], error["rollbackOccurred"]) == ("internal_failure", True)
        assert "no_such_module_here" in error["message"]
        [g] = rt.store.generations(root_id=lead.id)
        assert g.outcome == "failed"
        assert results_for(rt, lead, g.id) == []


async def test_a_worker_stopped_by_a_signal_ends_aborted_and_tells_the_owner_once(
    lead_rt: tuple[piagents.Runtime, Agent], workers: list[int]
) -> None:
    rt, lead = lead_rt
    details = await delegate(lead, "sleep 30", workers)
    label, request = details["agent"], details["request"]
    await inspected_running(lead, label, "sleep 30")
    os.kill(details["startup"]["pid"], signal.SIGTERM)
    g = await ended(rt, request)
    assert g.outcome == "aborted"
    await delivered_once(rt, lead, request)


async def test_continue_starts_a_new_worker_on_the_same_session(
    lead_rt: tuple[piagents.Runtime, Agent], workers: list[int]
) -> None:
    rt, lead = lead_rt
    first = await delegate(lead, "hello", workers)
    await until(lambda: generation(rt, first["request"]).outcome)
    result = await lead.call_tool(
        "agent", {"action": "continue", "session": first["session"], "task": "again"}
    )
    assert not result.is_error, result.text
    second = result.details
    workers.append(second["startup"]["pid"])
    assert second["startup"]["pid"] != first["startup"]["pid"]
    assert (second["session"], second["agent"]) == (first["session"], first["agent"])
    g = await ended(rt, second["request"])
    assert (g.outcome, g.result) == ("completed", "done: again")


def test_the_command_line_runs_managed_agents_in_worker_processes(
    home: Path, work: Path, workers: list[int]
) -> None:
    import subprocess
    import sys

    from piagents.store.sqlite import SQLiteStore

    command = [sys.executable, "-m", "piagents.cli", "--home", str(home), "--model", MODEL]
    done = subprocess.run(
        [*command, "--agent-api", "supervision", "-p", "delegate: sleep 1"],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "noted"
    store = SQLiteStore(home / "store.db")
    try:
        [g] = store.generations()
        assert g.pid is not None
        workers.append(g.pid)
        gid = g.id
        g = eventually(
            lambda: (r := store.get_generation(gid)) is not None and r.outcome is not None and r,
            "the generation's outcome",
        )
        assert (g.placement, g.outcome, g.result) == ("process", "completed", "done: sleep 1")
        assert g.pane == f"process:{g.pid}"
        # One result for the lead: taken if it was still running, else waiting for it.
        results = [i for i in store.inputs(recipient_ids=[g.owner_id]) if g.id in i.text]
        assert len(results) == 1
    finally:
        store.close()


async def test_a_worker_that_cannot_be_proven_alive_or_gone_is_unknown_without_actions(
    home: Path, work: Path, workers: list[int]
) -> None:
    import msgspec

    from piagents.store.sqlite import SQLiteStore

    _, details = start_lead(home, work, "sleep 30", workers)
    lead_id, request, label = details["lead"], details["request"], details["agent"]
    os.killpg(details["startup"]["pid"], signal.SIGKILL)
    store = SQLiteStore(home / "store.db")
    try:
        g = store.get_generation(request)
        assert g is not None and g.token is not None
        # Recorded on another machine, by a holder the store's registry does not list:
        # nothing here can tell whether it still runs.
        elsewhere = msgspec.structs.replace(g, host="another-machine", token="f" * 32)
        assert store.update_generation(elsewhere)
    finally:
        store.close()
    async with piagents.Runtime(home, model=MODEL, settings=_settings()) as rt:
        lead = await rt.open_root(session=lead_id)
        record = listed(await call(lead, action="list"), label)
        assert (record["state"], record["available_actions"]) == ("unknown", [])
        refused = await lead.call_tool("agent", {"action": "close", "agent": label})
        assert refused.is_error
        await settled()
        # a window for a wrong result: a slow machine only shortens it
        await asyncio.sleep(0.3)
        assert results_for(rt, lead, request) == []


async def test_workers_outlive_a_lead_that_exits_and_their_results_wait_for_it(
    home: Path, work: Path, workers: list[int]
) -> None:
    _, details = start_lead(home, work, "sleep 2", workers, then="exit")
    lead_id, request = details["lead"], details["request"]
    holder = LeaseHolder(
        details["startup"]["pid"], details["startup"]["host"], "", details["startup"]["started"]
    )
    assert lease.presence(holder) == "alive"
    from piagents.store.sqlite import SQLiteStore

    store = SQLiteStore(home / "store.db")
    try:
        g = await until(
            lambda: (
                (r := store.get_generation(request)) is not None and r.outcome is not None and r
            ),
            "the generation's outcome",
        )
        assert (g.outcome, g.result) == ("completed", "done: sleep 2")
    finally:
        store.close()
    async with piagents.Runtime(home, model=MODEL, settings=_settings()) as rt:
        lead = await rt.open_root(session=lead_id)
        await delivered_once(rt, lead, request)


async def test_the_leads_views_hear_when_a_workers_state_changes(
    lead_rt: tuple[piagents.Runtime, Agent], workers: list[int]
) -> None:
    rt, lead = lead_rt
    heard: list[str] = []
    result = await lead.call_tool(
        "agent",
        {"action": "delegate", "definition": "reviewer", "task": "delegate: ask: anything?"},
    )
    details = result.details
    workers.append(details["startup"]["pid"])
    request = details["request"]
    rt.coordinator.listeners.append(lambda: heard.append(generation(rt, request).state))
    # Blocked on its own scout: nothing is sent to the lead, only a poke.
    await until(lambda: "blocked" in heard)
    assert not results_for(rt, lead, request)
    await call(lead, action="close", agent=details["agent"])


async def test_the_lead_hears_each_step_a_worker_commits(
    lead_rt: tuple[piagents.Runtime, Agent], workers: list[int]
) -> None:
    # What a viewer of the agent needs to follow it live: while the worker runs its
    # second command (its state unchanged since the first), the lead is told that the
    # second call was committed.
    rt, lead = lead_rt
    details = await delegate(lead, "2 sleeps of 1.5", workers)
    request = details["request"]
    session_id = generation(rt, request).session_id
    calls_heard: list[int] = []

    def calls_committed_while_running() -> None:
        if generation(rt, request).outcome is not None:
            return
        messages = [getattr(e, "message", None) for e in rt.store.entries(session_id)]
        calls_heard.append(sum(len(getattr(m, "tool_calls", ())) for m in messages))

    rt.coordinator.listeners.append(calls_committed_while_running)
    await until(lambda: 2 in calls_heard, timeout=30)
    g = await ended(rt, request, timeout=30)
    assert g.outcome == "completed"


async def test_a_worker_runs_with_the_sdk_options_of_its_leads_runtime(
    home: Path, work: Path, workers: list[int]
) -> None:
    # Options given to the SDK's Runtime, not in the home's settings file.
    async with piagents.Runtime(
        home,
        model=MODEL,
        settings=_settings(),
        tools=["agent", "read", "ls"],
        append_system_prompt="RULES: answer in French",
    ) as rt:
        lead = await rt.open_root(cwd=work)
        assert not (home / "settings.json").exists()
        details = await delegate(lead, "report your setup", workers)
        g = await ended(rt, details["request"])
        assert (g.outcome, g.result) == (
            "completed",
            "tools: ask_owner,ls,read; rules: answer in French",
        )


async def test_a_restarted_lead_answers_a_live_workers_question(
    home: Path, work: Path, workers: list[int]
) -> None:
    _, details = start_lead(home, work, "ask: which colour?", workers)
    lead_id, request, label = details["lead"], details["request"], details["agent"]
    async with piagents.Runtime(home, model=MODEL, settings=_settings()) as rt:
        lead = await rt.open_root(session=lead_id)
        await until(lambda: generation(rt, request).state == "blocked")
        assignment = [i for i in rt.store.inputs(recipient_ids=[details["session"]])]
        assert [i.status for i in assignment] == ["outstanding"]  # the worker's, not aborted
        record = listed(await call(lead, action="list"), label)
        assert "reply" in record["available_actions"]
        await call(lead, action="reply", agent=label, message="red")
        g = await ended(rt, request)
        assert g.outcome == "completed"
        assert g.result is not None and "red" in g.result
        await until(lambda: [i for i in results_for(rt, lead, request) if "status" in i.text])
        questions = [i for i in results_for(rt, lead, request) if "which colour?" in i.text]
        assert len(questions) == 1


async def test_a_lead_killed_before_its_worker_started_finds_it_lost_and_the_late_worker_exits(
    home: Path, work: Path, tmp_path: Path
) -> None:
    import subprocess
    import sys

    from piagents.store.sqlite import SQLiteStore

    slow = tmp_path / "slow"
    slow.mkdir()
    (slow / "sitecustomize.py").write_text("import time\ntime.sleep(1.5)\n")
    paths = os.pathsep.join([str(slow), os.environ["PYTHONPATH"]])
    lead = subprocess.Popen(  # it and its worker each take 1.5 s more to start
        [sys.executable, "-c", LEAD_SCRIPT, str(home), str(work), "hello"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        env=dict(os.environ, PYTHONPATH=paths),
    )
    try:
        await until(lambda: list(home.glob("runs/*/worker.log")), "the worker to be started")
        # Not synchronisation: the kill may land anywhere before the worker (1.5 s
        # late) records itself, which is what the test is about.
        await asyncio.sleep(0.1)
    finally:
        lead.kill()
        lead.wait()
    store = SQLiteStore(home / "store.db")
    try:
        [g] = store.generations()
    finally:
        store.close()
    async with piagents.Runtime(home, model=MODEL, settings=_settings()) as rt:
        opened = await rt.open_root(session=g.root_id)
        assert generation(rt, g.id).state == "lost"
        log = next(home.glob("runs/*/worker.log"))
        # The late worker starts, finds its generation taken, and gives up.
        await until(lambda: "was ended or taken before the worker started" in log.read_text())
        g = generation(rt, g.id)
        assert (g.state, g.outcome) == ("lost", None)
        assert g.pid == lead.pid  # never replaced by the worker's own record
        lost = results_for(rt, opened, g.id)
        assert len(lost) == 1 and "lost" in lost[0].text


async def test_close_kills_a_worker_that_does_not_stop_within_the_abort_timeout(
    home: Path, work: Path, workers: list[int]
) -> None:
    settings = _settings(abortTimeoutMs=1000)
    async with piagents.Runtime(home, model=MODEL, settings=settings) as rt:
        lead = await rt.open_root(cwd=work)
        details = await delegate(lead, "sleep 30", workers)
        label, request = details["agent"], details["request"]
        await inspected_running(lead, label, "sleep 30")
        os.kill(details["startup"]["pid"], signal.SIGSTOP)  # it can no longer hear anything
        started = time.monotonic()
        closed = await call(lead, action="close", agent=label)
        assert 1 <= time.monotonic() - started < 5
        assert closed["action"] == "close"
        g = generation(rt, request)
        assert g.outcome == "closed"
        holder = LeaseHolder(g.pid or 0, g.host or "", g.token or "", g.started or "")
        assert lease.presence(holder) == "gone"


async def test_a_users_message_to_a_worker_run_agent_reaches_the_worker_not_a_second_copy(
    lead_rt: tuple[piagents.Runtime, Agent], workers: list[int]
) -> None:
    rt, lead = lead_rt
    details = await delegate(lead, "sleep 1.5", workers)
    await inspected_running(lead, details["agent"], "sleep 1.5")
    record = rt.store.get_session(details["session"])
    assert record is not None
    accepted = await rt.delivery.deliver(None, record, "from the user", "steer")
    assert accepted.record.delivered is False
    assert details["session"] not in rt.agents  # never loaded here
    g = await ended(rt, details["request"])
    assert (g.outcome, g.result) == ("completed", "done: from the user")
