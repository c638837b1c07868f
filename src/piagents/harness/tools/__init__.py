"""Pi's built-in coding tools: read, bash, edit, write, grep, find, ls."""

from piagents.harness.tools.base import Tool
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
    return [ReadTool(), BashTool(), EditTool(), WriteTool(), GrepTool(), FindTool(), LsTool()]


__all__ = [
    "BUILTIN_TOOL_NAMES",
    "BashTool",
    "EditTool",
    "FindTool",
    "GrepTool",
    "LsTool",
    "ReadTool",
    "WriteTool",
    "builtin_tools",
]
