"""Programs (issue 13): a Program's fan-out, a `tools.*` call from it, starting one.

(a) `program`: a foreground Program makes 100 Agents with `agent()` and gathers
    all 1000 sends (10 per Agent, every one at once, as the `agent`-tool fan-out
    gives all 1000 inputs before it waits) with
    `asyncio.gather(..., return_exceptions=True)`; the faux model answers at once.
    Its runtime has run one trivial Program first, so the sandbox's worker is up.
(b) `agent tool`: bench_fanout's fan-out (`run_ours`, plain, limits 100/1000):
    spawn + send through the `agent` tool, then `wait`.
(c) `oa gather`: the OpenAI Agents SDK peer (/work/shared/peers/oa_fanout.py,
    plain): 100 sub-agents under `asyncio.gather`, 10 `Runner.run` each.

Each repetition runs (a), (b) and (c) in one fresh process, in an order that
rotates from one repetition to the next, each in a fresh runtime (limits
100/1000); ratios are taken per repetition. Target: (a) / (b) ≤ 1.2.

(d) `tools.*`: a Program awaiting `tools.ls(path=".")` (and the constant async
    `lookup`) N times in a loop against N direct `root.call_tool(...)` calls,
    alternating; the per-call difference (it includes one warm Program start,
    (e), spread over N). Target < 1 ms.
(e) start: a foreground `return 1` Program, warm (the first one, which starts
    the sandbox's worker, reported apart): median of many. Target < 20 ms.

    python bench/bench_program.py [--quick] [--reps N] [--profile]
    python bench/bench_program.py worker fanout --order K [--agents N] [--inputs N]
    python bench/bench_program.py worker calls [--calls N] [--starts N] [--reps N]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from _common import (
    BENCH_DIR,
    emit,
    note,
    print_profile,
    ratio_row,
    result,
    run_json,
    temp_home,
)
from _lookup import LookupRuntime
from bench_fanout import FINAL, PEERS, WIDE, Route, run_ours

from piagents.agent import Agent
from piagents.testing import FunctionModel

RATIO_TARGET = 1.2
CALL_TARGET_MS = 1.0
START_TARGET_MS = 20.0
JOBS = ("program", "agent", "oa")

FANOUT = """\
ws = [agent(name=f"w{{i}}") for i in range({agents})]
answers = await asyncio.gather(
    *[w.send(f"input {{i}}.{{j}}") for j in range({inputs}) for i, w in enumerate(ws)],
    return_exceptions=True,
)
failed = [repr(a) for a in answers if a != {final!r}]
return {{"answers": len(answers), "failed": failed[:3]}}
"""

LOOP = """\
for _ in range({n}):
    await tools.{tool}({args})
return {n}
"""


def sandbox_cpu_s() -> float:
    """CPU seconds (user + system) used so far by this process's monty workers."""
    me, total = str(os.getpid()), 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        end = text.rindex(")")
        fields = text[end + 2 :].split()
        if text[text.index("(") + 1 : end] == "monty" and fields[1] == me:
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


async def run_program(root: Agent, code: str) -> tuple[float, Any]:
    """One foreground Program: its wall time (the `program` call) and its value."""
    t0 = time.perf_counter()
    res = await root.call_tool("program", {"action": "run", "code": code})
    wall = time.perf_counter() - t0
    if res.is_error:
        raise RuntimeError(f"the Program failed:\n{res.text}")
    return wall, json.loads(res.text.rsplit("Output:\n", 1)[1])


async def program_fanout(
    agents: int, inputs: int, profiler: cProfile.Profile | None = None
) -> dict[str, Any]:
    """(a): the fan-out as one Program, in a fresh runtime whose sandbox is warm;
    `profiler` (if any) profiles the timed part only."""
    route = Route("plain")
    with temp_home() as base:
        async with LookupRuntime(
            home=base / "home",
            model=FunctionModel(route),
            settings={"pi-agents": WIDE},
            tools=["+program"],
        ) as rt:
            root = await rt.open_root(cwd=base / "work")
            first, _ = await run_program(root, "return 1")
            gc.collect()
            code = FANOUT.format(agents=agents, inputs=inputs, final=FINAL)
            if profiler is not None:
                profiler.enable()
            cpu0, sandbox0 = time.process_time(), sandbox_cpu_s()
            wall, value = await run_program(root, code)
            cpu, sandbox = time.process_time() - cpu0, sandbox_cpu_s() - sandbox0
            if profiler is not None:
                profiler.disable()
            children = rt.store.list_sessions(owner_id=root.id)
            entries = sum(len(rt.store.entries(c.id)) for c in children)
    runs = agents * inputs
    assert value == {"answers": runs, "failed": []}, value
    assert route.child_calls == runs, route.child_calls
    assert len(children) == agents, len(children)
    assert entries == 2 * runs, entries
    return {
        "framework": "pi-agents program",
        "wall_s": wall,
        "cpu_s": cpu,
        "sandbox_cpu_s": sandbox,
        "first_program_s": first,
        "runs": runs,
        "committed_entries": entries,
    }


