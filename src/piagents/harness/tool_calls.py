"""One tool call, from its arguments to the result message the model reads.

The agent loop decides when calls run and commits their results; what a single
call does is here: arguments that are not plain JSON never reach a tool, the
schema is checked, every failure becomes an error result, and the repeat
guard's note is added to a result that repeats.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

import msgspec

from piagents.ai.arguments import ArgumentProblem, argument_problem
from piagents.ai.messages import ImageContent, TextContent, ToolCall, ToolResultMessage
from piagents.harness.loop_guard import RepeatGuard, is_poll
from piagents.harness.tools.base import Tool, ToolContext, ToolError, ToolResult
from piagents.harness.tools.base import validation_error as tool_validation_error
from piagents.store.base import StoreError

ABORTED_TOOL_TEXT = "Tool execution was aborted."


async def call_tool(tools: Mapping[str, Tool], call: ToolCall, ctx: ToolContext) -> ToolResult:
    """Validate and run one call of one of `tools`; every failure is an error result."""
    tool = tools.get(call.name)
    if tool is None:
        return ToolResult(f"Tool {call.name} not found.", is_error=True)
    unusable = argument_problem(call.args)
    if unusable is not None:
        return rejected(tool, call, unusable)
    problem = tool_validation_error(tool, call.args)
    if problem is not None:
        return ToolResult(problem, is_error=True)
    try:
        return await tool.execute(call.args, ctx)
    except ToolError as exc:
        return ToolResult(str(exc), is_error=True)
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        return ToolResult(failure_text(exc), is_error=True)


def failure_text(exc: BaseException) -> str:
    """What a failed call or run reports: a store error's own message (it names its
    cause), else the exception's type and message; the first of a group's errors."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, StoreError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def rejected(tool: Tool | None, call: ToolCall, problem: ArgumentProblem) -> ToolResult:
    """The error for arguments that are not plain JSON, in the tool's own form if it
    words its errors itself (`reject_arguments(problem, args)`)."""
    reject = getattr(tool, "reject_arguments", None)
    if reject is not None:
        result: ToolResult = reject(problem, call.args)
        return result
    return ToolResult(problem.text(call.name), is_error=True)


def result_message(call: ToolCall, result: ToolResult) -> ToolResultMessage:
    content: tuple[TextContent | ImageContent, ...] = (TextContent(result.text), *result.images)
    return ToolResultMessage(call.id, call.name, content, result.details, result.is_error)


def aborted_message(call: ToolCall) -> ToolResultMessage:
    return result_message(call, ToolResult(ABORTED_TOOL_TEXT, is_error=True))


def noted(
    repeats: RepeatGuard, tool: Tool | None, call: ToolCall, msg: ToolResultMessage
) -> ToolResultMessage:
    """One result, in call order, as the repeat guard sees it: noted when it repeats."""
    note = repeats.observe(call, msg.text, msg.is_error, is_poll(tool, call.args, msg.details))
    if note is None:
        return msg
    images = tuple(c for c in msg.content if not isinstance(c, TextContent))
    return msgspec.structs.replace(msg, content=(TextContent(f"{msg.text}\n\n{note}"), *images))
