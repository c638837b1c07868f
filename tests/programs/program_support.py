"""Helpers of the Program tests that drive the SDK with the faux model."""

import asyncio

import piagents
from piagents.testing import FunctionModel


class Script:
    """Routes model calls by Agent name (None: the root) to handlers; records calls."""

    def __init__(self):
        self.handlers = {}
        self.calls = []

    def on(self, name, handler):
        self.handlers[name] = handler

    async def __call__(self, call):
        self.calls.append(call)
        handler = self.handlers.get(call.agent_name) or self.handlers.get("*")
        if handler is None:
            return f"{call.agent_name} done"
        out = handler(call)
        if asyncio.iscoroutine(out):
            out = await out
        return out

    def calls_of(self, name):
        return [c for c in self.calls if c.agent_name == name]


def runtime(home, script=None, tools=("+program",), settings=None, **options):
    return piagents.Runtime(
        home=home,
        model=FunctionModel(script or Script()),
        tools=list(tools) if tools is not None else None,
        settings=settings,
        **options,
    )


async def program(agent, **args):
    """One `program` call as the model makes it."""
    return await agent.call_tool("program", args)


async def run(agent, code, **args):
    return await program(agent, action="run", code=code, **args)


def shorts(rt, caller):
    """The short IDs the caller is shown for its Programs (its scripts), by ID."""
    from piagents.programs.addressing import short_ids

    ids = [p.id for p in rt.store.programs(caller.id, kind="script")]
    table = short_ids(ids)
    return {i: table[i] for i in ids}


def user_texts(call):
    return [m.text for m in call.messages if m.role == "user"]
