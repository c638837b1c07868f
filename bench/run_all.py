"""Run every benchmark and print the results as Markdown tables.

    python bench/run_all.py [--quick] [--only turn,reopen,...] [--raw FILE]

Each benchmark runs in its own process (one after another, never in parallel:
they would compete for the 2 cores). Progress and diagnostics go to stderr;
the Markdown goes to stdout. `--raw FILE` also keeps every JSON line.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from typing import Any

from _common import BENCH_DIR, machine, note, subprocess_env

BENCHES = (
    "turn",
    "reopen",
    "version",
    "fanout",
    "latency",
    "list",
    "memory",
    "tui_open",
    "program",
)
# Extra arguments of the full run (the defaults of each script otherwise).
FULL_ARGS: dict[str, list[str]] = {"fanout": ["--reps", "5"], "memory": ["--reps", "3"]}


def fmt(value: float | None, unit: str = "") -> str:
    if value is None:
        return "–"
    magnitude = abs(value)
    if magnitude >= 100:
        text = f"{value:,.0f}"
    elif magnitude >= 10:
        text = f"{value:.1f}"
    elif magnitude >= 1:
        text = f"{value:.2f}"
    else:
        text = f"{value:.3f}"
    return f"{text} {unit}".strip()


def spread(row: dict[str, Any]) -> str:
    unit = row["unit"]
    if row["spread_kind"] == "minmax":
        label = f"min–max of {row['n']}" if row["n"] > 1 else "single run"
        if row["n"] == 1:
            return label
        return f"{fmt(row['min'])}–{fmt(row['max'], unit)} ({label})"
    return f"{fmt(row['p10'])}–{fmt(row['p90'], unit)} (p10–p90 of {row['n']})"


def verdict(row: dict[str, Any]) -> str:
    if row["verdict"] is None:
        return ""
    return "pass" if row["verdict"] == "pass" else "**MISS**"


def results_table(rows: list[dict[str, Any]]) -> list[str]:
    out = [
        "| benchmark | target | median | spread | verdict |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        target = f"< {fmt(r['target'], r['unit'])}" if r["target"] is not None else ""
        name = r["name"]
        cell = f"&nbsp;&nbsp;{name.strip()}" if name.startswith("  ") else name
        out.append(
            f"| {cell} | {target} | {fmt(r['median'], r['unit'])} | {spread(r)} | {verdict(r)} |"
        )
    return out


def peer_tables(peers: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    fanout = [p for p in peers if p["bench"] in ("fanout", "program")]
    if fanout:
        out += [
            "| scenario | ours (median) | peer | peer (median) | ours / peer: median (min–max) |",
            "|---|---|---|---|---|",
        ]
        for p in fanout:
            ratio = (
                f"{p['ratio']:.2f} ({p['ratio_min']:.2f}–{p['ratio_max']:.2f}, {p['reps']} reps)"
            )
            out.append(
                f"| {p['name']} | {fmt(p['ours_s'], 's')} | {p['peer']} | "
                f"{fmt(p['peer_s'], 's')} | {ratio} |"
            )
        out.append("")
    floor = [p for p in peers if p["bench"] == "sqlite_floor"]
    if floor:
        out += ["| SQLite WAL commit floor (sqlite_floor.py) | median | p90 |", "|---|---|---|"]
        for p in floor:
            out.append(
                f"| synchronous={p['synchronous']} | {fmt(p['median_us'], 'µs')} | "
                f"{fmt(p['p90_us'], 'µs')} |"
            )
        out.append("")
    memory = [p for p in peers if p["bench"] == "memory"]
    if memory:
        out += [
            "| peer Agent object (agent-mem, a definition only) | bytes per Agent |",
            "|---|---|",
        ]
        for p in memory:
            out.append(f"| {p['framework']} | {fmt(p['bytes_per_agent'], 'B')} |")
        out.append("")
    return out


def run(bench: str, quick: bool) -> list[dict[str, Any]]:
    argv = [sys.executable, str(BENCH_DIR / f"bench_{bench}.py")]
    argv += ["--quick"] if quick else FULL_ARGS.get(bench, [])
    note(f"== {bench}: {' '.join(argv[1:])}")
    t0 = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.PIPE, text=True, env=subprocess_env())
    note(f"== {bench}: {time.perf_counter() - t0:.0f}s, exit {done.returncode}")
    if done.returncode != 0:
        return [{"kind": "failed", "bench": bench, "exit": done.returncode}]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--quick", action="store_true", help="small sizes, one repetition")
    p.add_argument("--only", default=",".join(BENCHES), help="comma-separated benchmarks")
    p.add_argument("--raw", default=None, help="also write every JSON line to this file")
    args = p.parse_args()
    info = machine()
    lines: list[dict[str, Any]] = []
    for bench in args.only.split(","):
        if bench not in BENCHES:
            raise SystemExit(f"unknown benchmark {bench!r}; choose from {', '.join(BENCHES)}")
        lines += run(bench, args.quick)
    if args.raw:
        with open(args.raw, "w") as f:
            for line in [{"kind": "machine", **info}, *lines]:
                f.write(json.dumps(line) + "\n")
    command = "python bench/run_all.py" + (" --quick" if args.quick else "")
    md = [
        f"Run {info['date']} on {info['nproc']} CPUs, Python {info['python']}, "
        f"SQLite {info['sqlite']} ({info['platform']}); load average at start "
        f"{', '.join(f'{x:.2f}' for x in info['loadavg'])}. Command: `{command}`.",
        "",
        *results_table([line for line in lines if line["kind"] == "result"]),
        "",
        *peer_tables([line for line in lines if line["kind"] == "peer"]),
    ]
    failed = [line["bench"] for line in lines if line["kind"] == "failed"]
    if failed:
        md.append(f"Failed: {', '.join(failed)} (see stderr).")
    print("\n".join(md))


if __name__ == "__main__":
    main()
