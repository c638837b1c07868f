"""The interactive UI under load: delta-to-paint latency and idle CPU (issue 4).

    delta -> paint    from the model yielding a text delta to the first frame whose
                      terminal output contains it, while the root streams a
                      2,000-line Markdown answer and 50 owned Agents stream
                      thinking deltas (every event reaches the task panel's listener).
    loop lag          how late a 5 ms timer fires during that stream (responsiveness).
    idle CPU          process CPU time over a few seconds with nothing happening:
                      first with the 50 Agents live but silent, then with the tree idle.

The app runs headless (Textual's Pilot); each frame's update is rendered to a
terminal byte string, as the real driver would write it, and searched for the
markers the answer's lines carry (`L0000` ...).

    python bench/tui_bench.py [--quick] [--lines N] [--agents N] [--idle S]

Prints one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import re
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from _common import machine, summary, temp_home

from piagents.ai.events import StreamEnd, StreamEvent, TextDelta, ThinkingDelta, ToolCallDelta
from piagents.ai.messages import AssistantMessage, TextContent, ToolCall
from piagents.ai.provider import ModelRequest
from piagents.runtime import Runtime
from piagents.testing import FunctionModel
from piagents.tui.app import PiAgentsApp

MARKER = re.compile(r"L(\d{4})")
TARGET_PAINT_MS = 100.0  # median; a tenth of a second reads as immediate
TARGET_IDLE_CPU = 1.0  # percent of one core


def answer_lines(n: int) -> list[str]:
    """A Markdown answer: paragraphs, lists and code blocks; every line carries a marker."""
    out: list[str] = []
    i = 0
    while i < n:
        block = (i // 10) % 4
        if block == 3:  # a fenced code block of up to 8 lines
            out.append("```python")
            for _ in range(min(8, n - i)):
                out.append(f"x = 'L{i:04d}'  # some code on line {i}")
                i += 1
            out.append("```")
        elif block == 2:
            out.append(f"- L{i:04d} a list item with a few words of text on it")
            i += 1
        else:
            out.append(f"L{i:04d} is a sentence of a paragraph, long enough to read.")
            out.append("")
            i += 1
    return out


class Bench:
    def __init__(self, lines: int, agents: int, pace: float) -> None:
        self.lines = answer_lines(lines)
        self.agents = agents
        self.pace = pace
        self.sent: dict[int, float] = {}
        self.painted: dict[int, float] = {}
        self.chatter = asyncio.Event()  # set: owned Agents stream thinking deltas
        self.release = asyncio.Event()  # set: owned Agents answer
        self.frames = 0
        self.first_unpainted = 0
        self.paint_s = 0.0
        self.stream_done = asyncio.Event()

    # ---- the model -------------------------------------------------------------------

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        if request.agent_name is not None:
            async for event in self._child():
                yield event
            return
        last = request.messages[-1]
        if last.role == "toolResult":
            async for event in self._answer():
                yield event
            return
        if last.role == "user" and last.text == "go":
            calls = [
                ToolCall("agent", {"action": "spawn", "name": f"a{i}", "message": "work"}, f"s{i}")
                for i in range(self.agents)
            ]
            for i, call in enumerate(calls):
                yield ToolCallDelta(i, call.id, call.name, json.dumps(call.args))
            yield StreamEnd(AssistantMessage(tuple(calls), "toolUse"))
            return
        yield StreamEnd(AssistantMessage((TextContent("noted"),)))

    async def _answer(self) -> AsyncIterator[StreamEvent]:
        text: list[str] = []
        for line in self.lines:
            m = MARKER.search(line)
            half = max(len(line) // 2, m.end() if m else 0)
            for chunk in (line[:half], line[half:] + "\n"):
                if chunk:
                    if m and MARKER.search(chunk):
                        self.sent[int(m.group(1))] = time.perf_counter()
                    text.append(chunk)
                    yield TextDelta(chunk)
                    await asyncio.sleep(self.pace)
        self.stream_done.set()
        yield StreamEnd(AssistantMessage((TextContent("".join(text)),)))

    async def _child(self) -> AsyncIterator[StreamEvent]:
        while self.chatter.is_set() and not self.release.is_set():
            yield ThinkingDelta(".")
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(0.1):
                    await self.release.wait()
        await self.release.wait()  # silent: no timer of ours while the UI idles
        yield StreamEnd(AssistantMessage((TextContent("done"),)))

    # ---- the paint ---------------------------------------------------------------------

    def on_frame(self, output: str, spent: float) -> None:
        self.frames += 1
        self.paint_s += spent
        found = [int(x) for x in MARKER.findall(output)]
        if not found:
            return
        # Lines stream in order: a painted line means every earlier one was painted too
        # (it may have scrolled past within the same frame).
        now = time.perf_counter()
        for i in range(self.first_unpainted, max(found) + 1):
            if i in self.sent:
                self.painted[i] = now
        self.first_unpainted = max(self.first_unpainted, max(found) + 1)


class BenchModel(FunctionModel):
    def __init__(self, bench: Bench) -> None:
        super().__init__(lambda call: "", "bench")
        self.bench = bench

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        return self.bench.stream(request)


class MeasuredApp(PiAgentsApp):
    """Renders each frame to terminal bytes, as the real driver would, and reports it."""

    def __init__(self, runtime: Runtime, open_root: Any, on_frame: Callable[[str, float], None]):
        super().__init__(runtime, open_root)
        self.on_frame = on_frame

    def _display(self, screen: Any, renderable: Any) -> None:
        super()._display(screen, renderable)
        if renderable is None or not hasattr(renderable, "render_segments"):
            return
        start = time.perf_counter()
        output = renderable.render_segments(self.console)
        self.on_frame(output, time.perf_counter() - start)


async def until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    try:
        async with asyncio.timeout(timeout):
            while not predicate():
                await asyncio.sleep(0.01)
    except TimeoutError:
        raise SystemExit(f"tui_bench: timed out waiting for {what}") from None


async def settle(bench: Bench, quiet: float = 1.0, timeout: float = 60.0) -> None:
    """Wait until no frame has been painted for `quiet` seconds (the UI caught up)."""
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        frames = bench.frames
        await asyncio.sleep(quiet)
        if bench.frames == frames:
            return
    raise SystemExit("tui_bench: the UI kept painting")


async def idle_cpu(seconds: float) -> float:
    """Percent of one core this process used while only sleeping."""
    start_cpu, start = time.process_time(), time.perf_counter()
    await asyncio.sleep(seconds)
    return 100 * (time.process_time() - start_cpu) / (time.perf_counter() - start)


async def run(lines: int, agents: int, idle_s: float, pace: float) -> dict[str, Any]:
    bench = Bench(lines, agents, pace)
    lags: list[float] = []
    with temp_home() as base:
        settings = {"pi-agents": {"maxConcurrent": agents, "maxOutstanding": agents + 8}}
        rt = Runtime(home=base / "home", model=BenchModel(bench), settings=settings)
        app = MeasuredApp(rt, lambda r: r.open_root(base / "work"), bench.on_frame)
        async with app.run_test(size=(120, 40)) as pilot:
            await until(lambda: app.root is not None, 30, "the root")
            await pilot.pause()
            root = app.root
            assert root is not None
            bench.chatter.set()
            started = time.perf_counter()
            rt.coordinator.user_input(root, "go")

            async def ticker() -> None:
                while not bench.stream_done.is_set():
                    t = time.perf_counter()
                    await asyncio.sleep(0.005)
                    lags.append(time.perf_counter() - t - 0.005)

            tick = asyncio.ensure_future(ticker())
            await until(bench.stream_done.is_set, 600, "the stream")
            streamed = time.perf_counter() - started
            await tick
            await until(lambda: len(bench.painted) == len(bench.sent), 60, "the last paint")
            bench.chatter.clear()
            await until(lambda: not root.loop.busy, 60, "the root's turn")
            await settle(bench)
            live = len(rt.coordinator.live_agents(root.id))
            panel = list(app.task_panel.lines)
            cpu_live = await idle_cpu(idle_s)
            bench.release.set()
            await until(lambda: not rt.coordinator.tree_has_live_work(root.id), 60, "idle tree")
            await until(lambda: not root.loop.busy, 60, "the notifications")
            await settle(bench)
            cpu_idle = await idle_cpu(idle_s)
            await app.action_quit()
    latencies = [1000 * (bench.painted[i] - bench.sent[i]) for i in bench.sent]
    paint = summary(latencies)
    return {
        "kind": "result",
        "bench": "tui",
        "answer_lines": lines,
        "live_agents": live,
        "panel_rows": panel[:2] + ([panel[-1]] if len(panel) > 2 else []),
        "delta_to_paint_ms": {
            k: round(v, 2) if isinstance(v, float) else v for k, v in paint.items()
        },
        "delta_to_paint_p99_ms": round(sorted(latencies)[int(0.99 * (len(latencies) - 1))], 2),
        "target_paint_ms": TARGET_PAINT_MS,
        "stream_s": round(streamed, 2),
        "stream_ideal_s": round(2 * lines * pace, 2),
        "frames": bench.frames,
        "render_ms_per_frame": round(1000 * bench.paint_s / max(bench.frames, 1), 3),
        "loop_lag_ms": {
            "median": round(1000 * summary(lags)["median"], 2),
            "p90": round(1000 * summary(lags)["p90"], 2),
            "max": round(1000 * max(lags), 2),
        },
        "idle_cpu_percent_tree_live": round(cpu_live, 2),
        "idle_cpu_percent_tree_idle": round(cpu_idle, 2),
        "target_idle_cpu_percent": TARGET_IDLE_CPU,
        "verdict": "pass"
        if paint["median"] < TARGET_PAINT_MS and max(cpu_live, cpu_idle) < TARGET_IDLE_CPU
        else "MISS",
        "machine": machine(),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="200 lines, 10 Agents, 1 s idle")
    p.add_argument("--lines", type=int, default=2000)
    p.add_argument("--agents", type=int, default=50)
    p.add_argument("--idle", type=float, default=3.0, help="seconds of each idle measurement")
    p.add_argument("--pace", type=float, default=0.001, help="seconds between deltas")
    args = p.parse_args()
    if args.quick:
        args.lines, args.agents, args.idle = 200, 10, 1.0
    line = asyncio.run(run(args.lines, args.agents, args.idle, args.pace))
    print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
