"""Scale in one process: a root spawning N owned Agents into one tree (issue 12).

One Runtime, a faux model that answers at once, and a root calling the `agent`
tool's spawn N times (default 10,000) with limits high enough that none waits
for a slot, yielding to the event loop after each call as a model's turn would
(so the children's turns run during the spawns and count in their time).

Prints the time of each block of 1,000 spawns, the total, the time until every
child's turn has ended, the process's CPU time (the figure to compare on a
shared machine), and the event loop's lag (how late a ticker's
`asyncio.sleep(0.01)` wakes), p50 and p99.

Targets: the last block of 1,000 costs at most 1.5x the first; all under 15 s.

Run by hand (not part of run_all.py, not in the test suite):

    python bench/scale_spawn.py [--n 10000] [--block 1000] [--profile]
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from _common import common_args, emit, note, profiled, quantile, temp_home

import piagents
from piagents.testing import FunctionModel, ModelCall

TARGET_RATIO = 1.5
TARGET_TOTAL_S = 15.0
TICK_S = 0.01


class Children:
    """The faux model: every child answers at once; counts the answers."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.answered = 0
        self.all_answered = asyncio.Event()

    async def route(self, call: ModelCall) -> str:
        if call.agent_name is None:
            return "root turn"
        self.answered += 1
        if self.answered >= self.n:
            self.all_answered.set()
        return "done"


async def ticker(lags: list[float], stop: asyncio.Event) -> None:
    """How late a short sleep wakes, again and again, until `stop`."""
    while not stop.is_set():
        t0 = time.perf_counter()
        await asyncio.sleep(TICK_S)
        lags.append(time.perf_counter() - t0 - TICK_S)


async def measure(base: Path, n: int, block: int, settle: bool) -> dict[str, object]:
    children = Children(n)
    limit = max(n * 2, 16)
    settings = {"pi-agents": {"maxConcurrent": limit, "maxOutstanding": limit}}
    lags: list[float] = []
    stop = asyncio.Event()
    blocks: list[float] = []
    cpu_blocks: list[float] = []
    rt = piagents.Runtime(
        home=base / "home", model=FunctionModel(children.route), settings=settings
    )
    if settle:
        piagents.settle_long_lived(rt)  # as the pi-agents command does (piagents.heap)
    async with rt:
        root = await rt.open_root(cwd=base / "work")
        tick = asyncio.create_task(ticker(lags, stop))
        start = t_block = time.perf_counter()
        cpu_start = cpu_block = time.process_time()
        for i in range(n):
            res = await root.call_tool(
                "agent", {"action": "spawn", "name": f"w{i}", "message": "hi"}
            )
            assert not res.is_error, res.text
            # A spawn runs to its end without suspending: yield as a model's turn does
            # between tool calls, so the children and the ticker run meanwhile.
            await asyncio.sleep(0)
            if (i + 1) % block == 0:
                now, cpu_now = time.perf_counter(), time.process_time()
                blocks.append(now - t_block)
                cpu_blocks.append(cpu_now - cpu_block)
                note(
                    f"spawns {i + 1 - block:>6}-{i + 1:<6} {now - t_block:8.3f} s "
                    f"(CPU {cpu_now - cpu_block:.3f} s)"
                )
                t_block, cpu_block = now, cpu_now
        spawned = time.perf_counter() - start
        await asyncio.wait_for(children.all_answered.wait(), timeout=600)
        drained = time.perf_counter() - start
        cpu = time.process_time() - cpu_start
        stop.set()
        await tick
    return {
        "n": n,
        "block": block,
        "blocks_s": blocks,
        "cpu_blocks_s": cpu_blocks,
        "spawns_s": spawned,
        "all_answered_s": drained,
        "cpu_s": cpu,
        "loadavg": os.getloadavg(),
        "lag_p50_ms": quantile(lags, 0.5) * 1e3 if lags else 0.0,
        "lag_p99_ms": quantile(lags, 0.99) * 1e3 if lags else 0.0,
        "lag_max_ms": max(lags) * 1e3 if lags else 0.0,
        "ticks": len(lags),
    }


def run(n: int, block: int, settle: bool) -> dict[str, object]:
    with temp_home() as base:
        return asyncio.run(measure(base, n, block, settle))


def main() -> None:
    p = common_args(__doc__ or "")
    p.add_argument("--n", type=int, default=10_000, help="spawns (default 10,000)")
    p.add_argument("--block", type=int, default=1_000, help="spawns per timed block")
    p.add_argument(
        "--settle-heap",
        action="store_true",
        help="keep the cycle collector off long-lived Agents, as the pi-agents command does",
    )
    args = p.parse_args()
    n = 1_000 if args.quick else args.n
    block = min(args.block, n)
    if args.profile:
        profiled(lambda: run(n, block, args.settle_heap), top=40)
        return
    out = run(n, block, args.settle_heap)
    blocks = out["blocks_s"]
    assert isinstance(blocks, list)
    ratio = blocks[-1] / blocks[0] if blocks and blocks[0] > 0 else float("nan")
    out["last_over_first"] = ratio
    cpu_blocks = out["cpu_blocks_s"]
    assert isinstance(cpu_blocks, list)
    cpu_ratio = cpu_blocks[-1] / cpu_blocks[0] if cpu_blocks and cpu_blocks[0] > 0 else 0.0
    out["cpu_last_over_first"] = cpu_ratio
    out["verdict"] = (
        "pass"
        if ratio <= TARGET_RATIO and float(str(out["all_answered_s"])) < TARGET_TOTAL_S
        else "MISS"
    )
    emit({"kind": "detail", "bench": "scale_spawn", **out})
    note(
        f"total {out['spawns_s']:.2f} s for {n} spawns, {out['all_answered_s']:.2f} s until "
        f"every child answered; last/first block {ratio:.2f}x (target <= {TARGET_RATIO}), "
        f"in CPU time {cpu_ratio:.2f}x; "
        f"loop lag p50 {out['lag_p50_ms']:.1f} ms, p99 {out['lag_p99_ms']:.1f} ms, "
        f"max {out['lag_max_ms']:.1f} ms; process CPU {out['cpu_s']:.2f} s; {out['verdict']}"
    )


if __name__ == "__main__":
    main()
