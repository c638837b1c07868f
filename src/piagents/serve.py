"""`pi-agents serve`: run an offline root in the background until it is idle.

Started by a command-line runtime that sent an input to a root no runtime
holds. It loads the root with its saved cwd and model and the current
settings, handles what waits in its inbox, and exits once the root is idle.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from piagents.config import default_home


async def serve(home: Path, session_id: str, store: str | None = None) -> int:
    from piagents.heap import settle_long_lived
    from piagents.runtime import Runtime
    from piagents.store.base import SessionInUse

    runtime = Runtime(home, settings={"store": store} if store else None)
    runtime.wake_policy.in_process = False
    settle_long_lived(runtime)  # this process is the command's own (piagents.heap)
    async with runtime:
        try:
            root = await runtime.open_root(session=session_id)
        except SessionInUse:
            return 0  # another runtime holds it and will read its inbox
        idle = asyncio.Event()

        def check() -> None:
            if runtime.coordinator.state_of(root.id) == "idle":
                idle.set()

        runtime.coordinator.listeners.append(check)
        runtime.coordinator.changed()
        await idle.wait()
        await runtime.presence.close_mailbox()  # no new wake-ups: what comes now waits in the store
    # Closed and released: anything that arrived meanwhile gets a new server.
    from piagents.agents.delivery import waiting_for
    from piagents.store.selection import open_store

    opened = open_store(home, runtime.settings.store)
    try:
        waiting = waiting_for(opened, session_id)
    finally:
        opened.close()
    if waiting:
        return await serve(home, session_id, store)
    return 0


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="pi-agents serve", description=__doc__)
    p.add_argument("--session", required=True)
    p.add_argument("--home")
    p.add_argument("--store", help="the store's postgresql:// URL (default: the home's)")
    args = p.parse_args(argv)
    home = Path(args.home).expanduser() if args.home else default_home()
    return asyncio.run(serve(home, args.session, args.store))
