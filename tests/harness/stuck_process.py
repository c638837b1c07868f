"""An SDK program whose owned Agent's turn does not stop, for the exit tests.

    python stuck_process.py SCENARIO HOME WORK

The root spawns `w`; once `w` is stuck (see SCENARIO), the root answers and the
program leaves its own `asyncio.run(main())` with the abort timeout small, so
`w`'s turn is abandoned. It prints "answered" before the Runtime closes and
"exited" after `asyncio.run` returns.

- `route`: `w`'s model call ignores cancellation.
- `thread`: `w`'s model call waits on a tool thread (`run_blocking`, as the built-in
  tools run their blocking calls) that never returns: it reads a FIFO nobody writes to.
  (The built-in tools themselves refuse FIFOs; a hung mount blocks the same way.)
"""

import asyncio
import os
import sys
from pathlib import Path

import piagents
from piagents.harness.tools.threads import run_blocking
from piagents.testing import FunctionModel, Reply, ToolCall

SCENARIO, HOME, WORK = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
FIFO = WORK / "fifo"
STUCK = asyncio.Event()
held: list[int] = []  # the FIFO's writing end, kept open so its reader blocks for good


async def ignore_cancellation() -> None:
    while True:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            continue


async def until(condition) -> None:
    while not condition():
        await asyncio.sleep(0.01)  # polling the condition


def fifo_has_a_reader() -> bool:
    try:
        held.append(os.open(FIFO, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:  # ENXIO: nobody has it open for reading yet
        return False
    return True


async def worker(call):
    if SCENARIO == "route":
        STUCK.set()
        await ignore_cancellation()
    await run_blocking(read_fifo)
    return "w finished"


def read_fifo() -> bytes:
    fd = os.open(FIFO, os.O_RDONLY)  # waits for a writer, then for bytes that never come
    return os.read(fd, 1)


async def route(call):
    if call.agent_name == "w":
        return await worker(call)
    if not any(m.role == "toolResult" for m in call.messages):
        spawn = {"action": "spawn", "name": "w", "message": "go"}
        return Reply(tool_calls=[ToolCall("agent", spawn)])
    if SCENARIO == "route":
        await STUCK.wait()
    else:
        await until(fifo_has_a_reader)
    return "root done"


async def main() -> None:
    if SCENARIO == "thread":
        os.mkfifo(FIFO)
    settings = {"pi-agents": {"abortTimeoutMs": 100}}
    async with piagents.Runtime(home=HOME, model=FunctionModel(route), settings=settings) as rt:
        root = await rt.open_root(cwd=WORK)
        print(await root.prompt("go"), flush=True)
        print("answered", flush=True)


asyncio.run(main())
print("exited", flush=True)
