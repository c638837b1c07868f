"""Faux models that worker processes load by name (`faux/worker_routes:<function>`).

Every answer names the process that gave it, so a test can tell which worker ran
which turn. `PIAGENTS_TEST_DELAY` (seconds, default 0.05) is how long a model call
takes: a latency-bound model.
"""

from __future__ import annotations

import asyncio
import os
import re

from piagents.testing import Reply, ToolCall

DELAY_S = float(os.environ.get("PIAGENTS_TEST_DELAY", "0.05"))


NOTIFICATION = re.compile(r"^Agent \S+ \(\w+\) (completed|failed|aborted)")


def _inner(text: str) -> str:
    """A message from another Agent without its `<agent-message ...>` wrapper."""
    lines = text.strip().splitlines()
    if (
        len(lines) >= 2
        and lines[0].startswith("<agent-message")
        and lines[-1] == "</agent-message>"
    ):
        return "\n".join(lines[1:-1])
    return text


def _last_user(call) -> str:  # type: ignore[no-untyped-def]
    """The last message that asks for something (notifications of owned Agents only
    say that one ended), unwrapped."""
    for m in reversed(call.messages):
        if m.role == "user" and not NOTIFICATION.match(_inner(m.text)):
            return _inner(m.text)
    return ""


async def echo(call) -> str:  # type: ignore[no-untyped-def]
    """One model call: `done by <pid>: <the last user message>`."""
    await asyncio.sleep(DELAY_S)
    return f"done by {os.getpid()}: {_last_user(call)}"


async def slow_steps(call) -> str | Reply:  # type: ignore[no-untyped-def]
    """`steps N`: N tool calls (`bash sleep`) one after another, then an answer saying
    how many results it saw and how many said they were interrupted."""
    await asyncio.sleep(DELAY_S)
    text = _last_user(call)
    wanted = int(text.split()[1]) if text.startswith("steps ") else 1
    results = [m for m in call.messages if m.role == "toolResult"]
    if len(results) < wanted:
        n = len(results)
        return Reply(
            tool_calls=[
                ToolCall(name="bash", args={"command": f"sleep 0.3; echo step {n}"}, id=f"s{n}")
            ]
        )
    interrupted = sum("interrupted" in m.text for m in results)
    return f"{len(results)} steps by {os.getpid()}, {interrupted} interrupted"


async def team(call) -> str | Reply:  # type: ignore[no-untyped-def]
    """`team N <other root>`: spawn `helper` with `steps N`, wait for it, send the root
    named <other root> a hello, then answer. Anything else: the `slow_steps` rules, or
    (a hello, a notification) a short answer."""
    last = call.messages[-1]
    if last.role == "user" and NOTIFICATION.match(_inner(last.text)):
        await asyncio.sleep(DELAY_S)
        return f"noted by {os.getpid()}"  # a run of its own, after the turn that waited
    text = _last_user(call)
    if not text.startswith("team "):
        if text.startswith("steps "):
            return await slow_steps(call)
        await asyncio.sleep(DELAY_S)
        return f"noted by {os.getpid()}"
    await asyncio.sleep(DELAY_S)
    _, n, other = text.split()
    done = len([m for m in call.messages if m.role == "toolResult"])
    steps = [
        {"action": "spawn", "name": "helper", "message": f"steps {n}"},
        {"action": "wait", "target": "helper"},
        {"action": "send", "target": other, "message": f"hello from {call.agent_name}"},
    ]
    if done < len(steps):
        return Reply(tool_calls=[ToolCall(name="agent", args=steps[done], id=f"t{done}")])
    return f"team done by {os.getpid()}"
