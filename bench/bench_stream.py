"""1,000 Agents streaming at once in one process (issue 12).

A root spawns N owned Agents through the `agent` tool; each child's model streams
50 text deltas 40 ms apart (2 s of streaming), then answers; the root waits for all
of them. A ticker measures how late the event loop wakes (its lag), every 10 ms.

`--pacing server` (the default) sends delta i at (i+1) x 40 ms after the request, as a
model server does: it makes tokens at its own rate, and a client that reads a delta
late reads the next one sooner. `--pacing client` sleeps 40 ms after each delta is
taken, so every late wake of the client's loop makes the stream itself longer (the
pacing of the earlier runs in bench/RESULTS.md).

Targets: loop lag p99 under 20 ms; wall time (spawns included) under 1.3x the ideal
(the 2 s one stream takes); peak memory reported.

    python bench/bench_stream.py [--agents N] [--deltas D] [--gap-ms G]
                                 [--pacing server|client] [--profile]
"""

from __future__ import annotations

import asyncio
import gc
import resource
import time
from collections.abc import AsyncIterator
from typing import Any

from _common import common_args, emit, note, print_profile, quantile, result, temp_home

from piagents import Runtime, settle_long_lived
from piagents.ai.events import StreamEnd, StreamEvent, TextDelta
from piagents.ai.messages import AssistantMessage, TextContent
from piagents.ai.provider import ModelRequest
from piagents.testing import FunctionModel

LAG_TARGET_MS = 20.0
WALL_RATIO_TARGET = 1.3
TICK_S = 0.01


class StreamingModel(FunctionModel):
    """Children stream `deltas` pieces `gap` seconds apart; the root answers at once."""

    def __init__(self, deltas: int, gap: float, pacing: str = "server") -> None:
        super().__init__(lambda call: "root turn")
        self.deltas = deltas
        self.gap = gap
        self.pacing = pacing
        self.streams = 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        if request.agent_name is None:
            async for event in super().stream(request):
                yield event
            return
        self.streams += 1
        loop = asyncio.get_running_loop()
        start = loop.time()
        for i in range(self.deltas):
            if self.pacing == "server":
                await asyncio.sleep(max(0.0, start + (i + 1) * self.gap - loop.time()))
            else:
                await asyncio.sleep(self.gap)
            yield TextDelta(f"piece {i} ")
        text = "".join(f"piece {i} " for i in range(self.deltas))
        yield StreamEnd(
            AssistantMessage(
                (TextContent(text),),
                "stop",
                provider=request.model.provider,
                model=request.model.model_id,
                api="faux",
            )
        )


async def lag_ticker(samples: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        t0 = time.perf_counter()
        await asyncio.sleep(TICK_S)
        samples.append((time.perf_counter() - t0 - TICK_S) * 1e3)


async def run(agents: int, deltas: int, gap: float, pacing: str, settle: bool) -> dict[str, Any]:
    model = StreamingModel(deltas, gap, pacing)
    settings = {"pi-agents": {"maxConcurrent": agents, "maxOutstanding": agents}}
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with temp_home() as base:
        rt = Runtime(home=base / "home", model=model, settings=settings)
        if settle:
            settle_long_lived(rt)  # as the pi-agents command does (piagents.heap)
        async with rt:
            root = await rt.open_root(cwd=base / "work")
            gc.collect()
            lags: list[float] = []
            stop = asyncio.Event()
            ticker = asyncio.create_task(lag_ticker(lags, stop))
            t0 = time.perf_counter()
            c0 = time.process_time()
            for i in range(agents):
                res = await root.call_tool(
                    "agent", {"action": "spawn", "name": f"s{i}", "message": "stream"}
                )
                assert not res.is_error, res.text
                # A spawn whose store work does not suspend returns without letting
                # the loop run; yield as a model-driven root does between its turns.
                await asyncio.sleep(0)
            spawned = time.perf_counter() - t0
            spawn_cpu = time.process_time() - c0
            during_spawns = len(lags)
            read = 0
            while True:
                res = await root.call_tool("agent", {"action": "wait", "timeout": 3600})
                assert not res.is_error, res.text
                read += sum(1 for r in res.details["results"] if "result" in r)
                if not res.details["pending"] and not res.details["results"]:
                    break
            wall = time.perf_counter() - t0
            cpu = time.process_time() - c0
            stop.set()
            await ticker
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert read == agents, (read, agents)
    assert model.streams == agents, model.streams
    ideal = deltas * gap
    return {
        "agents": agents,
        "pacing": pacing,
        "settle_heap": settle,
        "wall_s": wall,
        "spawn_s": spawned,
        "cpu_s": cpu,
        "spawn_cpu_s": spawn_cpu,
        "ideal_s": ideal,
        "wall_ratio": wall / ideal,
        "lag_p50_ms": quantile(lags, 0.5),
        "lag_p99_ms": quantile(lags, 0.99),
        "lag_max_ms": max(lags),
        "lag_p99_spawning_ms": quantile(lags[:during_spawns] or [0.0], 0.99),
        "lag_p99_waiting_ms": quantile(lags[during_spawns:] or [0.0], 0.99),
        "peak_rss_mb": rss1 / 1024,
        "rss_growth_mb": (rss1 - rss0) / 1024,
    }


def main() -> None:
    p = common_args(__doc__ or "")
    p.add_argument("--agents", type=int, default=1000)
    p.add_argument("--deltas", type=int, default=50)
    p.add_argument("--gap-ms", type=float, default=40.0)
    p.add_argument("--pacing", choices=("server", "client"), default="server")
    p.add_argument(
        "--settle-heap",
        action="store_true",
        help="keep the cycle collector off long-lived Agents, as the pi-agents command does",
    )
    args = p.parse_args()
    agents = 50 if args.quick else args.agents
    reps = args.reps or (1 if args.quick or args.profile else 3)
    runs = []
    for _ in range(reps):
        if args.profile:
            import cProfile

            profiler = cProfile.Profile()
            profiler.enable()
            out = asyncio.run(
                run(agents, args.deltas, args.gap_ms / 1000, args.pacing, args.settle_heap)
            )
            profiler.disable()
            print_profile(profiler)
        else:
            out = asyncio.run(
                run(agents, args.deltas, args.gap_ms / 1000, args.pacing, args.settle_heap)
            )
        emit({"kind": "run", **out})
        note(
            f"{agents} streams ({args.pacing} pacing): wall {out['wall_s']:.2f} s "
            f"({out['wall_ratio']:.2f}x ideal), "
            f"spawns {out['spawn_s']:.2f} s, CPU {out['cpu_s']:.2f} s "
            f"(spawning {out['spawn_cpu_s']:.2f}), lag p99 {out['lag_p99_ms']:.1f} ms "
            f"(spawning {out['lag_p99_spawning_ms']:.1f}, "
            f"waiting {out['lag_p99_waiting_ms']:.1f}), "
            f"peak rss {out['peak_rss_mb']:.0f} MB"
        )
        runs.append(out)
    result(
        "stream",
        f"{agents} Agents streaming ({args.pacing} pacing): loop lag p99",
        [r["lag_p99_ms"] for r in runs],
        unit="ms",
        target=LAG_TARGET_MS,
        spread="minmax",
    )
    result(
        "stream",
        f"{agents} Agents streaming ({args.pacing} pacing): wall / ideal",
        [r["wall_ratio"] for r in runs],
        unit="x",
        target=WALL_RATIO_TARGET,
        spread="minmax",
        peak_rss_mb=max(r["peak_rss_mb"] for r in runs),
    )


if __name__ == "__main__":
    main()
