"""Pi's built-in coding tools: read, bash, edit, write, grep, find, ls.

Its public names:

- `Tool`, `ToolContext`, `ToolResult` (`base`): what a tool is, what it gets when it
  runs, and what it returns (extensions implement `Tool` too).
- `ReadTool` (`read`), `BashTool` (`bash`), `EditTool` (`edit`), `WriteTool`
  (`write`), `GrepTool` (`grep`), `FindTool` (`find`), `LsTool` (`ls`).
- `BUILTIN_TOOL_NAMES`, `builtin_tools()` and `shared_builtin_tools()` (here): their
  names, fresh instances of all seven in Pi's order, and one instance of each that
  every Agent of a process shares (they keep nothing between calls: what a call needs
  comes in its `ToolContext`).

The tool classes are imported on first use, so importing one tool module (or
`base`) imports no other.
"""

from __future__ import annotations

from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from piagents.harness.tools.base import Tool, ToolContext, ToolResult
    from piagents.harness.tools.bash import BashTool
    from piagents.harness.tools.edit import EditTool
    from piagents.harness.tools.find import FindTool
    from piagents.harness.tools.grep import GrepTool
    from piagents.harness.tools.ls import LsTool
    from piagents.harness.tools.read import ReadTool
    from piagents.harness.tools.write import WriteTool

BUILTIN_TOOL_NAMES: tuple[str, ...] = ("read", "bash", "edit", "write", "grep", "find", "ls")


def builtin_tools() -> list[Tool]:
    """Fresh instances of the built-in tools, in Pi's order."""
    from piagents.harness.tools.bash import BashTool
    from piagents.harness.tools.edit import EditTool
    from piagents.harness.tools.find import FindTool
    from piagents.harness.tools.grep import GrepTool
    from piagents.harness.tools.ls import LsTool
    from piagents.harness.tools.read import ReadTool
    from piagents.harness.tools.write import WriteTool

    return [ReadTool(), BashTool(), EditTool(), WriteTool(), GrepTool(), FindTool(), LsTool()]


@cache
def shared_builtin_tools() -> tuple[Tool, ...]:
    """The built-in tools every Agent is offered, made once: a spawn need not build
    seven tools (1,000 spawns build 7,000)."""
    return tuple(builtin_tools())


__all__ = [
    "BUILTIN_TOOL_NAMES",
    "BashTool",
    "EditTool",
    "FindTool",
    "GrepTool",
    "LsTool",
    "ReadTool",
    "Tool",
    "ToolContext",
    "ToolResult",
    "WriteTool",
    "builtin_tools",
    "shared_builtin_tools",
]

_DEFINED_IN = {
    "Tool": "base",
    "ToolContext": "base",
    "ToolResult": "base",
    "BashTool": "bash",
    "EditTool": "edit",
    "FindTool": "find",
    "GrepTool": "grep",
    "LsTool": "ls",
    "ReadTool": "read",
    "WriteTool": "write",
}


def __getattr__(name: str) -> Any:
    if name not in _DEFINED_IN:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_DEFINED_IN[name]}"), name)
