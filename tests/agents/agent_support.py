"""Helpers shared by the agents tests that drive the SDK with the faux model."""

import piagents
from piagents.testing import FunctionModel, Reply, ToolCall


def runtime(home, script, wait_clock=None, store=None, **agents_settings):
    """A runtime of `home` on `script`'s model; on the PostgreSQL database `store`, if given."""
    settings = {"pi-agents": agents_settings} if agents_settings else None
    if store is not None:
        settings = {**(settings or {}), "store": store}
    return piagents.Runtime(
        home=home, model=FunctionModel(script), settings=settings, wait_clock=wait_clock
    )


async def spawn(root, name, message="go", **extra):
    res = await root.call_tool(
        "agent", {"action": "spawn", "name": name, "message": message, **extra}
    )
    assert not res.is_error, res.text
    return res


def agent_calls(*args):
    """One model reply making these `agent` tool calls (each a dict of arguments)."""
    return Reply(tool_calls=[ToolCall("agent", a) for a in args])


def tool_results(call):
    """The texts of the tool results after the latest user message."""
    out = []
    for m in reversed(call.messages):
        if m.role == "user":
            break
        if m.role == "toolResult":
            out.append(m.text)
    return out[::-1]


def echo(call):
    """A model loadable by name in any process (`faux/agent_support:echo`)."""
    return "echo"
