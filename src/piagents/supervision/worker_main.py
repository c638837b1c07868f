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
from typing import TYPE_CHECKING, Any

from piagents.config import SettingsError, default_home
from piagents.runtime import Runtime
from piagents.store.base import StoreError
from piagents.supervision import placement, worker
from piagents.supervision import standby as standby_stages
from piagents.supervision.worker import WorkerLink

if TYPE_CHECKING:
    from piagents.store.postgres import PostgresStore

log = logging.getLogger("piagents.worker")


def _offered_options(
    store_url: str, generation_id: str, store: PostgresStore | None
) -> dict[str, Any]:
    """What the lead left in the store for this generation, its store given by us
    (read through `store` when a standby opened it, else through one opened here)."""
    own = None
    if store is None:
        from piagents.store.postgres import PostgresStore

        store = own = PostgresStore(store_url)
    try:
        options = placement.read_offered_options(store, generation_id)
    finally:
        if own is not None:
            own.close()
    settings = dict(options.get("settings") or {})
    settings["store"] = store_url  # the worker's store is the lead's, wherever that is
    return {**options, "settings": settings}


async def run_worker(
    home: Path,
    generation_id: str,
    store_url: str | None = None,
    store: PostgresStore | None = None,
) -> int:
    """`store_url`: a `pi-agents worker` of that store started us (placement
    `workers`); the lead's options are in the store. Otherwise they are in the home.
    `store`: that store, opened ahead by a standby (the runtime's from now on)."""
    folder = placement.run_dir(home, generation_id)
    folder.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(folder / placement.LOG_FILE)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    logging.getLogger("piagents").addHandler(handler)
    try:
        if store_url is not None:
            options = _offered_options(store_url, generation_id, store)
        else:
            options = placement.read_options(home, generation_id)
        runtime = Runtime(
            home,
            thinking=options.get("thinking"),
            settings=options.get("settings"),
            tools=options.get("tools"),
            system_prompt=options.get("systemPrompt"),
            append_system_prompt=options.get("appendSystemPrompt"),
            store=store,
        )
    except (placement.OptionsError, SettingsError, StoreError, ValueError) as exc:
        log.error("worker for generation %s cannot start: %s", generation_id, exc)
        if store is not None:
            store.close()
        return 1
    if store is not None:  # opened before the lead's settings were known
        store.lease_lapse = runtime.settings.agents.lease_lapse_ms / 1000
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
    """A pool worker's process kept ready (`--standby`): what a generation needs is
    prepared before there is one (imported, its store opened: see `standby`); then it
    reads the generation's id on stdin and runs it, its output going to that
    generation's log as a process started for it has. Its stdin ended without an id:
    its worker let it go."""
    prepared = standby_stages.prepare(
        home, store_url, lambda: standby_stages.work_arrived(sys.stdin)
    )
    generation_id = sys.stdin.readline().strip()
    prepared.work_came()
    try:
        return _run_handed_over(home, store_url, prepared, generation_id)
    finally:
        prepared.close()
        prepared.finish()


def _run_handed_over(
    home: Path, store_url: str | None, prepared: standby_stages.Prepared, generation_id: str
) -> int:
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
    return asyncio.run(run_worker(home, generation_id, store_url, prepared.take_store()))


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
