"""The entry point of a `pi-agents worker` process: it builds the worker's runtime and
runs its `WorkerLink` (see `worker`). Nothing else imports this module."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import re
import signal
import sys
from pathlib import Path
from typing import Any

from piagents.config import SettingsError, default_home
from piagents.runtime import Runtime
from piagents.store.base import StoreError
from piagents.supervision import placement, worker
from piagents.supervision.worker import WorkerLink

log = logging.getLogger("piagents.worker")


def _offered_options(store_url: str, generation_id: str) -> dict[str, Any]:
    """What the lead left in the store for this generation, its store given by us."""
    from piagents.store.postgres import PostgresStore

    store = PostgresStore(store_url)
    try:
        options = placement.read_offered_options(store, generation_id)
    finally:
        store.close()
    settings = dict(options.get("settings") or {})
    settings["store"] = store_url  # the worker's store is the lead's, wherever that is
    return {**options, "settings": settings}


async def run_worker(home: Path, generation_id: str, store_url: str | None = None) -> int:
    """`store_url`: a `pi-agents worker` of that store started us (placement
    `workers`); the lead's options are in the store. Otherwise they are in the home."""
    folder = placement.run_dir(home, generation_id)
    folder.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(folder / placement.LOG_FILE)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    logging.getLogger("piagents").addHandler(handler)
    try:
        if store_url is not None:
            options = _offered_options(store_url, generation_id)
        else:
            options = placement.read_options(home, generation_id)
        runtime = Runtime(
            home,
            thinking=options.get("thinking"),
            settings=options.get("settings"),
            tools=options.get("tools"),
            system_prompt=options.get("systemPrompt"),
            append_system_prompt=options.get("appendSystemPrompt"),
        )
    except (placement.OptionsError, SettingsError, StoreError, ValueError) as exc:
        log.error("worker for generation %s cannot start: %s", generation_id, exc)
        return 1
    # Never load the lead here: its results wait in the store.
    runtime.wake_policy.in_process = False
    async with runtime:
        link = WorkerLink(runtime.supervisor, generation_id)
        runtime.supervisor.worker = link
        loop = asyncio.get_running_loop()

        def stop() -> None:
            link.stopping = True
            link.wake.set()

        # Not from the lead (it sends `close`): the user closed the pane, or the system
        # stops us. The generation ends `aborted` and the owner is told.
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, stop)
        try:
            return await link.run()
        except Exception:
            log.exception("worker for generation %s failed", generation_id)
            return 1


GENERATION_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")


def standby(home: Path, store_url: str | None) -> int:
    """A pool worker's process kept ready (`--standby`): everything a generation needs
    is imported before there is one; then it reads the generation's id on stdin and
    runs it, its output going to that generation's log as a process started for it
    has. Its stdin ended without an id: its worker let it go."""
    import piagents.store.postgres  # noqa: F401  (the pool's store: imported ahead too)

    generation_id = sys.stdin.readline().strip()
    if not generation_id:
        return 0
    if not GENERATION_ID.fullmatch(generation_id):
        print(f"pi-agents worker --standby: not a generation id: {generation_id!r}")
        return 2
    folder = placement.run_dir(home, generation_id)
    folder.mkdir(parents=True, exist_ok=True)
    out = os.open(folder / placement.LOG_FILE, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    nothing = os.open(os.devnull, os.O_RDONLY)
    for source, target in ((out, 1), (out, 2), (nothing, 0)):
        os.dup2(source, target)
    os.close(out)
    os.close(nothing)
    return asyncio.run(run_worker(home, generation_id, store_url))


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="pi-agents worker", description=worker.__doc__)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--generation")
    which.add_argument("--standby", action="store_true", help="wait for a generation's id on stdin")
    p.add_argument("--home")
    p.add_argument("--store", help="the store a `pi-agents worker` started this one for")
    args = p.parse_args(argv)
    home = Path(args.home).expanduser() if args.home else default_home()
    if args.standby:
        return standby(home, args.store)
    return asyncio.run(run_worker(home, args.generation, args.store))
