"""`pi-agents worker`: roots of a PostgreSQL store placed on worker processes, messages
between workers, and a worker killed with kill -9 in the middle of busy turns."""

from __future__ import annotations

import asyncio
import collections
from pathlib import Path

import pytest

from piagents.runtime import Runtime
from piagents.store.records import InputRecord, MessageEntry
from piagents.testing_workers import WorkerProcess, registered, start_workers

ROUTES = str(Path(__file__).parent)
pytestmark = pytest.mark.timeout(240)


def _tool_results(rt: Runtime, session_id: str) -> int:
    """How many tool results the session has committed (its steps done)."""
    return sum(
        isinstance(e, MessageEntry) and e.message.role == "toolResult"
        for e in rt.store.entries(session_id)
    )


def _answers(rt: Runtime, session_id: str) -> list[str]:
    out = []
    for e in rt.store.entries(session_id):
        if isinstance(e, MessageEntry) and e.message.role == "assistant" and e.message.text:
            out.append(e.message.text)
    return out


async def _until(condition, timeout: float, what: str) -> None:  # type: ignore[no-untyped-def]
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        await asyncio.sleep(0.05)


async def _offline_roots(rt: Runtime, work: Path, names: list[str], model: str) -> dict[str, str]:
    ids = {}
    for name in names:
        root = await rt.open_root(cwd=work, name=name, model=model)
        ids[name] = root.id
        await rt.unload(root)  # offline: a worker takes it when an input comes
    return ids


async def _post(rt: Runtime, root_id: str, text: str) -> InputRecord:
    record = rt.store.get_session(root_id)
    assert record is not None
    accepted = await rt.delivery.deliver(None, record, text, "followUp")
    assert accepted.route == "placed"
    return accepted.record


def _workers(tmp_path: Path, n: int, **kw) -> list[WorkerProcess]:  # type: ignore[no-untyped-def]
    return start_workers(
        kw.pop("url"),
        [tmp_path / f"worker{i}" for i in range(n)],
        pythonpath=[ROUTES],
        env={"PIAGENTS_TEST_DELAY": "0.02"},
        poll=0.2,
        **kw,
    )


async def test_an_input_for_an_offline_root_runs_on_a_worker_and_the_root_goes_offline_again(
    postgres_url: str, tmp_path: Path, work: Path
) -> None:
    workers = _workers(tmp_path, 1, url=postgres_url, capacity=2)
    try:
        async with Runtime(tmp_path / "client", settings={"store": postgres_url}) as rt:
            await registered(rt.store, workers)
            ids = await _offline_roots(rt, work, ["solo"], "faux/worker_routes:echo")
            sent = await _post(rt, ids["solo"], "hello")

            def ended() -> bool:
                return not rt.store.inputs(recipient_ids=[ids["solo"]], outstanding=True)

            await _until(ended, 30, "the input ended")
            [record] = rt.store.inputs(recipient_ids=[ids["solo"]])
            assert (record.id, record.status) == (sent.id, "completed")
            assert record.result == f"done by {workers[0].pid}: hello"
            await _until(lambda: rt.store.lease_of(ids["solo"]) is None, 30, "released")
            load = {w.pid: w.load for w in rt.store.workers() if w.kind == "worker"}
            assert load == {workers[0].pid: 0}
    finally:
        for w in workers:
            w.stop()


