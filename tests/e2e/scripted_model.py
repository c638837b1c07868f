"""Routes for `pi-agents --model faux/scripted_model:<function>` in end-to-end tests.

Each route is a plain function of one model call. Multi-step routes look at the
tool results that follow the latest user message to know which step they are at.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from piagents.testing import ModelCall, Reply, ToolCall


def _since_last_user(call: ModelCall) -> list:
    messages = list(call.messages)
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role == "user":
            return messages[i + 1 :]
    return messages


def _tool_results(call: ModelCall) -> list:
    return [m for m in _since_last_user(call) if m.role == "toolResult"]


def hello(call: ModelCall) -> str:
    return "hello from the scripted model"


def edit_files(call: ModelCall) -> str | Reply:
    """write notes.txt, edit it, read it back, then answer with what was read."""
    results = _tool_results(call)
    steps = [
        ToolCall("write", {"path": "notes.txt", "content": "alpha\nbeta\n"}),
        ToolCall("edit", {"path": "notes.txt", "oldText": "beta", "newText": "gamma"}),
        ToolCall("read", {"path": "notes.txt"}),
    ]
    if len(results) < len(steps):
        return Reply(tool_calls=[steps[len(results)]])
    return "final: " + results[-1].text.replace("\n", " | ")


def shell(call: ModelCall) -> str | Reply:
    """Run a shell command, then answer with the tool result it saw."""
    results = _tool_results(call)
    if not results:
        return Reply(tool_calls=[ToolCall("bash", {"command": "echo hi > out.txt && ls"})])
    return "saw: " + results[-1].text.strip()


def history(call: ModelCall) -> str:
    """Answer with the conversation so far as JSON: [[role, text], ...]."""
    return json.dumps([[m.role, m.text] for m in call.messages])


def run_program(call: ModelCall) -> str | Reply:
    """One Program that lists the files through `tools.ls`; its result is the answer."""
    results = [m.text for m in call.messages if m.role == "toolResult"]
    if not results:
        code = "entries = await tools.ls(path='.')\nreturn sorted(entries.split())"
        return Reply(tool_calls=[ToolCall("program", {"action": "run", "code": code})])
    return results[-1]


def offered_tools(call: ModelCall) -> str:
    return "tools: " + ",".join(call.tools)


def system_prompt(call: ModelCall) -> str:
    return call.system_prompt


def fail(call: ModelCall) -> Reply:
    return Reply(text="boom", stop_reason="error")


async def slow(call: ModelCall) -> str:
    """Mark that the run started (file named by $SCRIPTED_STARTED), then sleep
    $SCRIPTED_SLEEP seconds before answering."""
    marker = os.environ.get("SCRIPTED_STARTED")
    if marker:
        Path(marker).write_text(str(os.getpid()), encoding="utf-8")
    await asyncio.sleep(float(os.environ.get("SCRIPTED_SLEEP", "0")))  # a slow turn, on purpose
    return "slept"


def supervise(call: ModelCall) -> str | Reply:
    """A supervision lead delegates two agents and answers once both results are in;
    the managed agents answer their task."""
    if call.agent_name:
        return f"{call.agent_name} did: {call.messages[0].text}"
    results = [m.text for m in call.messages if "completed its assignment" in m.text]
    if len(results) == 2:
        answers = sorted(r.split("Final answer:\n")[-1] for r in results)
        return "Both done: " + " | ".join(answers)
    if len(call.messages) == 1:
        delegate = [
            ToolCall(
                name="agent",
                args={"action": "delegate", "definition": "scout", "task": task, "label": label},
            )
            for label, task in (("left", "map the left"), ("right", "map the right"))
        ]
        return Reply(tool_calls=delegate)
    return "waiting for results"


_worker_stuck: asyncio.Event | None = None


def _stuck() -> asyncio.Event:
    global _worker_stuck
    if _worker_stuck is None:
        _worker_stuck = asyncio.Event()
    return _worker_stuck


async def abandons_a_stuck_worker(call: ModelCall) -> str | Reply:
    """The root spawns `w`, whose model call ignores cancellation; once `w` is stuck
    the root answers, and closing abandons `w`'s turn."""
    if call.agent_name == "w":
        _stuck().set()
        while True:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                continue
    if not _tool_results(call):
        spawn = {"action": "spawn", "name": "w", "message": "go"}
        return Reply(tool_calls=[ToolCall("agent", spawn)])
    await _stuck().wait()
    return "root done"


async def gated_tool_then_slow(call: ModelCall) -> str | Reply:
    """Mark that the run started ($SCRIPTED_STARTED), wait until the file $SCRIPTED_GO
    exists, call bash once, then sleep $SCRIPTED_SLEEP seconds before answering."""
    if not _tool_results(call):
        Path(os.environ["SCRIPTED_STARTED"]).write_text(str(os.getpid()), encoding="utf-8")
        go = Path(os.environ["SCRIPTED_GO"])
        while not go.exists():
            await asyncio.sleep(0.02)  # polling for the test's go file
        return Reply(tool_calls=[ToolCall("bash", {"command": "true"})])
    await asyncio.sleep(float(os.environ.get("SCRIPTED_SLEEP", "0")))  # a slow turn, on purpose
    return "slept"


def lists_forever(call: ModelCall) -> Reply:
    """Calls `ls` with the same arguments every time, as a stuck small model does."""
    return Reply(tool_calls=[ToolCall("ls", {})])


def cut_off(call: ModelCall) -> Reply:
    """A reply that ran out of output tokens half-way."""
    return Reply(text="The first half of", stop_reason="length")