async def oa_gather(agents: int, inputs: int) -> dict[str, Any]:
    """(c): the OpenAI Agents SDK peer script's fan-out, in this process."""
    if str(PEERS) not in sys.path:
        sys.path.insert(0, str(PEERS))
    import oa_fanout

    oa_fanout.SUBAGENTS, oa_fanout.INPUTS_PER_AGENT = agents, inputs
    oa_fanout.counts.update(model_calls=0, tool_calls=0)  # it asserts the counts of one run
    out: dict[str, Any] = await oa_fanout.fan_out(0)
    return {"framework": "openai-agents (peers/oa_fanout.py, asyncio.gather)", **out}


def fanout_worker(args: argparse.Namespace) -> None:
    """One repetition: (a), (b), (c), starting at JOBS[order]."""
    jobs = JOBS[args.order % 3 :] + JOBS[: args.order % 3]
    for job in jobs:
        gc.collect()
        if job == "program":
            out = asyncio.run(program_fanout(args.agents, args.inputs))
        elif job == "agent":
            out = asyncio.run(run_ours("plain", args.agents, args.inputs, "wide"))
        else:
            out = asyncio.run(oa_gather(args.agents, args.inputs))
        emit({"kind": "run", "job": job, **out})


async def calls_and_starts(calls: int, starts: int, reps: int) -> list[dict[str, Any]]:
    """(d) and (e) in one runtime."""
    lines: list[dict[str, Any]] = []
    with temp_home() as base:
        async with LookupRuntime(
            home=base / "home", model=FunctionModel(lambda call: "ok"), tools=["+program"]
        ) as rt:
            root = await rt.open_root(cwd=base / "work")
            first, _ = await run_program(root, "return 1")
            samples = []
            for _ in range(starts):
                wall, value = await run_program(root, "return 1")
                assert value == 1, value
                samples.append(wall)
            lines.append({"kind": "starts", "first_s": first, "warm_s": samples})
            for tool, args in (("ls", {"path": "."}), ("lookup", {"q": "x"})):
                code = LOOP.format(
                    n=calls, tool=tool, args=", ".join(f"{k}={v!r}" for k, v in args.items())
                )
                for rep in range(reps):
                    walls: dict[str, float] = {}
                    for how in ("direct", "program") if rep % 2 == 0 else ("program", "direct"):
                        gc.collect()
                        if how == "program":
                            walls[how], value = await run_program(root, code)
                            assert value == calls, value
                            continue
                        t0 = time.perf_counter()
                        for _ in range(calls):
                            res = await root.call_tool(tool, args)
                            assert not res.is_error, res.text
                        walls[how] = time.perf_counter() - t0
                    lines.append({"kind": "calls", "tool": tool, "calls": calls, **walls})
    return lines


def calls_worker(args: argparse.Namespace) -> None:
    for line in asyncio.run(calls_and_starts(args.calls, args.starts, args.reps)):
        emit(line)


def me(*extra: str) -> list[str]:
    return [sys.executable, str(BENCH_DIR / "bench_program.py"), "worker", *extra]


