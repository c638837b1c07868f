"""DBOS (the `dbos` package) measured on a real local PostgreSQL, for the workers'
design (issue 14; the findings are in docs/dbos-notes.md).

Starts a throwaway server (`piagents.testing_postgres`), a fresh database for
DBOS's system tables, and worker processes (`dbos_probe.py worker ...`), each a
DBOS app with its own executor_id, sharing that database.

    launch      DBOS(config) + launch() and destroy() in a fresh process: their cost,
                the tables and schema DBOS makes
    latency     enqueue (DBOSClient, from this process) -> the workflow's first line
                on a worker, p50/p99, for queue polling intervals 1 s and 0.05 s,
                2 workers, a partitioned queue (one partition per root)
    kill        a worker running a dequeued workflow is killed -9: does the other
                worker take it over (watched for --watch seconds)? then recovery
                through the API on the live worker, and a restart of the dead
                worker's executor_id: how long each takes
    async       an async workflow in a process whose asyncio loop keeps running; a
                direct start; a dequeued async workflow: on which loop it runs
    start-enqueued  a workflow id already enqueued, started directly: now or later?

    python bench/dbos_probe.py [--only launch,latency,kill,async] [--samples N] [--watch S]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from _common import emit, machine, note, quantile, subprocess_env

from piagents.testing_postgres import PostgresServer, binaries

QUEUE = "roots"
APP = "piagents-probe"


# ---- the worker process -------------------------------------------------------------


def worker_main(url: str, executor_id: str, poll: float, hold_ready: Path | None) -> None:
    from dbos import DBOS, DBOSConfig

    config: DBOSConfig = {
        "name": APP,
        "system_database_url": url,
        "executor_id": executor_id,
        "run_admin_server": False,
        "application_version": "probe-1",  # the same on every worker: each may recover the others'
    }
    DBOS(config=config)

    @DBOS.workflow(name="first_line")
    def first_line(tag: str) -> dict[str, Any]:
        return {"started": time.time(), "executor": executor_id, "pid": os.getpid(), "tag": tag}

    @DBOS.step()
    def step(i: int, step_s: float) -> tuple[str, float]:
        started = time.time()
        time.sleep(step_s)  # a model call: its answer is recorded, never made twice
        return executor_id, started

    @DBOS.workflow(name="hold")
    def hold(steps: int, step_s: float) -> dict[str, Any]:
        ran = [step(i, step_s) for i in range(steps)]
        return {"ended": time.time(), "executor": executor_id, "steps": ran}

    t0 = time.perf_counter()
    DBOS.launch()
    launched = time.perf_counter() - t0
    # Queues are rows of the system database, registered once DBOS is launched; the
    # queue thread starts a poller for each within its 1 s check.
    DBOS.register_queue(
        QUEUE, polling_interval_sec=poll, partition_concurrency=1, worker_concurrency=8
    )
    poller = f"queue-worker-{QUEUE}"
    while not any(t.name == poller for t in threading.enumerate()):
        time.sleep(0.01)
    print(f"ready {executor_id} {launched:.4f} {time.perf_counter() - t0:.4f}", flush=True)
    cmd = sys.stdin.readline().strip()  # "recover <executor id>" or EOF
    while cmd:
        if cmd == "cpu":
            c0, t0 = time.process_time(), time.perf_counter()
            time.sleep(5)
            print(f"cpu {(time.process_time() - c0) / (time.perf_counter() - t0):.4f}", flush=True)
        if cmd.startswith("recover "):
            t1 = time.perf_counter()
            handles = DBOS._recover_pending_workflows([cmd.split()[1]])
            print(f"recovered {len(handles)} {time.perf_counter() - t1:.4f}", flush=True)
        cmd = sys.stdin.readline().strip()
    DBOS.destroy()


class Worker:
    def __init__(self, url: str, executor_id: str, poll: float) -> None:
        self.executor_id = executor_id
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "worker", url, executor_id, str(poll)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if os.environ.get("PROBE_DEBUG") else subprocess.DEVNULL,
            text=True,
            env=subprocess_env(),
        )
        line = self.readline("ready")
        self.launch_s = float(line.split()[2])  # launch()
        self.ready_s = float(line.split()[3])  # and its queue's poller running

    def readline(self, prefix: str) -> str:
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"worker {self.executor_id} ended ({self.proc.wait()})")
            if line.startswith(prefix):
                return line

    def send(self, cmd: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(cmd + "\n")
        self.proc.stdin.flush()

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()


# ---- measurements ------------------------------------------------------------------


def tables(pg: PostgresServer, name: str) -> list[str]:
    import psycopg

    with psycopg.connect(pg.url(name), autocommit=True) as db:
        rows = db.execute(
            "SELECT table_schema || '.' || table_name FROM information_schema.tables "
            "WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1"
        ).fetchall()
    return [str(r[0]) for r in rows]


def launch_cost(pg: PostgresServer) -> None:
    url = pg.database()
    name = url.rsplit("/", 1)[1]
    code = (
        "import time, json; t0 = time.perf_counter(); from dbos import DBOS; "
        "t1 = time.perf_counter(); "
        f"DBOS(config={{'name': '{APP}', 'system_database_url': '{url}', "
        "'run_admin_server': False}); t2 = time.perf_counter(); DBOS.launch(); "
        "t3 = time.perf_counter(); DBOS.destroy(); t4 = time.perf_counter(); "
        "print(json.dumps({'import_s': t1 - t0, 'construct_s': t2 - t1, "
        "'launch_s': t3 - t2, 'destroy_s': t4 - t3}))"
    )
    import json

    for fresh in (True, False):  # the first launch lays out the schema
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env()
        )
        line = json.loads(done.stdout.strip().splitlines()[-1])
        emit({"kind": "dbos", "probe": "launch", "fresh_database": fresh, **line})
    emit({"kind": "dbos", "probe": "tables", "tables": tables(pg, name)})


def latency(pg: PostgresServer, poll: float, samples: int, n_workers: int) -> None:
    from dbos import DBOSClient

    url = pg.database()
    workers = [Worker(url, f"w{i}", poll) for i in range(n_workers)]
    client = DBOSClient(system_database_url=url)
    try:
        lat: list[float] = []
        by = {w.executor_id: 0 for w in workers}
        for i in range(samples):
            # Enqueue at a random phase of the pollers: right after a result, the
            # worker has just polled, and every sample would wait a whole interval.
            time.sleep(random.uniform(0, poll))
            t0 = time.time()
            handle = client.enqueue(
                {
                    "queue_name": QUEUE,
                    "workflow_name": "first_line",
                    "queue_partition_key": f"root{i % 4}",
                },
                f"s{i}",
            )
            out = handle.get_result(polling_interval_sec=0.01)
            lat.append(out["started"] - t0)
            by[out["executor"]] += 1
        emit(
            {
                "kind": "dbos",
                "probe": "latency",
                "polling_interval_s": poll,
                "workers": n_workers,
                "samples": samples,
                "p50_ms": statistics.median(lat) * 1e3,
                "p99_ms": quantile(lat, 0.99) * 1e3,
                "min_ms": min(lat) * 1e3,
                "max_ms": max(lat) * 1e3,
                "by_executor": by,
                "launch_s": [w.launch_s for w in workers],
                "idle_cpu_share": idle_cpu(workers[0]),
            }
        )
    finally:
        client.destroy()
        for w in workers:
            w.stop()


def idle_cpu(worker: Worker) -> float:
    """The share of one core the worker uses idle (its queue poller polling), over 5 s."""
    worker.send("cpu")
    return float(worker.readline("cpu").split()[1])


def status(client: Any, workflow_id: str) -> tuple[str, str | None]:
    s = client.retrieve_workflow(workflow_id).get_status()
    return str(s.status), s.executor_id


def takeover(steps: list[Any], dead: str | None, t0: float, key: str) -> dict[str, Any]:
    """Which executor ran the steps; how soon after `t0` the first step after the
    kill started (its recorded start time): the takeover's latency."""
    by: dict[str, int] = {}
    for executor, _ in steps:
        by[executor] = by.get(executor, 0) + 1
    after = [started for _, started in steps if started >= t0]
    return {
        f"{key}_steps_by": by,
        f"{key}_first_step_after_s": (min(after) - t0) if after else None,
    }


