"""Harness overhead per turn with 3 tool calls, every step committed (issue 2).

A root Agent runs `prompt()` repeatedly on real SQLite in a temp home; the faux
model answers at once:

    parallel    one response with 3 `ls` calls (tiny dir), then the answer:
                6 committed entries per prompt (user, assistant, 3 results, answer)
    sequential  3 responses with one `ls` call each, then the answer: 8 entries

Each layout runs in a fresh session and in one that already holds ~1,000
entries (appended through the store first), because the per-turn cost grows
with the context. Entries are counted with the store. Target: < 1 ms per
committed entry.

    python bench/bench_turn.py [--quick] [--reps N] [--runs N] [--profile]
"""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path
from typing import Any

from _common import common_args, emit, note, profiled, result, summary, temp_home
from bench_reopen import build

import piagents
from piagents.store.sqlite import SQLiteStore
from piagents.testing import FunctionModel, ModelCall, Reply, ToolCall

TARGET_MS_PER_ENTRY = 1.0
LAYOUTS = ("parallel", "sequential")
PREFILLS = (0, 1_002)  # whole exchanges of 6 entries


def make_route(layout: str) -> FunctionModel:
    def route(call: ModelCall) -> str | Reply:
        done = 0
        for m in reversed(call.messages):  # tool results since the prompt
            if m.role == "user":
                break
            done += m.role == "toolResult"
        if layout == "parallel":
            if done == 0:
                return Reply(tool_calls=[ToolCall("ls", {"path": "."}) for _ in range(3)])
            return "Three listings: README.md, main.py, notes.txt."
        if done < 3:
            return Reply(tool_calls=[ToolCall("ls", {"path": "."})])
        return "Three listings: README.md, main.py, notes.txt."

    return FunctionModel(route)


async def one_rep(base: Path, layout: str, runs: int, warmup: int, prefill: int) -> dict[str, Any]:
    session_id = None
    if prefill:
        store = SQLiteStore(base / "home" / "store.db")
        session_id = build(store, str(base / "work"), prefill, compact_keep=None)
        store.close()
    async with piagents.Runtime(home=base / "home", model=make_route(layout)) as rt:
        if session_id is None:
            root = await rt.open_root(cwd=base / "work")
        else:
            root = await rt.open_root(session=session_id)
        for i in range(warmup):
            await root.prompt(f"warm-up {i}: list the directory three times")
        before = len(rt.store.entries(root.id))
        times: list[float] = []
        for i in range(runs):
            t0 = time.perf_counter()
            answer = await root.prompt(f"prompt {i}: list the directory three times")
            times.append(time.perf_counter() - t0)
            assert answer.startswith("Three listings"), answer
        entries = len(rt.store.entries(root.id)) - before
    per_run = entries / runs
    tenth = max(1, runs // 10)
    return {
        "layout": layout,
        "prefill": prefill,
        "runs": runs,
        "entries": entries,
        "entries_per_run": per_run,
        "run_ms": statistics.median(times) * 1e3,
        "run_p90_ms": summary(times)["p90"] * 1e3,
        "entry_ms": statistics.median(times) * 1e3 / per_run,
        "total_s": sum(times),
        # Does a turn get slower as the session grows? (last tenth over first tenth)
        "late_over_early": statistics.median(times[-tenth:]) / statistics.median(times[:tenth]),
    }


def run_rep(layout: str, runs: int, warmup: int, prefill: int) -> dict[str, Any]:
    with temp_home() as base:
        return asyncio.run(one_rep(base, layout, runs, warmup, prefill))


def main() -> None:
    p = common_args(__doc__ or "")
    p.add_argument("--runs", type=int, default=None, help="prompts per repetition")
    args = p.parse_args()
    reps = args.reps or (1 if args.quick else 5)
    runs = args.runs or (20 if args.quick else 50)
    if args.profile:
        profiled(lambda: run_rep("parallel", runs, 5, PREFILLS[-1]))
        return
    for prefill in PREFILLS:
        for layout in LAYOUTS:
            rows = []
            for _ in range(reps):
                row = run_rep(layout, runs, 5, prefill)
                emit({"kind": "detail", "bench": "turn", **row})
                rows.append(row)
            note(f"turn/{layout}/{prefill}: {[round(r['entry_ms'], 3) for r in rows]} ms/entry")
            per_run = rows[0]["entries_per_run"]
            where = f"{prefill:,} entries before" if prefill else "fresh session"
            result(
                "turn",
                f"turn, 3 tool calls ({layout}, {where}): per committed entry",
                [r["entry_ms"] for r in rows],
                unit="ms",
                target=TARGET_MS_PER_ENTRY,
                spread="minmax",
                entries_per_run=per_run,
                reps=reps,
                runs=runs,
                late_over_early=statistics.median(r["late_over_early"] for r in rows),
            )
            result(
                "turn",
                f"  per prompt ({per_run:g} entries, {layout}, {where})",
                [r["run_ms"] for r in rows],
                unit="ms",
                target=None,
                spread="minmax",
            )


if __name__ == "__main__":
    main()