def driver(args: argparse.Namespace) -> None:
    reps = args.reps or (1 if args.quick else 6)
    agents, inputs = (10, 3) if args.quick else (100, 10)
    size = ["--agents", str(agents), "--inputs", str(inputs)]
    walls: dict[str, list[float]] = {job: [] for job in JOBS}
    firsts: list[float] = []
    for rep in range(reps):
        for line in run_json(me("fanout", "--order", str(rep), *size)):
            walls[line["job"]].append(line["wall_s"])
            if line["job"] == "program":
                firsts.append(line["first_program_s"])
            emit({"bench": "program", "rep": rep, **line, "kind": "detail"})
        note(
            f"program: rep {rep + 1}/{reps}: "
            + json.dumps({k: round(v[-1], 3) for k, v in walls.items()})
        )
    runs = f"{agents} x {inputs}"
    ratios = [p / a for p, a in zip(walls["program"], walls["agent"], strict=True)]
    result(
        "program",
        f"Program fan-out {runs} (agent() + gathered send())",
        walls["program"],
        unit="s",
        target=None,
        spread="minmax",
    )
    result(
        "program",
        f"agent-tool fan-out {runs} (bench_fanout, plain, limits 100/1000)",
        walls["agent"],
        unit="s",
        target=None,
        spread="minmax",
    )
    result(
        "program",
        "Program fan-out / agent-tool fan-out (per repetition)",
        ratios,
        unit="x",
        target=RATIO_TARGET,
        spread="minmax",
    )
    name = f"fan-out {runs}, plain"
    ratio_row("program", f"Program {name}", walls["program"], walls["agent"], "the agent tool")
    oa = "OpenAI Agents SDK, asyncio.gather (peers/oa_fanout.py, same process)"
    ratio_row("program", f"Program {name}", walls["program"], walls["oa"], oa)
    ratio_row("program", f"agent tool {name}", walls["agent"], walls["oa"], oa)

    calls, starts = (100, 10) if args.quick else (1000, 50)
    flags = ["--calls", str(calls), "--starts", str(starts), "--reps", "2" if args.quick else "6"]
    lines = run_json(me("calls", *flags))
    for line in lines:
        emit({"bench": "program", **line, "kind": f"detail-{line['kind']}"})
    (start,) = [line for line in lines if line["kind"] == "starts"]
    result(
        "program",
        "starting a Program, warm (`return 1`, foreground)",
        [s * 1e3 for s in start["warm_s"]],
        unit="ms",
        target=START_TARGET_MS,
        spread="p10p90",
        first_ms=start["first_s"] * 1e3,
    )
    result(
        "program",
        "  the first Program of a runtime (starts the sandbox's worker)",
        [f * 1e3 for f in firsts] + [start["first_s"] * 1e3],
        unit="ms",
        target=None,
        spread="minmax",
    )
    for tool in ("ls", "lookup"):
        rows = [line for line in lines if line["kind"] == "calls" and line["tool"] == tool]
        extra = [(r["program"] - r["direct"]) * 1e3 / r["calls"] for r in rows]
        direct = statistics.median(r["direct"] * 1e3 / r["calls"] for r in rows)
        result(
            "program",
            f"one `tools.{tool}` call from a Program, over a direct call_tool "
            f"({direct:.3f} ms direct)",
            extra,
            unit="ms",
            target=CALL_TARGET_MS,
            spread="minmax",
            direct_ms=direct,
        )


def profile(agents: int, inputs: int, dump: str | None) -> None:
    """The timed part of (a), then of (b), each under cProfile; `dump`: also save
    their stats to DUMP.program and DUMP.agent (for pstats)."""
    for job in ("program", "agent"):
        profiler = cProfile.Profile()
        gc.collect()
        if job == "program":
            out = asyncio.run(program_fanout(agents, inputs, profiler))
        else:
            out = asyncio.run(run_ours("plain", agents, inputs, "wide", profiler))
        note(f"==== {job} fan-out {agents} x {inputs}: {out['wall_s']:.3f} s (profiled) ====")
        print_profile(profiler, top=40)
        if dump:
            profiler.dump_stats(f"{dump}.{job}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--reps", type=int, default=None)
    p.add_argument(
        "--profile", action="store_true", help="the timed parts of (a) and (b) under cProfile"
    )
    p.add_argument("--dump", default=None, help="with --profile: save the stats to DUMP.*")
    sub = p.add_subparsers(dest="command")
    w = sub.add_parser("worker")
    w.add_argument("what", choices=("fanout", "calls"))
    w.add_argument("--order", type=int, default=0)
    w.add_argument("--agents", type=int, default=100)
    w.add_argument("--inputs", type=int, default=10)
    w.add_argument("--calls", type=int, default=1000)
    w.add_argument("--starts", type=int, default=50)
    w.add_argument("--reps", type=int, default=6)
    args = p.parse_args()
    if args.command == "worker":
        fanout_worker(args) if args.what == "fanout" else calls_worker(args)
    elif args.profile:
        profile(100, 10, args.dump)
    else:
        driver(args)


if __name__ == "__main__":
    main()
