"""The supervision face of the `agent` tool, and `ask_owner`, for one calling Agent.

Each reads its call into a typed request (`requests`), lets the supervisor act,
and turns a `SupervisionError` into an error result whose details are the
structured error object.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from piagents.ai.arguments import ArgumentProblem
from piagents.harness.tools.base import ToolContext, ToolResult
from piagents.supervision import controls, error_texts, texts
from piagents.supervision.errors import SupervisionError, invalid_request, render_error
from piagents.supervision.host import Supervising
from piagents.supervision.ports import AgentHandle
from piagents.supervision.requests import (
    ACTIONS,
    ASK_OWNER,
    TOOL_NAME,
    AskOwnerRequest,
    CloseRequest,
    ContinueRequest,
    DelegateRequest,
    InspectRequest,
    InterruptRequest,
    ListRequest,
    ReplyRequest,
    SteerRequest,
    TranscriptRequest,
    ask_owner_parameters,
    parameters,
    parse_ask_owner,
    parse_request,
)


def _failed(error: SupervisionError) -> ToolResult:
    return ToolResult(render_error(error), {"error": error.to_details()}, True)


def _unusable(operation: str, problem: ArgumentProblem) -> ToolResult:
    """Arguments that are not plain JSON (the harness checks them first), as invalid_request."""
    return _failed(
        invalid_request(operation, error_texts.unusable_arguments(problem.message, problem.path))
    )


async def _guarded(run: Callable[[], Awaitable[ToolResult]]) -> ToolResult:
    try:
        return await run()
    except SupervisionError as error:
        return _failed(error)


class SupervisionTool:
    """`agent` for a lead or a delegating agent: the nine actions."""

    name = "agent"
    description = texts.DESCRIPTION
    prompt_snippet = texts.PROMPT_SNIPPET
    prompt_guidelines: Sequence[str] = texts.PROMPT_GUIDELINES
    validates_arguments = True  # errors are structured: see `requests`

    def __init__(self, supervisor: Supervising, caller: AgentHandle) -> None:
        self.supervisor = supervisor
        self.caller = caller
        self.parameters: dict[str, Any] = parameters()

    def reject_arguments(self, problem: ArgumentProblem, args: dict[str, Any]) -> ToolResult:
        action = args.get("action") if isinstance(args, dict) else None
        return _unusable(action if action in ACTIONS else TOOL_NAME, problem)

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await _guarded(lambda: self._dispatch(args))

    async def _dispatch(self, args: dict[str, Any]) -> ToolResult:
        s, caller = self.supervisor, self.caller
        req = parse_request(args)
        if isinstance(req, ListRequest):
            return s.list_agents(caller)
        if isinstance(req, DelegateRequest):
            return await s.delegate(caller, req)
        if isinstance(req, ContinueRequest):
            return await s.continue_(caller, req)
        if isinstance(req, SteerRequest):
            return controls.steer(s, caller, req)
        if isinstance(req, InterruptRequest):
            return await controls.interrupt(s, caller, req)
        if isinstance(req, ReplyRequest):
            return controls.reply(s, caller, req)
        if isinstance(req, CloseRequest):
            return await controls.close(s, caller, req)
        if isinstance(req, InspectRequest):
            return controls.inspect(s, caller, req)
        assert isinstance(req, TranscriptRequest)
        return controls.transcript(s, caller, req)


class AskOwnerTool:
    """`ask_owner` for a managed agent: one question per assignment, blocking until
    the owner replies."""

    name = ASK_OWNER
    description = texts.ASK_OWNER_DESCRIPTION
    prompt_snippet = texts.ASK_OWNER_PROMPT_SNIPPET
    prompt_guidelines: Sequence[str] = texts.ASK_OWNER_PROMPT_GUIDELINES
    validates_arguments = True

    def __init__(self, supervisor: Supervising, agent: AgentHandle) -> None:
        self.supervisor = supervisor
        self.agent = agent
        self.parameters: dict[str, Any] = ask_owner_parameters()

    def reject_arguments(self, problem: ArgumentProblem, args: dict[str, Any]) -> ToolResult:
        return _unusable(ASK_OWNER, problem)

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        async def run() -> ToolResult:
            req: AskOwnerRequest = parse_ask_owner(args)
            return await self.supervisor.ask_owner(self.agent, req, ctx.turn_calls)

        return await _guarded(run)
