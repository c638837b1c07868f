"""Helpers for driving the UI headlessly with the faux model (imported by the tests)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import piagents
import support
from piagents.ai.events import StreamEnd, StreamEvent, TextDelta, ThinkingDelta
from piagents.ai.messages import AssistantMessage, TextContent, ThinkingContent
from piagents.ai.provider import ModelRequest
from piagents.testing import FunctionModel, ModelCall
from piagents.tui.app import PiAgentsApp


class Script:
    """Routes model calls by Agent name (None: the root) to handlers; records calls."""

    def __init__(self) -> None:
        self.handlers: dict[str | None, Callable] = {}
        self.calls: list[ModelCall] = []

    def on(self, name, handler):
        self.handlers[name] = handler
        return handler

    async def __call__(self, call):
        self.calls.append(call)
        handler = self.handlers.get(call.agent_name, self.handlers.get("*"))
        if handler is None:
            return f"{call.agent_name or 'root'} done"
        out = handler(call)
        if asyncio.iscoroutine(out):
            out = await out
        return out


class StreamingModel(FunctionModel):
    """The faux model, but answers stream as many deltas: `route` returns (kind, text)
    chunks; ("pause", seconds) sleeps and ("wait", event) waits for the test's event."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        call = ModelCall(
            request.agent_id, request.agent_name, list(request.messages), [], request.aborted
        )
        chunks = self.route(call)
        if asyncio.iscoroutine(chunks):
            chunks = await chunks
        text, thinking = [], []
        for kind, chunk in chunks:
            if kind == "pause":
                await asyncio.sleep(float(chunk))  # the model's pace, not synchronisation
            elif kind == "wait":  # an asyncio.Event the test sets
                await chunk.wait()
            elif kind == "thinking":
                thinking.append(chunk)
                yield ThinkingDelta(chunk)
            else:
                text.append(chunk)
                yield TextDelta(chunk)
        content = []
        if thinking:
            content.append(ThinkingContent("".join(thinking)))
        if text:
            content.append(TextContent("".join(text)))
        yield StreamEnd(AssistantMessage(tuple(content), "stop", provider="faux", model="stream"))


def user_texts(call) -> list[str]:
    return [m.text for m in call.messages if m.role == "user"]


def runtime(home, model, **agents_settings) -> piagents.Runtime:
    settings = {"pi-agents": agents_settings} if agents_settings else None
    if not isinstance(model, FunctionModel):
        model = FunctionModel(model)
    return piagents.Runtime(home=home, model=model, settings=settings)


def make_app(home, work, model, clock=None, **agents_settings) -> PiAgentsApp:
    rt = runtime(home, model, **agents_settings)
    if clock is None:
        return PiAgentsApp(rt, lambda r: r.open_root(cwd=work))
    return PiAgentsApp(rt, lambda r: r.open_root(cwd=work), clock=clock)


async def until(pilot, predicate, timeout: float = support.TIMEOUT_S, what: str = "") -> None:
    """`support.until` for an app: it renders (the pilot pauses) between the checks."""
    await support.until(predicate, what or None, timeout=timeout, pause=lambda: pilot.pause(0.02))


async def started(pilot) -> None:
    await until(pilot, lambda: pilot.app.root is not None, what="the root to open")
    await pilot.pause()


async def type_text(pilot, text: str) -> None:
    await pilot.press(*[c if c != " " else "space" for c in text])


async def submit(pilot, text: str, key: str = "enter") -> None:
    await type_text(pilot, text)
    await pilot.press(key)


def screen_text(app) -> str:
    """The screen as plain text, line by line."""
    return "\n".join(strip.text.rstrip() for strip in app.screen._compositor.render_strips())
