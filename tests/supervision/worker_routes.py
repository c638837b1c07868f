"""Routes for leads and managed agents in worker processes: `faux/worker_routes:route`.

The lead and its managed agents share the model (the bundled definitions name
none); a managed agent is told so in its system prompt. A managed agent reads
its latest user message: `sleep N` runs `sleep N` in the shell first (`K sleeps of
N`: K times, one after another), `report your setup` answers with its tools and
the `RULES: ` line of its system prompt, `ask: Q`
asks its owner Q first; then it answers `done: <that message>`, or with the
owner's reply. A delegating agent given `delegate: T` delegates T to a scout.

A lead told `delegate then N sleeps of S: T` delegates T to a generalist, then runs
`sleep S` N times in its own turn, and answers `lead done by <pid>: K interrupted`
(K: its sleeps that ended interrupted), so a test can kill the process holding it
mid-turn and see which process finished the turn.
"""

from __future__ import annotations

import os
import re

from piagents.ai.messages import ToolResultMessage
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


LEAD_STEPS = re.compile(r"^delegate then (\d+) sleeps of (\d+(?:\.\d+)?): (.+)$", re.S)


def _lead_with_steps(call: ModelCall) -> str | Reply | None:
    """The `delegate then N sleeps of S: T` turn, if the latest instruction is one; a
    result or a notice arriving in the middle of it does not end it."""
    messages = list(call.messages)
    for i in range(len(messages) - 1, -1, -1):
        found = LEAD_STEPS.match(messages[i].text) if messages[i].role == "user" else None
        if found is None:
            continue
        if any(m.role == "assistant" and m.text.startswith("lead done by") for m in messages[i:]):
            return None  # that turn is over: what comes now is noted
        after = [r for r in messages[i + 1 :] if isinstance(r, ToolResultMessage)]
        if not any(r.tool_name == "agent" for r in after):
            args = {"action": "delegate", "definition": "generalist", "task": found.group(3)}
            return Reply(tool_calls=[ToolCall("agent", args)])
        sleeps = [r for r in after if r.tool_name == "bash"]
        if len(sleeps) < int(found.group(1)):
            return Reply(tool_calls=[ToolCall("bash", {"command": f"sleep {found.group(2)}"})])
        interrupted = sum("interrupted" in r.text for r in sleeps)
        return f"lead done by {os.getpid()}: {interrupted} interrupted"
    return None


def _lead(call: ModelCall) -> str | Reply:
    """A lead told `delegate: T` delegates T to a generalist once; otherwise it notes."""
    with_steps = _lead_with_steps(call)
    if with_steps is not None:
        return with_steps
    text, results = _since_last_user(call)
    if text.startswith("delegate: ") and not results and "agent" in call.tools:
        args = {"action": "delegate", "definition": "generalist", "task": text[10:]}
        return Reply(tool_calls=[ToolCall("agent", args)])
    return "noted"
