"""The model-facing `agent` tool (Pi Agents face): schema, validation, dispatch."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from piagents.agents import texts
from piagents.agents.coordinator import STATES
from piagents.agents.operations import Operations
from piagents.ai.models import THINKING_LEVELS
from piagents.harness.tools.base import ToolContext, ToolResult

if TYPE_CHECKING:
    from piagents.agent import Agent

ACTIONS = ("spawn", "send", "wait", "list", "abort")
REQUIRED: dict[str, tuple[str, ...]] = {
    "spawn": ("name", "message"),
    "send": ("target", "message"),
    "wait": (),
    "list": (),
    "abort": ("target",),
}


@functools.cache
def parameters() -> dict[str, Any]:
    """The JSON schema of the tool's arguments (one shared, read-only object)."""
    d = texts.PARAMETER_DESCRIPTIONS
    string_or_list = {
        "anyOf": [
            {"type": "string"},
            {"type": "array", "items": {"type": "string"}},
        ],
        "description": d["target"],
    }
    return {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": list(ACTIONS), "description": d["action"]},
            "name": {"type": "string", "description": d["name"]},
            "message": {"type": "string", "description": d["message"]},
            "cwd": {"type": "string", "description": d["cwd"]},
            "context": {"type": "string", "enum": ["fresh", "fork"], "description": d["context"]},
            "model": {"type": "string", "description": d["model"]},
            "thinkingLevel": {
                "type": "string",
                "enum": list(THINKING_LEVELS),
                "description": d["thinkingLevel"],
            },
            "target": string_or_list,
            "deliverAs": {
                "type": "string",
                "enum": ["followUp", "steer", "write"],
                "description": d["deliverAs"],
            },
            "history": {"type": "integer", "minimum": 0, "description": d["history"]},
            "timeout": {
                "type": "number",
                "minimum": 10,
                "maximum": 3600,
                "description": d["timeout"],
            },
            "query": {"type": "string", "description": d["query"]},
            "state": {"type": "string", "enum": list(STATES), "description": d["state"]},
            "limit": {"type": "integer", "minimum": 1, "maximum": 200, "description": d["limit"]},
            "offset": {"type": "integer", "minimum": 0, "description": d["offset"]},
        },
        "required": ["action"],
        "additionalProperties": False,
    }


class AgentTool:
    """`agent` for one calling Agent."""

    name = "agent"
    prompt_snippet = texts.PROMPT_SNIPPET
    prompt_guidelines: Sequence[str] = texts.PROMPT_GUIDELINES

    def __init__(self, operations: Operations, caller: Agent) -> None:
        self.operations = operations
        self.caller = caller
        self.description = texts.description(operations.max_concurrent, operations.max_outstanding)
        self.parameters = parameters()

    def is_poll(self, args: dict[str, Any], details: Any) -> bool:
        """A `wait` that found its Agents still working: waiting again is no loop."""
        return (
            args.get("action") == "wait"
            and isinstance(details, dict)
            and bool(details.get("pending"))
        )

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        action = args["action"]
        for key in REQUIRED[action]:
            if key not in args:
                return ToolResult(texts.invalid(f"{action} needs `{key}`."), None, True)
        if "message" in REQUIRED[action] and not str(args["message"]).strip():
            return ToolResult(texts.invalid("`message` must be non-empty text."), None, True)
        if action == "spawn" and not str(args["name"]).strip():
            return ToolResult(texts.invalid("`name` must be non-empty."), None, True)
        c = self.operations
        if action == "spawn":
            return await c.spawn(self.caller, args)
        if action == "send":
            return await c.send(self.caller, args)
        if action == "wait":
            return await c.wait(self.caller, args)
        if action == "list":
            return c.list_agents(self.caller, args)
        return await c.abort(self.caller, args)
