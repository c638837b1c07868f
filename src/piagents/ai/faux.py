"""The faux provider: a Python function answers every model request.

Used by tests, benchmarks and scripted command-line runs
(`--model faux/<module>:<function>`).
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import itertools
import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from piagents.ai.events import StreamEnd, StreamEvent, TextDelta, ToolCallDelta
from piagents.ai.messages import AssistantContent, AssistantMessage, Message, TextContent, ToolCall
from piagents.ai.provider import ModelRequest


@dataclass(frozen=True, slots=True)
class Reply:
    """What a route returns when plain text is not enough."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    stop_reason: Literal["stop", "length", "toolUse", "aborted", "error"] | None = None


@dataclass(frozen=True, slots=True)
class ModelCall:
    """One model request as a route sees it."""

    agent_id: str
    agent_name: str | None
    messages: list[Message]
    tools: list[str]
    aborted: asyncio.Event
    model: str = ""
    system_prompt: str = ""


Route = Callable[[ModelCall], "Awaitable[str | Reply] | str | Reply"]

_call_ids = itertools.count(1)


class FunctionModel:
    """A provider whose answers come from `route(call)`."""

    name = "faux"
    api = "faux"

    def __init__(self, route: Route, model_id: str = "function") -> None:
        self.route = route
        self.model_id = model_id

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        call = ModelCall(
            request.agent_id,
            request.agent_name,
            list(request.messages),
            [t.name for t in request.tools],
            request.aborted,
            str(request.model),
            request.system_prompt,
        )
        out = self.route(call)
        reply = await out if inspect.isawaitable(out) else out
        if isinstance(reply, str):
            reply = Reply(text=reply)
        content: list[AssistantContent] = []
        if reply.text:
            yield TextDelta(reply.text)
            content.append(TextContent(reply.text))
        for index, tc in enumerate(reply.tool_calls):
            call_id = tc.id or f"call_{next(_call_ids)}"
            try:
                fragment = json.dumps(tc.args)
            except (TypeError, ValueError, RecursionError):  # the loop refuses such arguments
                fragment = ""
            yield ToolCallDelta(index, call_id, tc.name, fragment)
            content.append(ToolCall(tc.name, dict(tc.args), call_id))
        stop = reply.stop_reason or ("toolUse" if reply.tool_calls else "stop")
        provider, model = request.model.provider, request.model.model_id
        if stop == "error":
            msg = AssistantMessage(
                (),
                "error",
                provider=provider,
                model=model,
                error_message=reply.text or "error",
                api="faux",
            )
        else:
            msg = AssistantMessage(tuple(content), stop, provider=provider, model=model, api="faux")
        yield StreamEnd(msg)


def load_route(spec: str) -> Route:
    """Load `module:function` (the part after `faux/` in a model reference)."""
    module_name, sep, func_name = spec.partition(":")
    if not sep or not module_name or not func_name:
        raise ValueError(f"faux model {spec!r} must be given as faux/<module>:<function>")
    try:
        module = importlib.import_module(module_name)
    except ImportError as first:
        # Scripted models often live beside the user: look in the working directory too.
        if os.getcwd() in sys.path:
            raise ValueError(f"cannot import faux model module {module_name!r}: {first}") from first
        sys.path.append(os.getcwd())
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise ValueError(f"cannot import faux model module {module_name!r}: {exc}") from exc
    func: Any = getattr(module, func_name, None)
    if not callable(func):
        raise ValueError(f"module {module_name!r} has no function {func_name!r}")
    route: Route = func
    return route
