"""Routes for leads and managed agents in worker processes: `faux/worker_routes:route`.

The lead and its managed agents share the model (the bundled definitions name
none); a managed agent is told so in its system prompt. A managed agent reads
its latest user message: `sleep N` runs `sleep N` in the shell first (`K sleeps of
N`: K times, one after another), `report your setup` answers with its tools and
the `RULES: ` line of its system prompt, `ask: Q`
asks its owner Q first; then it answers `done: <that message>`, or with the
owner's reply. A delegating agent given `delegate: T` delegates T to a scout.
"""

from __future__ import annotations

import re

from piagents.testing import ModelCall, Reply, ToolCall


def _since_last_user(call: ModelCall) -> tuple[str, list[str]]:
    messages = list(call.messages)
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role == "user":
            return messages[i].text, [m.text for m in messages[i + 1 :] if m.role == "toolResult"]
    return "", []


def route(call: ModelCall) -> str | Reply:
    if "You are the managed agent" not in call.system_prompt:
        return _lead(call)
    text, results = _since_last_user(call)
    if "delegate: " in text and call.tools.count("agent"):
        if not results:
            task = text.split("delegate: ", 1)[1]
            args = {"action": "delegate", "definition": "scout", "task": task}
            return Reply(tool_calls=[ToolCall("agent", args)])
        return "waiting for the scout"
    if "report your setup" in text:
        rules = call.system_prompt.split("RULES: ", 1)[-1].split("\n", 1)[0]
        return f"tools: {','.join(sorted(call.tools))}; rules: {rules}"
    steps = re.search(r"(\d+) sleeps of (\d+(?:\.\d+)?)", text)
    if steps and len(results) < int(steps.group(1)):
        return Reply(tool_calls=[ToolCall("bash", {"command": f"sleep {steps.group(2)}"})])
    sleep = re.search(r"sleep (\d+(?:\.\d+)?)", text)
    if sleep and not results:
        return Reply(tool_calls=[ToolCall("bash", {"command": f"sleep {sleep.group(1)}"})])
    ask = re.search(r"ask: (.+)", text)
    if ask and not results:
        return Reply(tool_calls=[ToolCall("ask_owner", {"question": ask.group(1)})])
    if ask and results:
        return "the owner said: " + results[-1]
    return "done: " + text


def _lead(call: ModelCall) -> str | Reply:
    """A lead told `delegate: T` delegates T to a generalist once; otherwise it notes."""
    text, results = _since_last_user(call)
    if text.startswith("delegate: ") and not results and "agent" in call.tools:
        args = {"action": "delegate", "definition": "generalist", "task": text[10:]}
        return Reply(tool_calls=[ToolCall("agent", args)])
    return "noted"
