"""A root fans out to 100 owned Agents with 10 inputs each (issue 3).

Through the SDK: `spawn` gives each Agent its first input, `send` (followUp)
the other nine, then `wait` collects all 1000 results. Every step is committed
to SQLite. Modes match the peer scripts in /work/shared/peers:

    plain     one model call per input
    tools     3 sequential calls of a constant async tool (`lookup`, as the
              peers' tool), then the answer: 4 model calls per input
    tools-ls  the same with the built-in `ls` on a tiny directory (it hops to a
              worker thread), to show what a real built-in tool adds

Limits: `wide` sets maxConcurrent 100 / maxOutstanding 1000 so they do not
serialise the run; `default` keeps the defaults (3 / 8): the root sends 8
inputs, waits for them, and repeats (125 waves, 3 Agents at a time).

Each repetition runs ours and the OpenAI Agents SDK fan-out (oa_same_process.py)
in one fresh process, then the peer scripts in their own processes, so every
ratio (ours / peer) compares runs made a few seconds apart. Target: < 2 s.

    python bench/bench_fanout.py [--quick] [--reps N] [--profile MODE]
    python bench/bench_fanout.py worker MODE [--limits wide|default] [--oa]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import json
import sys
import time
from pathlib import Path
from typing import Any

from _common import BENCH_DIR, emit, note, profiled, ratio_row, result, run_json, temp_home
from _lookup import LookupRuntime, LookupTool

from piagents.agent import Agent
from piagents.testing import FunctionModel, ModelCall, Reply, ToolCall

PEERS = Path("/work/shared/peers")
TARGET_S = 2.0
FINAL = "final answer"
WIDE = {"maxConcurrent": 100, "maxOutstanding": 1000}
DEFAULT_OUTSTANDING = 8


class Route:
    """The children's model: the answer, after 3 tool calls in the tool modes."""

    def __init__(self, mode: str) -> None:
        self.tool = {"plain": None, "tools": "lookup", "tools-ls": "ls"}[mode]
        self.child_calls = 0
        self.root_calls = 0

    def __call__(self, call: ModelCall) -> str | Reply:
        if call.agent_name is None:
            self.root_calls += 1
            return "root turn"
        self.child_calls += 1
        if self.tool is None:
            return FINAL
        done = 0
        for m in reversed(call.messages):  # tool results since this input
            if m.role == "user":
                break
            done += m.role == "toolResult"
        if done < 3:
            args = {"q": "x"} if self.tool == "lookup" else {"path": "."}
            return Reply(tool_calls=[ToolCall(self.tool, args)])
        return FINAL


async def agent_call(root: Agent, args: dict[str, Any]) -> dict[str, Any]:
    res = await root.call_tool("agent", args)
    if res.is_error:
        raise RuntimeError(f"{args['action']} failed: {res.text}")
    details: dict[str, Any] = res.details
    return details


async def drain(root: Agent, target: str | None = None) -> int:
    """`wait` until nothing is pending or unread; returns the results read."""
    read = 0
    while True:
        args: dict[str, Any] = {"action": "wait", "timeout": 3600}
        if target is not None:
            args["target"] = target
        details = await agent_call(root, args)
        read += sum(1 for r in details["results"] if "result" in r and not r["history"])
        if not details["pending"] and (target is not None or not details["results"]):
            return read


async def fan_out(root: Agent, agents: int, inputs: int, limits: str) -> int:
    """Spawn + send + wait; returns the number of results read."""
    items = [(i, j) for j in range(inputs) for i in range(agents)]  # round-robin

    async def give(i: int, j: int) -> None:
        if j == 0:
            args = {"action": "spawn", "name": f"w{i}", "message": f"input {i}.0"}
        else:
            args = {"action": "send", "target": f"w{i}", "message": f"input {i}.{j}"}
        await agent_call(root, args)

    if limits == "wide":
        for i, j in items:
            await give(i, j)
        return await drain(root)
    read = 0
    for start in range(0, len(items), DEFAULT_OUTSTANDING):
        for i, j in items[start : start + DEFAULT_OUTSTANDING]:
            await give(i, j)
        read += await drain(root)
    return read


async def run_ours(
    mode: str,
    agents: int,
    inputs: int,
    limits: str,
    profiler: cProfile.Profile | None = None,
    store: str | None = None,
) -> dict[str, Any]:
    """One fan-out in a fresh runtime; `profiler` (if any) profiles the timed part only;
    `store`: a PostgreSQL URL (an empty database) instead of the home's SQLite file."""
    route = Route(mode)
    LookupTool.calls = 0
    settings: dict[str, Any] = {"pi-agents": WIDE} if limits == "wide" else {}
    if store is not None:
        settings["store"] = store
    with temp_home() as base:
        async with LookupRuntime(
            home=base / "home", model=FunctionModel(route), settings=settings or None
        ) as rt:
            root = await rt.open_root(cwd=base / "work")
            gc.collect()
            if profiler is not None:
                profiler.enable()
            t0, cpu0 = time.perf_counter(), time.process_time()
            read = await fan_out(root, agents, inputs, limits)
            wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
            if profiler is not None:
                profiler.disable()
            children = rt.store.list_sessions(owner_id=root.id)
            entries = sum(len(rt.store.entries(c.id)) for c in children)
    runs = agents * inputs
    tools_per_run = 0 if mode == "plain" else 3
    assert read == runs, (read, runs)
    assert len(children) == agents
    assert route.child_calls == runs * (tools_per_run + 1), route.child_calls
    assert entries == runs * (2 + 2 * tools_per_run), entries
    if mode == "tools":
        assert LookupTool.calls == runs * tools_per_run, LookupTool.calls
    return {
        "framework": "pi-agents",
        "store": "sqlite" if store is None else "postgresql",
        "mode": mode,
        "limits": limits,
        "wall_s": wall,
        "cpu_s": cpu,
        "runs": runs,
        "model_calls": route.child_calls,
        "root_model_calls": route.root_calls,
        "committed_entries": entries,
        "ms_per_entry": wall * 1e3 / entries,
    }


