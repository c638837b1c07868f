"""Memory per loaded idle Agent, and what an offline Agent costs (issue 3).

Loaded: a root spawns N=500 Agents (one input each, answered at once), waits
for all, and they go idle but stay loaded. Reported: the tracemalloc growth
per Agent after a full collection (target < 100 KB), once more at N=1,000
(the cost per Agent grows with the tree), and the top allocation sites. RSS
growth is in the detail lines only: allocator reuse makes it swing from 1 to
140 KiB per Agent between runs.

Offline: after the Runtime closes, the Agents must cost nothing in this
process: reported are the tracemalloc bytes still held relative to before the
Runtime opened (per Agent), and how many Agent objects are still alive (weak
references). What they cost on disk: the store's rows and bytes per Agent
(SQLite's dbstat, after a checkpoint).

    python bench/bench_memory.py [--quick] [--agents N] [--reps N]
"""

from __future__ import annotations

import asyncio
import gc
import json
import resource
import sqlite3
import subprocess
import sys
import tracemalloc
import weakref
from pathlib import Path
from typing import Any

from _common import common_args, emit, note, result, temp_home

import piagents
from piagents.testing import FunctionModel, ModelCall

TARGET_BYTES = 100 * 1024
PEERS = Path("/work/shared/peers")


def rss_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def route(call: ModelCall) -> str:
    if call.agent_name is None:
        return "root turn"
    return f"{call.agent_name}: done, the change is in src/parser.py and the tests pass."


def message(i: int) -> str:
    return (
        f"Task {i}: fix the tokenizer's handling of nested brackets in module {i}, "
        "run the tests and report what changed in two sentences."
    )


async def spawn_all(rt: piagents.Runtime, root: piagents.Agent, names: list[str]) -> None:
    for name in names:
        res = await root.call_tool(
            "agent", {"action": "spawn", "name": name, "message": message(len(name))}
        )
        assert not res.is_error, res.text
    while True:  # until every result is read
        res = await root.call_tool("agent", {"action": "wait", "timeout": 3600})
        if not res.details["pending"] and not res.details["results"]:
            return


# Bytes of each owned Agent's rows: the text columns SQLite stores for it.
ROW_BYTES = {
    "sessions": (
        "SELECT count(*), sum(length(id) + length(cwd) + length(coalesce(name, '')) "
        "+ length(model) + length(thinking) + length(coalesce(owner_id, '')) "
        "+ length(coalesce(root_id, '')) + length(meta) + length(coalesce(latest_request, '')) "
        "+ length(state) + 24) FROM sessions WHERE owner_id = :root"
    ),
    "entries": (
        "SELECT count(*), sum(length(session_id) + length(entry_id) + length(type) "
        "+ length(body) + 8) FROM entries WHERE session_id IN "
        "(SELECT id FROM sessions WHERE owner_id = :root)"
    ),
    "inputs": (
        "SELECT count(*), sum(length(id) + length(root_id) + length(recipient_id) "
        "+ length(coalesce(sender_id, '')) + length(kind) + length(delivery) + length(text) "
        "+ length(status) + length(coalesce(result, '')) + 40) FROM inputs WHERE recipient_id IN "
        "(SELECT id FROM sessions WHERE owner_id = :root)"
    ),
    "search_docs": (
        "SELECT count(*), sum(length(session_id) + length(text) + 8) FROM search_docs "
        "WHERE session_id IN (SELECT id FROM sessions WHERE owner_id = :root)"
    ),
}


