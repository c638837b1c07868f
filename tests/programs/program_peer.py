"""A runtime in its own process that starts a background Program and holds it running.

    python program_peer.py HOME CWD READY_FILE [scope]

Opens a root, runs a background Program that prints, then waits for ever; writes
"<root id> <program id>" to READY_FILE once the Program has printed, and waits to be
killed. With `scope`: opens an SDK Program scope instead, and writes its ID once it
is open.
"""

import asyncio
import sys
from pathlib import Path

import piagents
from piagents.testing import FunctionModel


def announce(ready, root_id, program_id):
    partial = Path(ready + ".partial")
    partial.write_text(f"{root_id} {program_id}")
    partial.replace(ready)


async def main(home, cwd, ready, mode="script"):
    model = FunctionModel(lambda call: "ok")
    async with piagents.Runtime(home=home, model=model, tools=["+program"]) as rt:
        root = await rt.open_root(cwd=cwd)
        if mode == "scope":
            async with root.program() as p:
                announce(ready, root.id, p.id)
                await asyncio.Event().wait()  # until the test kills this process
        # Waiting on a tool call, so the sandbox's worker is idle and ends with this
        # process (a busy one would spin on until its CPU limit); the command ends once
        # this process is gone.
        code = (
            "print('started')\n"
            "await tools.bash(command='while kill -0 $PPID 2>/dev/null; do sleep 0.1; done')"
        )
        res = await root.call_tool("program", {"action": "run", "code": code, "background": True})
        live = rt.programs.live[res.details["id"]]
        while not live.host.printed:
            await asyncio.sleep(0.01)  # polling for the Program's first output
        announce(ready, root.id, res.details["id"])
        await asyncio.Event().wait()  # until the test kills this process


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