def kill_probe(pg: PostgresServer, watch: float) -> None:
    from dbos import DBOSClient

    url = pg.database()
    poll = 0.05
    a, b = Worker(url, "wa", poll), Worker(url, "wb", poll)
    client = DBOSClient(system_database_url=url)
    try:
        handle = client.enqueue(
            {"queue_name": QUEUE, "workflow_name": "hold", "queue_partition_key": "root1"},
            40,
            0.05,
        )
        wid = handle.get_workflow_id()
        while status(client, wid)[0] != "PENDING":
            time.sleep(0.01)
        time.sleep(0.3)  # some steps done
        _, owner = status(client, wid)
        victim, survivor = (a, b) if owner == "wa" else (b, a)
        victim.kill()
        killed = time.time()
        note(f"kill: {owner} killed while running {wid}")
        seen = []
        while time.time() - killed < watch:
            seen.append(status(client, wid))
            if seen[-1][0] != "PENDING" or seen[-1][1] != owner:
                break
            time.sleep(0.1)
        taken_over = seen[-1] != ("PENDING", owner)
        row: dict[str, Any] = {
            "kind": "dbos",
            "probe": "kill",
            "watch_s": watch,
            "taken_over_by_itself": taken_over,
            "status_after_watch": seen[-1],
        }
        # 1. the API on the live worker: recover the dead executor's workflows.
        t0 = time.time()
        survivor.send(f"recover {owner}")
        row["recover_call"] = survivor.readline("recovered").split()[1:]
        out = client.retrieve_workflow(wid).get_result(polling_interval_sec=0.01)
        row["recover_api_to_end_s"] = time.time() - t0
        row["finished_by"] = out["executor"]
        row |= takeover(out["steps"], owner, t0, "recover_api")
        # 2. the same executor_id restarted: its own pending workflows, at launch.
        handle2 = client.enqueue(
            {"queue_name": QUEUE, "workflow_name": "hold", "queue_partition_key": "root2"},
            40,
            0.05,
        )
        wid2 = handle2.get_workflow_id()
        while status(client, wid2)[0] != "PENDING":
            time.sleep(0.01)
        time.sleep(0.3)
        _, owner2 = status(client, wid2)
        victim2 = survivor if survivor.executor_id == owner2 else None
        if victim2 is not None:
            victim2.kill()
            t1 = time.time()
            again = Worker(url, owner2 or "", poll)
            row["restart_launch_s"] = again.launch_s
            row["restart_ready_s"] = again.ready_s
            out2 = client.retrieve_workflow(wid2).get_result(polling_interval_sec=0.01)
            row["restart_to_end_s"] = time.time() - t1
            row["restart_finished_by"] = out2["executor"]
            row |= takeover(out2["steps"], None, t1, "restart")
            again.stop()
        emit(row)
    finally:
        client.destroy()
        for w in (a, b):
            if w.proc.poll() is None:
                w.stop()


