"""`pi-agents worker --store postgresql://… [--capacity N] [--home H]`: run the roots of
a PostgreSQL store placed on this process, until SIGTERM or SIGINT.

Stopping (SIGTERM, SIGINT) takes no new placements, lets the roots it holds finish
for up to `--drain` seconds, then takes them offline as closing any runtime does
(inputs still running end `aborted`); a worker killed outright (kill -9, a machine lost)
leaves its roots to the others once its heartbeat lapses, and they resume them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from pathlib import Path

from piagents.config import SettingsError, default_home

log = logging.getLogger("piagents.worker")

DEFAULT_CAPACITY = 8
DEFAULT_DRAIN_S = 30.0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="pi-agents worker",
        description="Run the roots of a PostgreSQL store that are placed on this worker.",
    )
    p.add_argument("--store", metavar="URL", help="the store (default: the home's settings)")
    p.add_argument(
        "--capacity",
        type=int,
        default=DEFAULT_CAPACITY,
        help=f"roots held at once (default {DEFAULT_CAPACITY})",
    )
    p.add_argument("--home", help="this worker's home: settings, output files")
    p.add_argument(
        "--drain",
        type=float,
        default=DEFAULT_DRAIN_S,
        help="on SIGTERM or Ctrl-C, seconds to let the roots held here finish before "
        f"they are taken offline (default {DEFAULT_DRAIN_S:g})",
    )
    p.add_argument(
        "--poll",
        type=float,
        default=0.5,
        help="seconds between polls of the placement queue (default 0.5)",
    )
    return p


async def run(
    home: Path, store: str | None, capacity: int, poll: float, drain: float = DEFAULT_DRAIN_S
) -> int:
    from piagents.heap import settle_long_lived
    from piagents.runtime import Runtime
    from piagents.store.base import StoreError
    from piagents.workers.generations import GenerationProcesses
    from piagents.workers.placements import Placements
    from piagents.workers.worker import Worker

    try:
        import dbos  # noqa: F401  (imported here, once: a worker cannot run without it)
    except ImportError:
        print(
            "pi-agents worker: workers need DBOS and psycopg: "
            "pip install 'pi-agents[workers]' (or -e '.[workers]' in a checkout)",
            file=sys.stderr,
        )
        return 2
    try:
        runtime = Runtime(home, settings={"store": store} if store else None)
    except (SettingsError, ValueError) as exc:
        print(f"pi-agents worker: {exc}", file=sys.stderr)
        return 2
    url = runtime.settings.store
    if not url or not url.startswith(("postgresql://", "postgres://")):
        print(
            "pi-agents worker: workers need a PostgreSQL store: give --store postgresql://… "
            'or "store" in the settings',
            file=sys.stderr,
        )
        return 2
    runtime.presence.kind = "worker"
    runtime.presence.capacity = capacity
    runtime.wake_policy.resume = True  # trees taken over from a lapsed worker go on
    settle_long_lived(runtime)  # this process is the worker's own (piagents.heap)
    placements: Placements | None = None
    try:
        async with runtime:
            holder = runtime.holder
            assert holder is not None
            placements = Placements(url, holder.token, capacity=capacity, poll_s=poll)
            generations = GenerationProcesses(home, url)
            worker = Worker(runtime, placements, capacity, generations=generations)
            await placements.launch(worker.hold)
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    loop.add_signal_handler(sig, worker.stop)
            print(f"pi-agents worker {holder.token[:8]} on {holder.host}: ready", flush=True)
            generations.prepare()  # a process ready for the first managed agent
            try:
                await worker.run()  # until a signal: no new placements from then on
                if worker.held:
                    print(f"pi-agents worker: draining {len(worker.held)} root(s)", flush=True)
                    await worker.drained(drain)
            finally:
                generations.close()  # the standby; generations running go on
                await runtime.close_agents()
    except StoreError as exc:
        print(f"pi-agents worker: {exc}", file=sys.stderr)
        return 1
    finally:
        if placements is not None:  # after the runtime: DBOS's threads serve its loop too
            with contextlib.suppress(Exception):
                placements.destroy()
    return 0


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    if args.capacity < 1:
        parser().error("--capacity must be at least 1")
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    home = Path(args.home).expanduser() if args.home else default_home()
    if args.drain < 0:
        parser().error("--drain must be 0 or more")
    return asyncio.run(run(home, args.store, args.capacity, args.poll, args.drain))
