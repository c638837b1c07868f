"""A constant async tool like the peers' `lookup`, and a Runtime that offers it.

The built-in file tools (`ls`, `read`) hop to a worker thread (`asyncio.to_thread`);
the peer scripts deliberately use an async constant tool to avoid that, so the
fan-out comparison offers the same tool here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from piagents.harness.tools.base import Tool, ToolContext, ToolResult
from piagents.runtime import Runtime

if TYPE_CHECKING:
    from piagents.agent import Agent

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {"q": {"type": "string"}},
    "required": ["q"],
    "additionalProperties": False,
}


class LookupTool:
    name = "lookup"
    description = "Return a constant."
    parameters: dict[str, Any] = PARAMETERS
    prompt_snippet = "Return a constant"
    prompt_guidelines: Sequence[str] = ()
    calls = 0

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        LookupTool.calls += 1
        return ToolResult("42")


class LookupRuntime(Runtime):
    """A Runtime whose Agents are also offered `lookup` (an embedder's custom tool)."""

    def tools_for(self, agent: Agent) -> list[Tool]:
        tools: list[Tool] = super().tools_for(agent)
        return [*tools, LookupTool()]