def worker(args: argparse.Namespace) -> None:
    """One process: ours (and the OpenAI Agents SDK run, in either order)."""
    jobs: list[str] = ["ours"]
    if args.oa:
        jobs = ["oa", "ours"] if args.oa_first else ["ours", "oa"]
    for job in jobs:
        gc.collect()
        if job == "ours":
            out = asyncio.run(
                run_ours(args.mode, args.agents, args.inputs, args.limits, store=args.store)
            )
        else:
            from oa_same_process import run_fanout

            out = asyncio.run(run_fanout(args.mode, args.agents, args.inputs))
        emit({"kind": "run", **out})


def me(*extra: str) -> list[str]:
    return [sys.executable, str(BENCH_DIR / "bench_fanout.py"), "worker", *extra]


def driver(args: argparse.Namespace) -> None:
    reps = args.reps or (1 if args.quick else 5)
    size = ["--agents", "10", "--inputs", "3"] if args.quick else []
    walls: dict[str, list[float]] = {}

    def record(key: str, line: dict[str, Any]) -> None:
        walls.setdefault(key, []).append(line["wall_s"])
        emit({"kind": "detail", "bench": "fanout", "key": key, **line})

    for rep in range(reps):
        for mode in ("plain", "tools"):
            flags = [mode, *size]
            if not args.quick:
                flags += ["--oa"] + (["--oa-first"] if rep % 2 else [])
            for line in run_json(me(*flags)):
                key = "ours" if line["framework"] == "pi-agents" else "oa-same"
                record(f"{key}/{mode}", line)
            if args.quick:
                continue
            for peer in ("oa", "pai"):
                (line,) = run_json([sys.executable, str(PEERS / f"{peer}_fanout.py"), mode])
                record(f"{peer}/{mode}", line)
        for mode in ("plain", "tools", "tools-ls") if not args.quick else ("tools-ls",):
            if mode != "tools-ls":
                for line in run_json(me(mode, "--limits", "default", *size)):
                    record(f"ours-default/{mode}", line)
            else:
                for line in run_json(me(mode, *size)):
                    record(f"ours/{mode}", line)
        note(
            f"fanout: rep {rep + 1}/{reps} done: "
            + json.dumps({k: round(v[-1], 2) for k, v in walls.items()})
        )

    runs = "10 x 3" if args.quick else "100 x 10"
    for mode in ("plain", "tools", "tools-ls"):
        if f"ours/{mode}" in walls:
            result(
                "fanout",
                f"fan-out {runs}, {mode}, limits 100/1000",
                walls[f"ours/{mode}"],
                unit="s",
                target=TARGET_S,
                spread="minmax",
            )
    for mode in ("plain", "tools"):
        if f"ours-default/{mode}" in walls:
            result(
                "fanout",
                f"fan-out {runs}, {mode}, default limits 3/8 (125 waves)",
                walls[f"ours-default/{mode}"],
                unit="s",
                target=TARGET_S,
                spread="minmax",
            )
    for mode in ("plain", "tools"):
        ours = walls.get(f"ours/{mode}", [])
        for key, label in (
            ("oa", "OpenAI Agents SDK (peers/oa_fanout.py)"),
            ("pai", "pydantic-ai (peers/pai_fanout.py)"),
            ("oa-same", "OpenAI Agents SDK, agents as tools, same process"),
        ):
            theirs = walls.get(f"{key}/{mode}")
            if theirs:
                ratio_row("fanout", f"fan-out 100 x 10, {mode}", ours, theirs, label)
    if not args.quick:
        for line in run_json([sys.executable, str(PEERS / "sqlite_floor.py"), "5000"]):
            emit({"kind": "peer", "bench": "sqlite_floor", **line})


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--reps", type=int, default=None)
    p.add_argument("--profile", choices=("plain", "tools", "tools-ls"), default=None)
    sub = p.add_subparsers(dest="command")
    w = sub.add_parser("worker")
    w.add_argument("mode", choices=("plain", "tools", "tools-ls"))
    w.add_argument("--limits", choices=("wide", "default"), default="wide")
    w.add_argument("--agents", type=int, default=100)
    w.add_argument("--inputs", type=int, default=10)
    w.add_argument("--oa", action="store_true", help="also run oa_same_process in this process")
    w.add_argument("--oa-first", action="store_true")
    w.add_argument("--store", default=None, help="a PostgreSQL URL (bench_postgres.py)")
    args = p.parse_args()
    if args.command == "worker":
        worker(args)
    elif args.profile:
        profiled(lambda: asyncio.run(run_ours(args.profile, 100, 10, "wide")), top=30)
    else:
        driver(args)


if __name__ == "__main__":
    main()
