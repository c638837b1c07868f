"""The runtime's side of one running Program's script API (`ScriptHost`).

`tools.<name>(**args)` runs the caller's own tool objects through the harness's
tool-call path (`AgentLoop.run_tool`: plain-JSON arguments, the tool's schema,
every failure an error result), checked at each call against the tools the caller
has now, `program` excluded; an error result raises `ToolError` with its text.
`bash` gives its structured result, also when the command exits with a non-zero
code. Each call's status is kept for the failure text. `agent()` handles go
through the `ProgramAgents` port; `store()` values wait for the Program to complete.
"""

from __future__ import annotations

import asyncio
import json
import keyword
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from piagents.ai.messages import ToolCall
from piagents.harness.tool_calls import call_tool
from piagents.harness.tools.base import Tool, ToolContext, ToolResult
from piagents.programs.ports import ProgramAgents, ProgramScope
from piagents.programs.script_api import ToolError
from piagents.programs.script_values import JsonValue
from piagents.programs.texts import CallMade, CallStatus

if TYPE_CHECKING:
    from piagents.agent import Agent

PROGRAM_TOOL = "program"
MAX_KEY_CHARS = 200
MAX_VALUE_CHARS = 1_000_000  # one stored value's JSON text
NO_AGENTS = "agent() is not available: this runtime runs Programs without Agents."
_EXIT = re.compile(r"(?:\n\n)?Command exited with code (-?\d+)\Z")
_NOTICE = re.compile(r"\[Showing [^\n]*\. Full output: ([^\n]+)\]\Z")  # bash's own


def prelude_names(names: Sequence[str]) -> list[str]:
    """The tool names a script can call as `tools.<name>` (identifiers, not keywords,
    not private); a tool named otherwise is left out."""
    return [n for n in names if n.isidentifier() and not keyword.iskeyword(n) and n[0] != "_"]


@dataclass(slots=True)
class _Call:
    name: str
    status: CallStatus = "cancelled"  # until it ends otherwise


class ProgramHost:
    """One Program's script API on the host: what it printed aside, what it called."""

    def __init__(
        self,
        scope: ProgramScope,
        tools: Callable[[], Mapping[str, Tool]],
        agents: ProgramAgents | None,
        stored_values: Callable[[], dict[str, str]],
    ) -> None:
        self.scope = scope
        self.caller: Agent = scope.caller
        self.tools = tools
        self.agents = agents
        self.stored_values = stored_values
        self.items: list[str] = []
        self.printed: list[str] = []
        self.values: dict[str, str] = {}  # this run's store() calls, kept on completion
        self.made_agents = False
        self._calls: list[_Call] = []
        self._aborted = asyncio.Event()

    @property
    def calls(self) -> list[CallMade]:
        return [CallMade(c.name, c.status) for c in self._calls]

    def on_print(self, text: str) -> None:
        self.printed.append(text)

    def tool_names(self) -> list[str]:
        """The caller's tools a script may name now (a prelude method each)."""
        return [n for n in self.tools() if n != PROGRAM_TOOL]

    async def call_tool(self, name: str, args: dict[str, JsonValue]) -> JsonValue:
        tools = {n: t for n, t in self.tools().items() if n != PROGRAM_TOOL}
        if name not in tools:
            raise ToolError(f"Tool {name} not found.")
        call = _Call(name)
        self._calls.append(call)
        started = time.monotonic()
        loop = self.caller.loop
        call_id = f"program-{self.scope.program_id}-{len(self._calls)}"
        ctx = ToolContext(
            cwd=Path(self.caller.session.record.cwd),
            output_dir=loop.output_dir,
            agent_id=self.caller.id,
            call_id=call_id,
            aborted=self._aborted,
        )
        try:
            # The harness's own path for a model's call: JSON arguments, the schema.
            result = await call_tool(
                tools, ToolCall(name, dict(args) if isinstance(args, dict) else {}, call_id), ctx
            )
        except asyncio.CancelledError:
            self._aborted.set()
            raise
        except Exception:
            call.status = "error"
            raise
        if name == "bash":
            structured = _bash_result(result, time.monotonic() - started)
            if structured is not None:
                call.status = "ok"
                return structured
        if result.is_error:
            call.status = "error"
            raise ToolError(result.text)
        call.status = "ok"
        return result.text

    def create_agent(self, options: dict[str, JsonValue]) -> dict[str, JsonValue]:
        agents = self._agents()
        agent_id, name = agents.create(self.scope, options)
        self.made_agents = True
        return {"id": agent_id, "name": name}

    async def send(
        self, agent_id: str, message: str, deliver_as: str, schema: JsonValue
    ) -> JsonValue:
        return await self._agents().send(self.scope, agent_id, message, deliver_as, schema)

    async def abort(self, agent_id: str) -> None:
        await self._agents().abort(self.scope, agent_id)

    def _agents(self) -> ProgramAgents:
        if self.agents is None:
            raise ToolError(NO_AGENTS)
        return self.agents

    def text(self, value: str) -> None:
        self.items.append(value)

    def store(self, key: str, value: JsonValue) -> None:
        if not isinstance(key, str) or not key or len(key) > MAX_KEY_CHARS:
            raise ValueError(
                f"store(): the key must be a string of 1 to {MAX_KEY_CHARS} characters"
            )
        encoded = json.dumps(value, ensure_ascii=False)
        if len(encoded) > MAX_VALUE_CHARS:
            raise ValueError(
                f"store(): the value of {key!r} is {len(encoded)} characters of JSON, "
                f"over the limit of {MAX_VALUE_CHARS}"
            )
        self.values[key] = encoded

    def load(self, key: str) -> JsonValue:
        encoded = self.values.get(key)
        if encoded is None:
            encoded = self.stored_values().get(key)
        if encoded is None:
            return None
        value: JsonValue = json.loads(encoded)
        return value


def _bash_result(result: ToolResult, seconds: float) -> dict[str, JsonValue] | None:
    """bash's result as a dict; None for a failure that is not a command's exit code
    (a timeout, a refused call), which raises like any other tool's."""
    text, code = result.text, 0
    if result.is_error:
        found = _EXIT.search(text)
        if found is None:
            return None
        code, text = int(found.group(1)), text[: found.start()]
    details = result.details if isinstance(result.details, dict) else {}
    path = details.get("fullOutputPath")
    truncated = "truncation" in details
    if result.is_error:  # an error result has no details: its notice names the file
        notice = _NOTICE.search(text)
        truncated, path = notice is not None, notice.group(1) if notice else None
    out: dict[str, JsonValue] = {
        "output": "" if text == "(no output)" else text,
        "exit_code": code,
        "truncated": truncated,
        "wall_time_seconds": round(seconds, 3),
    }
    if path:
        out["full_output_path"] = str(path)
    return out