def async_probe(pg: PostgresServer) -> None:
    """An async workflow inside a running asyncio loop: the loop's lag while it runs."""
    url = pg.database()
    code = f"""
import asyncio, json, time
from dbos import DBOS
DBOS(config={{'name': '{APP}', 'system_database_url': '{url}', 'run_admin_server': False}})

@DBOS.step()
async def call_model(i: int) -> float:
    await asyncio.sleep(0.001)
    return time.time()

@DBOS.workflow()
async def turn(n: int) -> int:
    for i in range(n):
        await call_model(i)
    return n

async def main():
    t0 = time.perf_counter(); DBOS.launch(); launch = time.perf_counter() - t0
    lags = []
    async def ticker():
        while True:
            t = time.perf_counter(); await asyncio.sleep(0.005)
            lags.append(time.perf_counter() - t - 0.005)
    tick = asyncio.create_task(ticker())
    t1 = time.perf_counter()
    n = await turn(50)
    wf = time.perf_counter() - t1
    t2 = time.perf_counter()
    handles = [await DBOS.start_workflow_async(turn, 5) for _ in range(20)]
    for h in handles:
        await h.get_result()
    many = time.perf_counter() - t2
    @DBOS.workflow()
    async def first_line() -> float:
        return time.time()

    direct = []
    for _ in range(50):
        t3 = time.time()
        h = await DBOS.start_workflow_async(first_line)
        direct.append(await h.get_result() - t3)
    direct.sort()

    # A dequeued async workflow: on which loop and thread does it run?
    main_loop = asyncio.get_running_loop()

    @DBOS.workflow()
    async def where() -> dict:
        import threading
        return {{'on_main_loop': asyncio.get_running_loop() is main_loop,
                 'thread': threading.current_thread().name, 'started': time.time()}}

    q = await DBOS.register_queue_async('probe_async', polling_interval_sec=0.02)
    await asyncio.sleep(1.2)  # the queue thread starts a poller within its 1 s check
    t4 = time.time()
    h = await q.enqueue_async(where)
    placed = await h.get_result()
    placed['enqueue_to_start_ms'] = (placed.pop('started') - t4) * 1e3
    tick.cancel()
    lags.sort()
    print(json.dumps({{'launch_s': launch, 'workflow_50_steps_s': wf, 'per_step_ms': wf / 50 * 1e3,
        'twenty_workflows_of_5_steps_s': many, 'loop_lag_p50_ms': lags[len(lags)//2] * 1e3,
        'loop_lag_max_ms': lags[-1] * 1e3, 'same_loop': True,
        'direct_start_p50_ms': direct[25] * 1e3, 'direct_start_max_ms': direct[-1] * 1e3,
        'dequeued_async': placed}}))
    DBOS.destroy()

asyncio.run(main())
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env()
    )
    import json

    if done.returncode != 0:
        emit({"kind": "dbos", "probe": "async", "error": done.stderr[-2000:]})
        return
    emit({"kind": "dbos", "probe": "async", **json.loads(done.stdout.strip().splitlines()[-1])})


def start_enqueued(pg: PostgresServer) -> None:
    """A workflow id already ENQUEUED on a slow queue, then started directly with that
    id: does the direct start run it now, or does it wait for the queue?"""
    url = pg.database()
    code = f"""
