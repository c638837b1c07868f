"""Wall time of `pi-agents --version` (the installed console script) (issue 2).

Target: < 150 ms. Floors measured in the same run: `python -c pass` (interpreter
start) and `python -c "import piagents.cli"` (our imports without argparse work).
Both floors include whatever `.pth` files the interpreter's site-packages run
at start-up (on the reference machine a sandbox hook imports `certifi`).

    python bench/bench_version.py [--quick] [--reps N] [--profile]

With --profile, prints the slowest imports of `-X importtime` to stderr.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from _common import common_args, note, result, subprocess_env

TARGET_MS = 150.0


def console_script() -> str:
    """The console script next to this interpreter (what pip installed), not a shim."""
    path = Path(sys.executable).parent / "pi-agents"
    if not path.exists():
        raise SystemExit(f"{path} not found: install the project (pip install -e .)")
    return str(path)


def time_command(argv: list[str], reps: int, warmup: int = 2) -> list[float]:
    """Milliseconds of each of `reps` runs (after `warmup` unrecorded ones)."""
    times: list[float] = []
    env = {**subprocess_env(), "PYTHONDONTWRITEBYTECODE": "1"}
    for i in range(warmup + reps):
        t0 = time.perf_counter()
        done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        elapsed = (time.perf_counter() - t0) * 1e3
        if done.returncode != 0:
            raise SystemExit(f"{argv} failed: {done.stderr.decode()}")
        if i >= warmup:
            times.append(elapsed)
    return times


def import_profile(top: int = 15) -> None:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", console_script(), "--version"],
        capture_output=True,
        text=True,
        env=subprocess_env(),
    )
    rows: list[tuple[int, int, str]] = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cumulative_us, name = line[len("import time:") :].split("|")
        rows.append((int(cumulative_us), int(self_us), name.rstrip()))
    total = sum(row[1] for row in rows)
    note(f"-X importtime: {len(rows)} modules, {total / 1e3:.1f} ms of own import time")
    note("cumulative_ms  own_ms  module")
    for cumulative, own, name in sorted(rows, reverse=True)[:top]:
        note(f"{cumulative / 1e3:13.1f} {own / 1e3:7.1f}  {name}")


def main() -> None:
    args = common_args(__doc__ or "").parse_args()
    reps = args.reps or (5 if args.quick else 30)
    if args.profile:
        import_profile()
        return
    script = console_script()
    # Interleave the commands so machine noise hits them alike.
    runs: dict[str, list[float]] = {"version": [], "pass": [], "import": []}
    commands = {
        "version": [script, "--version"],
        "pass": [sys.executable, "-c", "pass"],
        "import": [sys.executable, "-c", "import piagents.cli"],
    }
    for argv in commands.values():
        time_command(argv, 0, warmup=1)  # warm the OS file cache
    for _ in range(reps):
        for key, argv in commands.items():
            runs[key] += time_command(argv, 1, warmup=0)
    result(
        "version",
        "`pi-agents --version` (console script)",
        runs["version"],
        unit="ms",
        target=TARGET_MS,
        spread="p10p90",
        script=script,
    )
    result(
        "version", "floor: `python -c pass`", runs["pass"], unit="ms", target=None, spread="p10p90"
    )
    result(
        "version",
        "`python -c 'import piagents.cli'`",
        runs["import"],
        unit="ms",
        target=None,
        spread="p10p90",
    )


if __name__ == "__main__":
    main()
