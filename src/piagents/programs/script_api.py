"""The script API of a Program (PROGRAM-NOTES.md), built over flat host functions.

Inside the sandbox a Program sees `tools.<name>(**args)` for each of the caller's
tools it may use, `agent(...)` handles with `id`, `name`, `send(...)` and
`abort()`, `text()`, `store()` / `load()`, `ToolError`, and `asyncio`, `json` and
`re` already imported. A prelude (`script_prelude`) defines them in Python that
forwards each use to one flat host function (`ScriptHost`'s methods, given to the
sandbox by `script_externals`), so the host side knows nothing of monty, and
bridges `asyncio.gather(..., return_exceptions=True)` (`bridge_gather`).

The methods of `tools` and of a handle are plain functions that return the host
call's awaitable, not coroutines of their own: an error of a gathered call then
points at the script's line that gathered it (monty's traceback of a gathered
task holds that task's frames only).

Monty has no class inheritance: a script cannot define an exception class, and
one a host function raises reaches the script as the nearest built-in class.
`ToolError` (host side, a `RuntimeError`) is therefore `RuntimeError` in the
script: `except ToolError` works, and an uncaught one reads `ToolError: ...` in
the traceback; `type(e).__name__` says `RuntimeError`.
"""

from __future__ import annotations

import keyword
from collections.abc import Iterable
from typing import Protocol

from piagents.programs.sandbox import HostFunction, Prelude
from piagents.programs.script_source import bridge_gather
from piagents.programs.script_values import JsonValue

GATHER = "_pi_gather"


class ToolError(RuntimeError):
    """A tool call (or an Agent's input) that failed or was refused, raised into the script."""


class ScriptHost(Protocol):
    """What a running Program's script asks of the runtime, one method per use."""

    async def call_tool(self, name: str, args: dict[str, JsonValue]) -> JsonValue:
        """Run the caller's tool `name` (permission checked now); raise `ToolError`."""
        ...

    def create_agent(self, options: dict[str, JsonValue]) -> dict[str, JsonValue]:
        """A new idle Agent of the Program: its {"id", "name"} (at once: no await)."""
        ...

    async def send(
        self, agent_id: str, message: str, deliver_as: str, schema: JsonValue
    ) -> JsonValue:
        """An input to the Program's Agent: its answer, or None once a write or a
        steer is accepted; raise `ToolError` when the input fails or is aborted."""
        ...

    async def abort(self, agent_id: str) -> None:
        """Abort the Agent's current turn and queued inputs."""
        ...

    def text(self, value: str) -> None:
        """An output item for the caller."""
        ...

    def store(self, key: str, value: JsonValue) -> None:
        """Keep `value` under `key` if the Program completes."""
        ...

    def load(self, key: str) -> JsonValue:
        """The value kept under `key`, or None."""
        ...


def script_externals(host: ScriptHost) -> dict[str, HostFunction]:
    """The flat host functions the prelude forwards to, by the names it calls."""
    return {
        "_pi_tool": host.call_tool,
        "_pi_agent_new": host.create_agent,
        "_pi_agent_send": host.send,
        "_pi_agent_abort": host.abort,
        "_pi_text": host.text,
        "_pi_store": host.store,
        "_pi_load": host.load,
    }


def script_prelude(tool_names: Iterable[str]) -> Prelude:
    """The prelude that defines the script API with `tools.<name>` for each name."""
    names = sorted(set(tool_names))
    for name in names:
        if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_"):
            raise ValueError(f"a tool name a script cannot call as tools.{name}: {name!r}")
    methods = "".join(
        f"    def {name}(self, **args):\n        return _pi_tool({name!r}, args)\n"
        for name in names
    )
    source = _PRELUDE.replace("    # tools\n", methods or "    pass\n")
    return Prelude(source, bridge=lambda code: bridge_gather(code, GATHER))


_PRELUDE = f"""\
import asyncio
import json
import re

ToolError = RuntimeError


class tools:  # named so that a missing tool reads "'tools' object has no attribute"
    # tools


tools = tools()


class _Agent:
    def __init__(self, id, name):
        self.id = id
        self.name = name

    def send(self, message, deliver_as="followUp", schema=None):
        return _pi_agent_send(self.id, message, deliver_as, schema)

    def abort(self):
        return _pi_agent_abort(self.id)


def agent(name=None, cwd=None, context=None, model=None, thinking_level=None):
    options = {{"name": name, "cwd": cwd, "context": context, "model": model,
               "thinking_level": thinking_level}}
    made = _pi_agent_new({{k: v for k, v in options.items() if v is not None}})
    return _Agent(made["id"], made["name"])


def text(value):
    _pi_text(value if isinstance(value, str) else str(value))


def store(key, value):
    _pi_store(key, value)


def load(key):
    return _pi_load(key)


async def _pi_settled(awaitable):
    try:
        return await awaitable
    except Exception as error:
        return error


async def {GATHER}(*awaitables, return_exceptions=False):
    if return_exceptions:
        return await asyncio.gather(*[_pi_settled(a) for a in awaitables])
    return await asyncio.gather(*awaitables)
"""
