"""A second runtime in its own process, for the cross-process tests.

    python peer_process.py HOME CWD NAME READY_FILE LOG_FILE STOP_FILE [STORE_URL]

Opens a root named NAME (in the PostgreSQL store at STORE_URL, if given), writes its
ID to READY_FILE, logs every model call's last user message to LOG_FILE, and runs
until STOP_FILE exists. With PEER_HOST set it runs as if on that machine; with
PEER_AGENTS_SETTINGS (JSON), those are its `pi-agents` settings.
"""

import asyncio
import json
import os
import socket
import sys
from pathlib import Path

if os.environ.get("PEER_HOST"):
    socket.gethostname = lambda: os.environ["PEER_HOST"]  # "another machine"

import piagents
from piagents.testing import FunctionModel


def logging_route(log: Path):
    async def route(call):
        users = [m.text for m in call.messages if m.role == "user"]
        if call.agent_name == "stuck":
            with log.open("a") as f:
                f.write("stuck started\n")
            await asyncio.sleep(3600)  # a turn that never ends: the test kills this process
        with log.open("a") as f:
            f.write(repr((call.agent_name, users[-1])) + "\n")
        return f"{call.agent_name} handled it"

    return route


def scripted(call):
    """Route for `--model faux/peer_process:scripted` (the woken root's saved model)."""
    import os

    users = [m.text for m in call.messages if m.role == "user"]
    with open(os.environ["PEER_LOG"], "a") as f:
        f.write(repr((call.agent_name, users[-1])) + "\n")
    return "served in the background"


async def main(home, cwd, name, ready, log, stop, store=None):
    settings = {"store": store} if store else {}
    if os.environ.get("PEER_AGENTS_SETTINGS"):
        settings["pi-agents"] = json.loads(os.environ["PEER_AGENTS_SETTINGS"])
    model = FunctionModel(logging_route(Path(log)))
    async with piagents.Runtime(home=home, model=model, settings=settings) as rt:
        root = await rt.open_root(cwd=cwd, name=name)
        if name == "crasher":
            await root.prompt("before the crash")
            await root.call_tool("agent", {"action": "spawn", "name": "stuck", "message": "go"})
            while not Path(log).exists() or "stuck started" not in Path(log).read_text():
                await asyncio.sleep(0.01)  # polling the log for the stuck turn
        # Whole or not at all: the test reads the file as soon as it exists.
        partial = Path(ready + ".partial")
        partial.write_text(root.id)
        partial.replace(ready)
        while not Path(stop).exists():
            await asyncio.sleep(0.05)  # polling for the stop file, for as long as the test runs


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:8]))
