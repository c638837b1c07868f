"""`pi-agents worker` processes on one PostgreSQL store (issue 14), in one run.

Starts a throwaway server (`piagents.testing_postgres`) and real worker processes
(`piagents.testing_workers`); this process is the client: a runtime on the same
store that leaves inputs for offline roots, which the workers take.

    latency     an input for an offline root -> the root's first model call on a
                worker (the model answers with the time it was asked; the same
                machine's clock), one input at a time, on 1 and on 2 idle workers
    throughput  R roots each given one latency-bound turn (`--delay` a model call,
                `--steps` tool steps: 5 model calls), all at once, on 1, 2 and 3
                workers of `--capacity` each: wall time, turns/s, and the ideal
                (ceil(R / roots held at once) x a turn's own time)

    delegate    a lead (this process) whose managed agents run on the pool
                (`spawnPlacement: workers`) delegates one at a time: how long the
                `delegate` call takes (until the agent's process, started by the
                worker, has recorded itself) and until its first model call; with
                `--gap` seconds between delegations (default 2: the worker's
                standby process is ready) and back to back (each comes while the
                standby that replaces the last one is still starting)

Target: the first model call under 50 ms after the input is accepted.

    python bench/bench_workers.py [--quick] [--samples N]
                                  [--only latency,throughput,delegate]
"""

from __future__ import annotations

import asyncio
import math
import time
from pathlib import Path

from _common import BENCH_DIR, SRC_DIR, common_args, emit, machine, note, result, temp_home

from piagents.runtime import Runtime
from piagents.testing_postgres import PostgresServer, binaries
from piagents.testing_workers import WorkerProcess, registered, start_workers

ROUTES = "faux/worker_bench_routes"


async def _roots(rt: Runtime, work: Path, n: int, model: str) -> list[str]:
    ids = []
    for i in range(n):
        root = await rt.open_root(cwd=work, name=f"b{i}", model=model)
        ids.append(root.id)
        await rt.unload(root)
    return ids


async def _post(rt: Runtime, root_id: str, text: str) -> str:
    record = rt.store.get_session(root_id)
    assert record is not None
    accepted = await rt.delivery.deliver(None, record, text, "followUp")
    assert accepted.route == "placed", accepted.route
    return accepted.record.id


