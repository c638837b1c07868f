"""One run of an Agent's loop: the inputs it answers, its abort and abandon flags, and
the step (one model response and its tool calls) under way."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from piagents.ai.messages import AssistantMessage
from piagents.harness.events import Input
from piagents.harness.loop_guard import RepeatGuard


@dataclass(slots=True)
class Run:
    inputs: list[Input]
    aborted: asyncio.Event = field(default_factory=asyncio.Event)
    abandoned: asyncio.Event = field(default_factory=asyncio.Event)
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    step: asyncio.Task[AssistantMessage] | None = None
    model_calls: int = 0
    repeats: RepeatGuard = field(default_factory=RepeatGuard)
    on_abandon: list[Callable[[object], None]] = field(default_factory=list)

    def abandon(self) -> None:
        """Give up waiting for the run's step: those waiting for it or this wake now."""
        self.abandoned.set()
        for wake in list(self.on_abandon):
            wake(None)

    async def until_done_or_abandoned(self, step: asyncio.Task[Any]) -> None:
        """Once `step` is done or the run abandoned, whichever comes first: one future
        woken by either (a turn made a task and two futures for this with asyncio.wait)."""
        if step.done() or self.abandoned.is_set():
            return
        woken: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def wake(_: object) -> None:
            if not woken.done():
                woken.set_result(None)

        step.add_done_callback(wake)
        self.on_abandon.append(wake)
        try:
            await woken
        finally:
            step.remove_done_callback(wake)
            self.on_abandon.remove(wake)