async def test_three_workers_share_the_roots_talk_across_workers_and_survive_a_kill_9(
    postgres_url: str, tmp_path: Path, work: Path
) -> None:
    workers = _workers(tmp_path, 3, url=postgres_url, capacity=2)
    names = [f"r{i}" for i in range(6)]
    settings = {"store": postgres_url, "pi-agents": {"leaseLapseMs": 2000, "leaseRenewMs": 400}}
    try:
        async with Runtime(tmp_path / "client", settings=settings) as rt:
            await registered(rt.store, workers)
            ids = await _offline_roots(rt, work, names, "faux/worker_routes:team")
            for i, name in enumerate(names):
                await _post(rt, ids[name], f"team 5 {names[(i + 1) % len(names)]}")
            by_token = {w.token: w for w in workers}

            def holders() -> dict[str, list[str]]:
                held = collections.defaultdict(list)
                for name, root_id in ids.items():
                    holder = rt.store.lease_of(root_id)
                    if holder is not None:
                        held[holder.token].append(name)
                return held

            await _until(lambda: len(holders()) >= 2, 30, "roots placed on two workers or more")
            busiest = max(holders().items(), key=lambda kv: len(kv[1]))
            victim = by_token[busiest[0]]
            victims = busiest[1]

            def helpers_mid_turn() -> bool:  # every helper of the victim's roots: a step done
                for name in victims:
                    tree = [s.id for s in rt.store.list_sessions(root_id=ids[name])]
                    helper = [s for s in tree if s != ids[name]]
                    if not helper or not _tool_results(rt, helper[0]):
                        return False
                return True

            await _until(helpers_mid_turn, 60, "the victim's helpers mid-turn")
            before = {sid: [e.id for e in rt.store.entries(sid)] for sid in _all(rt, ids)}
            victim.kill()

            def all_ended() -> bool:  # and settled: every root offline again (an ended
                # input's notification to its owner comes just after the input ends)
                idle = all(rt.store.lease_of(r) is None for r in ids.values())
                return idle and not rt.store.inputs(outstanding=True)

            await _until(all_ended, 120, "every input ended after the takeover")

            # Nothing committed was lost: what each session had is a prefix of what it has.
            for sid, entry_ids in before.items():
                assert [e.id for e in rt.store.entries(sid)][: len(entry_ids)] == entry_ids
            inputs = rt.store.inputs()
            assert {i.status for i in inputs} == {"completed"}, [
                (i.text, i.status, i.result) for i in inputs if i.status != "completed"
            ]
            survivors = {str(w.pid) for w in workers if w is not victim}
            for name in names:
                answers = _answers(rt, ids[name])
                finals = [a for a in answers if a.startswith("team done by")]
                assert len(finals) == 1, _transcript(rt, ids[name])  # the turn ended once
                if name in victims:
                    assert finals[0].split()[-1] in survivors  # and went on elsewhere
                helper = next(s for s in _all(rt, {name: ids[name]}) if s != ids[name])
                steps = [a for a in _answers(rt, helper) if "steps by" in a]
                assert len(steps) == 1, steps
                assert steps[0].startswith("5 steps")  # no step lost, none made twice
            hellos = [i for i in inputs if "hello from" in i.text]
            assert sorted(i.text for i in hellos) == sorted(f"hello from {n}" for n in names)
    finally:
        for w in workers:
            w.stop()


def _all(rt: Runtime, ids: dict[str, str]) -> list[str]:
    out = []
    for root_id in ids.values():
        out += [root_id, *(s.id for s in rt.store.list_sessions(root_id=root_id))]
    return out


def _transcript(rt: Runtime, session_id: str) -> str:
    lines = []
    for e in rt.store.entries(session_id):
        if isinstance(e, MessageEntry):
            m = e.message
            calls = [c.args for c in getattr(m, "tool_calls", [])]
            lines.append(f"{m.role}: {m.text[:120]!r} {calls or ''}")
    return "\n".join(lines)


