"""The entry point of a `pi-agents worker` process: it builds the worker's runtime and
runs its `WorkerLink` (see `worker`). Nothing else imports this module."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
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


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="pi-agents worker", description=worker.__doc__)
    p.add_argument("--generation", required=True)
    p.add_argument("--home")
    p.add_argument("--store", help="the store a `pi-agents worker` started this one for")
    args = p.parse_args(argv)
    home = Path(args.home).expanduser() if args.home else default_home()
    return asyncio.run(run_worker(home, args.generation, args.store))
