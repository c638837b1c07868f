"""Shared helpers of the benchmark scripts: statistics, result lines, temp homes, profiling.

Every benchmark prints JSON lines on stdout. A line with `"kind": "result"` is one
row of the results table (see `result`); `"kind": "peer"` lines carry a peer
comparison; any other line is raw detail. Diagnostics go to stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import os
import platform
import pstats
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
# Measure the checkout this bench/ lives in, whatever the editable install points at.
SRC_DIR = BENCH_DIR.parent / "src"
if str(SRC_DIR) not in sys.path:
    sys.path.insert(0, str(SRC_DIR))


def subprocess_env() -> dict[str, str]:
    """The environment for child processes that import piagents from this checkout."""
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": f"{SRC_DIR}{os.pathsep}{path}" if path else str(SRC_DIR)}


def emit(line: dict[str, Any]) -> None:
    """Print one JSON line and flush, so a parent process sees it at once."""
    print(json.dumps(line), flush=True)


def note(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def quantile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated quantile (q in [0, 1]) of a non-empty sequence."""
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    pos = q * (len(ordered) - 1)
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def summary(values: Sequence[float]) -> dict[str, float]:
    return {
        "median": statistics.median(values),
        "p10": quantile(values, 0.10),
        "p90": quantile(values, 0.90),
        "min": min(values),
        "max": max(values),
        "n": len(values),
    }


def result(
    bench: str,
    name: str,
    values: Sequence[float],
    *,
    unit: str,
    target: float | None,
    spread: str,
    **extra: Any,
) -> dict[str, Any]:
    """One table row: median of `values` against `target` (lower is better).

    `spread` is "minmax" (values are per-repetition medians: report min-max) or
    "p10p90" (values are individual samples).
    """
    s = summary(values)
    line: dict[str, Any] = {
        "kind": "result",
        "bench": bench,
        "name": name,
        "unit": unit,
        "target": target,
        "spread_kind": spread,
        **s,
        "verdict": None if target is None else ("pass" if s["median"] < target else "MISS"),
        **extra,
    }
    emit(line)
    return line


def common_args(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true", help="small sizes, few repetitions (smoke)")
    p.add_argument("--reps", type=int, default=None, help="repetitions (default per benchmark)")
    p.add_argument(
        "--profile", action="store_true", help="run once under cProfile; print top entries"
    )
    return p


@contextlib.contextmanager
def temp_home(prefix: str = "piagents-bench-") -> Iterator[Path]:
    """A fresh directory holding `home/` (the runtime's) and `work/` (a tiny cwd)."""
    base = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        (base / "home").mkdir()
        work = base / "work"
        work.mkdir()
        for name in ("README.md", "main.py", "notes.txt"):
            (work / name).write_text(f"# {name}\nsmall file for the benchmarks\n")
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def machine() -> dict[str, Any]:
    import piagents

    return {
        "piagents": str(Path(piagents.__file__).parent),
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "nproc": os.cpu_count(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "platform": platform.platform(),
        "loadavg": os.getloadavg(),
    }


def print_profile(profiler: cProfile.Profile, top: int = 25) -> None:
    """Top entries by own time and by cumulative time, to stderr."""
    for key in ("tottime", "cumulative"):
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out)
        stats.strip_dirs().sort_stats(key).print_stats(top)
        note(f"---- cProfile, sorted by {key} ----")
        note(out.getvalue())


def profiled(fn: Callable[[], Any], top: int = 25) -> Any:
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        return fn()
    finally:
        profiler.disable()
        print_profile(profiler, top)


def run_json(argv: list[str]) -> list[dict[str, Any]]:
    """Run a benchmark process (importing piagents from this checkout); its JSON lines."""
    done = subprocess.run(argv, capture_output=True, text=True, env=subprocess_env())
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{done.stderr}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def ratio_row(bench: str, name: str, ours: list[float], peer: list[float], peer_name: str) -> None:
    """A `"kind": "peer"` line: ours / peer per repetition (paired runs), then the median."""
    ratios = [o / p for o, p in zip(ours, peer, strict=True)]
    emit(
        {
            "kind": "peer",
            "bench": bench,
            "name": name,
            "peer": peer_name,
            "ours_s": statistics.median(ours),
            "peer_s": statistics.median(peer),
            "ratio": statistics.median(ratios),
            "ratio_min": min(ratios),
            "ratio_max": max(ratios),
            "reps": len(ratios),
        }
    )