async def test_a_worker_cut_off_mid_turn_loses_its_root_and_writes_nothing_to_it_after(
    postgres_url: str, tmp_path: Path, work: Path
) -> None:
    leases = {"pi-agents": {"leaseLapseMs": 1500, "leaseRenewMs": 300}}
    workers = _workers(tmp_path, 2, url=postgres_url, capacity=2, settings=leases)
    try:
        async with Runtime(tmp_path / "client", settings={"store": postgres_url, **leases}) as rt:
            await registered(rt.store, workers)
            ids = await _offline_roots(rt, work, ["cut"], "faux/worker_routes:slow_steps")
            root_id = ids["cut"]
            sent = await _post(rt, root_id, "steps 6")

            def holder() -> WorkerProcess | None:
                lease = rt.store.lease_of(root_id)
                return next((w for w in workers if lease and w.token == lease.token), None)

            await _until(
                lambda: holder() is not None and _tool_results(rt, root_id) >= 1, 30, "mid-turn"
            )
            cut = holder()
            assert cut is not None
            survivor = next(w for w in workers if w is not cut)
            cut.pause()  # alive, silent: its heartbeat lapses, nothing proves it dead
            await _until(lambda: holder() is survivor, 30, "the survivor takes the root over")
            cut.resume()  # back, with the bash step it was running still to finish

            def ended() -> bool:
                return not rt.store.inputs(recipient_ids=[root_id], outstanding=True)

            await _until(ended, 60, "the input ended")
            [record] = rt.store.inputs(recipient_ids=[root_id])
            assert (record.id, record.status) == (sent.id, "completed")
            answers = _answers(rt, root_id)
            finals = [a for a in answers if "steps by" in a]
            assert finals == [record.result], _transcript(rt, root_id)
            assert record.result is not None
            assert record.result.startswith("6 steps by ")
            assert record.result.split()[3].rstrip(",") == str(survivor.pid)
            await _until(
                lambda: "taken over" in cut.log.read_text(), 30, "the cut-off worker to notice"
            )
    finally:
        for w in workers:
            w.stop()


async def test_a_worker_asked_to_stop_lets_the_turns_it_holds_finish_first(
    postgres_url: str, tmp_path: Path, work: Path
) -> None:
    [worker] = _workers(tmp_path, 1, url=postgres_url, capacity=2)
    try:
        async with Runtime(tmp_path / "client", settings={"store": postgres_url}) as rt:
            await registered(rt.store, [worker])
            ids = await _offline_roots(rt, work, ["long"], "faux/worker_routes:slow_steps")
            await _post(rt, ids["long"], "steps 4")

            await _until(lambda: _tool_results(rt, ids["long"]) >= 1, 30, "the turn under way")
            assert worker.stop() == 0  # SIGTERM: drains, then exits
            [record] = rt.store.inputs(recipient_ids=[ids["long"]])
            assert record.status == "completed", record.result
            assert record.result is not None and record.result.startswith("4 steps by ")
            assert rt.store.lease_of(ids["long"]) is None
            assert "draining 1 root(s)" in worker.log.read_text()
    finally:
        worker.stop()


async def test_a_worker_rides_out_its_database_going_down_and_takes_work_once_it_is_back(
    own_server, tmp_path: Path, work: Path
) -> None:
    url = own_server.database()
    [worker] = _workers(tmp_path, 1, url=url, capacity=2)
    try:
        async with Runtime(tmp_path / "client", settings={"store": url}) as rt:
            await registered(rt.store, [worker])
            ids = await _offline_roots(rt, work, ["later"], "faux/worker_routes:echo")
        own_server.halt()
        await _until(
            lambda: "A sweep for waiting roots failed" in worker.log.read_text(),
            30,
            "the worker's sweeps to fail",
        )
        own_server.start(own_server.port)
        assert worker.process.poll() is None  # still running
        async with Runtime(tmp_path / "client", settings={"store": url}) as rt:
            await _until(
                lambda: any(w.alive and w.pid == worker.pid for w in rt.store.workers()),
                30,
                "its heartbeat back",
            )
            await _post(rt, ids["later"], "still there?")
            await _until(
                lambda: not rt.store.inputs(recipient_ids=[ids["later"]], outstanding=True),
                30,
                "the input ended",
            )
            [record] = rt.store.inputs(recipient_ids=[ids["later"]])
            assert record.result == f"done by {worker.pid}: still there?"
    finally:
        worker.stop()