async def _ended(rt: Runtime, ids: list[str], timeout: float = 300.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while rt.store.inputs(recipient_ids=ids, outstanding=True):
        if loop.time() > deadline:
            raise TimeoutError("inputs still open")
        await asyncio.sleep(0.002)


def _start(url: str, base: Path, n: int, capacity: int, env: dict[str, str]) -> list[WorkerProcess]:
    return start_workers(
        url,
        [base / f"w{i}" for i in range(n)],
        capacity=capacity,
        pythonpath=[str(BENCH_DIR), str(SRC_DIR)],
        env=env,
    )


async def latency(pg: PostgresServer, samples: int, workers: int) -> None:
    url = pg.database()
    with temp_home() as base:
        procs = _start(url, base, workers, 4, {})
        try:
            async with Runtime(base / "home", settings={"store": url}) as rt:
                await registered(rt.store, procs)
                ids = await _roots(rt, base / "work", samples + 3, f"{ROUTES}:clock")
                gaps = []
                for i, root_id in enumerate(ids):
                    t0 = time.time()
                    await _post(rt, root_id, "what time is it")
                    await _ended(rt, [root_id])
                    [done] = rt.store.inputs(recipient_ids=[root_id])
                    if i >= 3:  # the first placements warm the workers up
                        gaps.append((float(done.result or "nan") - t0) * 1000)
                    # The next one only once this root is offline again: a fresh placement.
                    while rt.store.lease_of(root_id) is not None:
                        await asyncio.sleep(0.005)
                result(
                    "workers", f"input -> first model call, {workers} idle worker(s)", gaps,
                    unit="ms", target=50.0, spread="p10p90", p99=sorted(gaps)[-1],
                )  # fmt: skip
        finally:
            for p in procs:
                p.stop()


async def delegate_latency(pg: PostgresServer, samples: int, gap: float) -> None:
    url = pg.database()
    settings = {"store": url, "pi-agents": {"agentApi": "supervision", "spawnPlacement": "workers"}}
    with temp_home() as base:
        procs = _start(url, base, 1, 4, {})
        try:
            async with Runtime(base / "home", settings=settings) as rt:
                await registered(rt.store, procs)
                lead = await rt.open_root(cwd=base / "work", model=f"{ROUTES}:clock")
                calls, firsts = [], []
                for i in range(samples + 1):
                    t0 = time.time()
                    res = await lead.call_tool(
                        "agent", {"action": "delegate", "definition": "generalist", "task": "t"}
                    )
                    assert not res.is_error, res.text
                    returned = time.time()
                    request = res.details["request"]
                    while (g := rt.store.get_generation(request)) is None or g.outcome is None:
                        await asyncio.sleep(0.005)
                    if i >= 1:  # the first warms the worker's file cache
                        calls.append((returned - t0) * 1000)
                        firsts.append((float(g.result or "nan") - t0) * 1000)
                    await asyncio.sleep(gap)  # a bench: the pace of the delegations
                how = f"{gap:g} s apart" if gap else "back to back"
                result("workers", f"delegate on the pool, {how}: the call", calls, unit="ms",
                       target=None, spread="p10p90")  # fmt: skip
                result("workers", f"delegate on the pool, {how} -> first model call", firsts,
                       target=None, unit="ms", spread="p10p90")  # fmt: skip
        finally:
            for p in procs:
                p.stop()


async def throughput(
    pg: PostgresServer, workers: int, roots: int, capacity: int, delay: float, steps: int
) -> dict[str, float]:
    url = pg.database()
    env = {"PIAGENTS_BENCH_DELAY": str(delay), "PIAGENTS_BENCH_STEPS": str(steps)}
    with temp_home() as base:
        procs = _start(url, base, workers, capacity, env)
        try:
            async with Runtime(base / "home", settings={"store": url}) as rt:
                await registered(rt.store, procs)
                ids = await _roots(rt, base / "work", roots, f"{ROUTES}:steps")
                t0 = time.perf_counter()
                for root_id in ids:
                    await _post(rt, root_id, "work")
                await _ended(rt, ids)
                wall = time.perf_counter() - t0
                answers = [i.result or "" for i in rt.store.inputs(recipient_ids=ids)]
                assert all(a.startswith(f"done in {steps} steps") for a in answers), answers[:3]
                pids = {a.split()[-1] for a in answers}
        finally:
            for p in procs:
                p.stop()
    turn = (steps + 1) * delay
    ideal = math.ceil(roots / (workers * capacity)) * turn
    line = {
        "kind": "result", "bench": "workers", "name": f"throughput, {workers} worker(s)",
        "workers": workers, "capacity": capacity, "roots": roots, "wall_s": wall,
        "turns_per_s": roots / wall, "model_calls_per_s": roots * (steps + 1) / wall,
        "ideal_s": ideal, "over_ideal": wall / ideal, "workers_used": len(pids),
    }  # fmt: skip
    emit(line)
    return line


async def main() -> None:
    p = common_args(__doc__ or "")
    p.add_argument("--only", default="latency,throughput,delegate")
    p.add_argument("--samples", type=int, default=40)
    p.add_argument("--roots", type=int, default=48)
    p.add_argument("--capacity", type=int, default=4)
    p.add_argument("--delay", type=float, default=0.05)
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--gap", type=float, default=2.0, help="seconds between delegations")
    args = p.parse_args()
    if args.quick:
        args.samples, args.roots = 8, 12
    bin_dir = binaries()
    if bin_dir is None:
        raise SystemExit("the PostgreSQL server binaries (initdb, pg_ctl) are not installed")
    emit({"kind": "machine", **machine()})
    pg = PostgresServer(bin_dir)
    pg.start()
    try:
        only = args.only.split(",")
        if "latency" in only:
            for n in (1, 2):
                note(f"latency, {n} worker(s)")
                await latency(pg, args.samples, n)
        if "delegate" in only:
            for gap in (args.gap, 0.0):
                note(f"delegate on the pool, 1 worker, {gap:g} s between delegations")
                await delegate_latency(pg, max(3, args.samples // 4), gap)
        if "throughput" in only:
            lines = []
            for n in (1, 2, 3):
                note(f"throughput, {n} worker(s)")
                lines.append(
                    await throughput(pg, n, args.roots, args.capacity, args.delay, args.steps)
                )
            base = lines[0]["wall_s"]
            for line in lines:
                emit({"kind": "ratio", "bench": "workers", "workers": line["workers"],
                      "speedup_over_1": base / line["wall_s"]})  # fmt: skip
    finally:
        pg.stop()


if __name__ == "__main__":
    asyncio.run(main())
