"""The scripted model of the real-terminal test: `--model faux/tmux_model:route`.

The root spawns `worker` for a prompt and answers `ANSWER-OK`; the worker
runs until a file named `release` appears in the working directory. The
prompt `hold` keeps the root's turn running until it is aborted. The prompt
`program` runs a background Program whose Agent `helper` works like `worker`.
"""

from __future__ import annotations

import asyncio
import os

from piagents.testing import ModelCall, Reply, ToolCall


async def route(call: ModelCall) -> str | Reply:
    if call.agent_name is None:
        last = call.messages[-1]
        if last.role == "toolResult" and last.text.startswith("Program "):
            return "PROGRAM-OK: the Program is on it."
        if last.role == "toolResult":
            return "ANSWER-OK: the worker is on it."
        if last.role == "user" and last.text.startswith("Program "):
            return "Noted the Program."  # its notification
        if last.role == "user" and last.text == "program":
            code = 'helper = agent(name="helper")\nreturn await helper.send("Do the job.")'
            run = {"action": "run", "code": code, "background": True}
            return Reply(tool_calls=[ToolCall("program", run)])
        if last.role == "user" and "<agent-message" in last.text:
            return "Noted."
        if last.role == "user" and last.text == "hold":
            await asyncio.Event().wait()  # until the user aborts the turn
        spawn = {"action": "spawn", "name": "worker", "message": "Do the job."}
        return Reply(tool_calls=[ToolCall("agent", spawn)])
    while not os.path.exists("release"):
        await asyncio.sleep(0.05)  # polling for the test's release file
    return "worker done"
