"""Latency of the Pi Agents hand-offs (issue 3), median and p90 over ~200 samples.

    spawn -> first model call   from calling `agent` spawn to the child's model
                                call being entered (the route runs). Target < 5 ms.
    answer -> wait returns      from the child's model call returning its answer
                                to the owner's `agent` wait (on that child)
                                returning. Target < 2 ms.

Each sample spawns a fresh child; the owner is already inside `wait` when the
child answers. A new root is opened every 20 samples, so trees stay the size
of a typical one rather than growing to 200 children.

    python bench/bench_latency.py [--quick] [--samples N] [--profile]
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from _common import common_args, emit, profiled, result, summary, temp_home

import piagents
from piagents.agent import Agent
from piagents.testing import FunctionModel, ModelCall

TARGET_SPAWN_MS = 5.0
TARGET_WAIT_MS = 2.0
PER_ROOT = 20


@dataclass
class Probe:
    """What the children's model records: when it was entered and when it answered."""

    entered: dict[str, float] = field(default_factory=dict)
    answered: dict[str, float] = field(default_factory=dict)
    arrived: dict[str, asyncio.Event] = field(default_factory=dict)
    release: dict[str, asyncio.Event] = field(default_factory=dict)

    def expect(self, name: str) -> None:
        self.arrived[name] = asyncio.Event()
        self.release[name] = asyncio.Event()

    async def route(self, call: ModelCall) -> str:
        name = call.agent_name
        if name is None or name not in self.arrived:
            return "root turn"
        self.entered[name] = time.perf_counter()
        self.arrived[name].set()
        await self.release[name].wait()
        self.answered[name] = time.perf_counter()
        return f"{name} is done: the answer, in one line."


async def until(predicate: Callable[[], bool], timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0)


async def sample(rt: piagents.Runtime, root: Agent, probe: Probe, name: str) -> tuple[float, ...]:
    probe.expect(name)
    t0 = time.perf_counter()
    res = await root.call_tool("agent", {"action": "spawn", "name": name, "message": "go"})
    spawn_returned = time.perf_counter()
    assert not res.is_error, res.text
    await probe.arrived[name].wait()
    returned: list[float] = []

    async def wait() -> None:
        out = await root.call_tool("agent", {"action": "wait", "target": name, "timeout": 60})
        returned.append(time.perf_counter())
        assert not out.is_error and "is done" in out.text, out.text

    waiter = asyncio.create_task(wait())
    await until(lambda: rt.coordinator.state_of(root.id) == "waiting")
    probe.release[name].set()
    await waiter
    return (
        (probe.entered[name] - t0) * 1e3,
        (spawn_returned - t0) * 1e3,
        (returned[0] - probe.answered[name]) * 1e3,
    )


async def measure(base: Path, samples: int) -> dict[str, list[float]]:
    probe = Probe()
    out: dict[str, list[float]] = {"first_call": [], "spawn_call": [], "wait_return": []}
    async with piagents.Runtime(home=base / "home", model=FunctionModel(probe.route)) as rt:
        root = await rt.open_root(cwd=base / "work")
        for i in range(samples + 5):
            if i and i % PER_ROOT == 0:
                root = await rt.open_root(cwd=base / "work")
            first_call, spawn_call, wait_return = await sample(rt, root, probe, f"c{i}")
            if i >= 5:  # the first few warm caches up
                out["first_call"].append(first_call)
                out["spawn_call"].append(spawn_call)
                out["wait_return"].append(wait_return)
    return out


def run(samples: int) -> dict[str, list[float]]:
    with temp_home() as base:
        return asyncio.run(measure(base, samples))


def main() -> None:
    p = common_args(__doc__ or "")
    p.add_argument("--samples", type=int, default=None)
    args = p.parse_args()
    samples = args.samples or (30 if args.quick else 200)
    if args.profile:
        profiled(lambda: run(samples))
        return
    out = run(samples)
    emit({"kind": "detail", "bench": "latency", **{k: summary(v) for k, v in out.items()}})
    result(
        "latency",
        "spawn -> child's first model call",
        out["first_call"],
        unit="ms",
        target=TARGET_SPAWN_MS,
        spread="p10p90",
    )
    result(
        "latency",
        "  of which the spawn call itself",
        out["spawn_call"],
        unit="ms",
        target=None,
        spread="p10p90",
    )
    result(
        "latency",
        "child's answer -> owner's wait returns",
        out["wait_return"],
        unit="ms",
        target=TARGET_WAIT_MS,
        spread="p10p90",
    )


if __name__ == "__main__":
    main()
