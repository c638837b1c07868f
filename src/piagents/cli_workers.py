"""`pi-agents workers`: the runtimes and workers registered in a store, with their
capacity, load and heartbeat (a text table, or `--json`)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from piagents.store.base import Store, WorkerRecord

OpenToRead = Callable[[Path, str | None], Store | None]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="pi-agents workers",
        description="List the runtimes and workers of a store, with their heartbeats.",
    )
    p.add_argument("--home")
    p.add_argument("--store", metavar="URL", help="the PostgreSQL store to read")
    p.add_argument("--json", action="store_true", help="one JSON array of objects")
    return p


def state(w: WorkerRecord) -> str:
    return "alive" if w.alive else "lapsed"


def as_json(w: WorkerRecord) -> dict[str, Any]:
    return {
        "token": w.token,
        "kind": w.kind,
        "host": w.host,
        "pid": w.pid,
        "capacity": w.capacity,
        "load": w.load,
        "heartbeatAgeS": round(w.heartbeat_age, 3),
        "state": state(w),
        "opened": round(w.opened, 3),
    }


def table(workers: Sequence[WorkerRecord]) -> list[str]:
    """The lines of the text listing: a header, then one line per holder."""
    if not workers:
        return ["No workers."]
    host_w = max(4, *(len(w.host) for w in workers))
    lines = [
        f"{'TOKEN':<8}  {'KIND':<7}  {'HOST':<{host_w}}  {'PID':>7}  CAPACITY  LOAD  "
        "HEARTBEAT   STATE"
    ]
    for w in workers:
        capacity = "-" if w.capacity is None else str(w.capacity)
        lines.append(
            f"{w.token[:8]:<8}  {w.kind:<7}  {w.host:<{host_w}}  {w.pid:>7}  {capacity:>8}  "
            f"{w.load:>4}  {w.heartbeat_age:>7.1f} s  {state(w)}"
        )
    return lines


def main(argv: list[str], open_to_read: OpenToRead, home_of: Callable[[str | None], Path]) -> int:
    args = parser().parse_args(argv)
    store = open_to_read(home_of(args.home), args.store)
    workers: list[WorkerRecord] = []
    if store is not None:
        try:
            workers = store.workers()
        finally:
            store.close()
    if args.json:
        print(json.dumps([as_json(w) for w in workers]))
    else:
        print("\n".join(table(workers)))
    return 0
