"""The error of an invalid `agent` call, as the model reads it."""

from __future__ import annotations

from piagents.harness.tools.base import ToolResult


class AgentCallError(Exception):
    """An invalid `agent` call: its message is the error text the model reads."""


def error(text: str) -> ToolResult:
    return ToolResult(text, None, True)