import json, time
from dbos import DBOS, DBOSClient, SetWorkflowID
DBOS(config={{'name': '{APP}', 'system_database_url': '{url}', 'executor_id': 'w1',
             'application_version': 'probe-1'}})
runs = []

@DBOS.workflow(name='first')
def first(tag: str) -> float:
    runs.append((tag, time.time()))
    return time.time()

DBOS.launch()
DBOS.register_queue('slow', polling_interval_sec=3.0, partition_concurrency=1)
time.sleep(1.5)
client = DBOSClient(system_database_url='{url}')
client.enqueue({{'queue_name': 'slow', 'workflow_name': 'first', 'workflow_id': 'X',
                'queue_partition_key': 'r1'}}, 'queued')
t0 = time.time()
with SetWorkflowID('X'):
    h = DBOS.start_workflow(first, 'direct')
h.get_result()
print(json.dumps({{'runs': [t for t, _ in runs], 'ran_after_ms': (runs[0][1] - t0) * 1e3}}))
client.destroy()
DBOS.destroy()
"""
    import json

    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env()
    )
    out = json.loads(done.stdout.strip().splitlines()[-1])
    emit({"kind": "dbos", "probe": "start-enqueued", "queue_poll_s": 3.0, **out})


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "worker":
        worker_main(sys.argv[2], sys.argv[3], float(sys.argv[4]), None)
        return
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--only", default="launch,latency,kill,async,start-enqueued")
    p.add_argument("--samples", type=int, default=100)
    p.add_argument("--watch", type=float, default=10.0)
    p.add_argument("--polls", default="1.0,0.05,0.01")
    p.add_argument("--workers", default="2", help="worker processes, e.g. 1,2")
    args = p.parse_args()
    only = set(args.only.split(","))
    bin_dir = binaries()
    if bin_dir is None:
        raise SystemExit("the PostgreSQL server binaries (initdb, pg_ctl) are not installed")
    emit({"kind": "machine", **machine()})
    pg = PostgresServer(bin_dir)
    pg.start()
    try:
        if "launch" in only:
            launch_cost(pg)
        if "latency" in only:
            for n_workers in (int(x) for x in args.workers.split(",")):
                for poll in (float(x) for x in args.polls.split(",")):
                    latency(pg, poll, args.samples, n_workers)
        if "kill" in only:
            kill_probe(pg, args.watch)
        if "async" in only:
            async_probe(pg)
        if "start-enqueued" in only:
            start_enqueued(pg)
    finally:
        pg.stop()


if __name__ == "__main__":
    asyncio.set_event_loop_policy(None)
    main()