def disk_usage(db: Path, root_id: str) -> dict[str, Any]:
    """The store's size (dbstat pages, tables and indexes) and the owned Agents' rows."""
    con = sqlite3.connect(db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    pages = con.execute("SELECT sum(pgsize) FROM dbstat").fetchone()[0]
    sessions = con.execute("SELECT count(*) FROM sessions").fetchone()[0]
    rows: dict[str, int] = {}
    row_bytes = 0
    for table, sql in ROW_BYTES.items():
        count, size = con.execute(sql, {"root": root_id}).fetchone()
        rows[table] = count
        row_bytes += size or 0
    owned = rows["sessions"]
    con.close()
    return {
        "file_bytes": db.stat().st_size,
        "page_bytes": pages,
        "sessions": sessions,
        "page_bytes_per_session": pages / sessions,
        "row_bytes_per_agent": row_bytes / owned,
        "rows_per_agent": {t: n / owned for t, n in rows.items()},
    }


def settings(agents: int) -> dict[str, Any]:
    return {"pi-agents": {"maxConcurrent": min(100, agents), "maxOutstanding": agents + 10}}


async def warm_up(base: Path) -> None:
    """One whole cycle before measuring: lazy imports and caches fill here."""
    async with piagents.Runtime(
        home=base / "warm-home", model=FunctionModel(route), settings=settings(10)
    ) as rt:
        root = await rt.open_root(cwd=base / "work")
        await spawn_all(rt, root, [f"warm-{i}" for i in range(10)])


async def measure(base: Path, agents: int) -> dict[str, Any]:
    home = base / "home"
    await warm_up(base)
    gc.collect()
    tracemalloc.start(1)
    before_runtime = tracemalloc.get_traced_memory()[0]
    snap_baseline = tracemalloc.take_snapshot()
    refs: list[weakref.ref[Any]] = []
    async with piagents.Runtime(
        home=home, model=FunctionModel(route), settings=settings(agents)
    ) as rt:
        root = await rt.open_root(cwd=base / "work")
        await spawn_all(rt, root, [f"warm-{i}" for i in range(10)])  # this tree's first ones
        gc.collect()
        snap_before = tracemalloc.take_snapshot()
        traced_before, rss_before = tracemalloc.get_traced_memory()[0], rss_kib()
        await spawn_all(rt, root, [f"agent-{i}" for i in range(agents)])
        gc.collect()
        traced_after, rss_after = tracemalloc.get_traced_memory()[0], rss_kib()
        snap_after = tracemalloc.take_snapshot()
        loaded = [a for a in rt.agents.values() if a.name and a.name.startswith("agent-")]
        assert len(loaded) == agents, len(loaded)
        assert all(rt.coordinator.state_of(a.id) == "idle" for a in loaded)
        refs = [weakref.ref(a) for a in rt.agents.values()]
        root_id = root.id
        del loaded, root
    del rt
    gc.collect()
    alive = sum(r() is not None for r in refs)
    del refs  # our own list of weak references is not the runtime's
    gc.collect()
    after_close = tracemalloc.get_traced_memory()[0]
    snap_closed = tracemalloc.take_snapshot()
    tracemalloc.stop()
    residual = [
        {"site": str(stat.traceback[0]), "bytes": stat.size_diff}
        for stat in snap_closed.compare_to(snap_baseline, "lineno")[:8]
    ]
    top = [
        {"site": str(stat.traceback[0]), "kib_per_agent": stat.size_diff / agents / 1024}
        for stat in snap_after.compare_to(snap_before, "lineno")[:12]
    ]
    return {
        "agents": agents,
        "loaded_bytes_per_agent": (traced_after - traced_before) / agents,
        "loaded_rss_bytes_per_agent": (rss_after - rss_before) * 1024 / agents,
        "offline_bytes_per_agent": (after_close - before_runtime) / agents,
        "offline_alive_agent_objects": alive,
        "top_sites": top,
        "offline_residual_sites": residual,
        "disk": disk_usage(home / "store.db", root_id),
    }


def run(agents: int) -> dict[str, Any]:
    with temp_home() as base:
        return asyncio.run(measure(base, agents))


def peer_agent_mem() -> None:
    """The peers' bytes per Agent object (a definition, no conversation): a reference."""
    for peer in ("oa", "pai"):
        argv = [sys.executable, str(PEERS / f"{peer}_fanout.py"), "agent-mem"]
        done = subprocess.run(argv, capture_output=True, text=True, check=True)
        line = json.loads(done.stdout.strip().splitlines()[-1])
        emit({"kind": "peer", "bench": "memory", **line})


def main() -> None:
    p = common_args(__doc__ or "")
    p.add_argument("--agents", type=int, default=None)
    args = p.parse_args()
    agents = args.agents or (50 if args.quick else 500)
    reps = args.reps or (1 if args.quick else 3)
    rows = [run(agents) for _ in range(reps)]
    if not args.quick:
        peer_agent_mem()
    for row in rows:
        emit({"kind": "detail", "bench": "memory", **row})
    last = rows[-1]
    note("memory: top allocation sites, KiB per loaded Agent:")
    for site in last["top_sites"]:
        note(f"  {site['kib_per_agent']:8.2f}  {site['site']}")
    note(f"memory: disk {last['disk']}")
    result(
        "memory",
        f"loaded idle Agent (tracemalloc, N={agents})",
        [r["loaded_bytes_per_agent"] / 1024 for r in rows],
        unit="KiB",
        target=TARGET_BYTES / 1024,
        spread="minmax",
    )
    if not args.quick and not args.agents:
        # The per-Agent cost grows with the tree (see the top sites): one run at twice N.
        big = run(2 * agents)
        emit({"kind": "detail", "bench": "memory", **big})
        result(
            "memory",
            f"loaded idle Agent (tracemalloc, N={2 * agents}, one run)",
            [big["loaded_bytes_per_agent"] / 1024],
            unit="KiB",
            target=TARGET_BYTES / 1024,
            spread="minmax",
        )
    result(
        "memory",
        "offline Agents: Agent objects still alive after close",
        [r["offline_alive_agent_objects"] for r in rows],
        unit="objects",
        target=1,
        spread="minmax",
    )
    result(
        "memory",
        "offline Agent: traced bytes still held after close, per Agent",
        [max(0.0, r["offline_bytes_per_agent"]) for r in rows],
        unit="B",
        target=None,
        spread="minmax",
        alive_agent_objects=[r["offline_alive_agent_objects"] for r in rows],
        raw_bytes_per_agent=[r["offline_bytes_per_agent"] for r in rows],
    )
    result(
        "memory",
        "offline Agent: store pages on disk per session (dbstat, indexes incl.)",
        [r["disk"]["page_bytes_per_session"] for r in rows],
        unit="B",
        target=None,
        spread="minmax",
        rows_per_agent=last["disk"]["rows_per_agent"],
    )
    result(
        "memory",
        "offline Agent: its rows' bytes (sessions, entries, inputs, search_docs)",
        [r["disk"]["row_bytes_per_agent"] for r in rows],
        unit="B",
        target=None,
        spread="minmax",
    )


if __name__ == "__main__":
    main()
