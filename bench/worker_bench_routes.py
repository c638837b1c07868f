"""Faux models that `pi-agents worker` processes load by name in bench_workers
(`faux/worker_bench_routes:<function>`)."""

from __future__ import annotations

import asyncio
import os
import time

from piagents.testing import Reply, ToolCall

DELAY_S = float(os.environ.get("PIAGENTS_BENCH_DELAY", "0.05"))


async def clock(call) -> str:  # type: ignore[no-untyped-def]
    """Answers with the wall-clock time at which the model was first asked."""
    return f"{time.time():.6f}"


async def steps(call) -> str | Reply:  # type: ignore[no-untyped-def]
    """A latency-bound turn: `DELAY_S` per model call, `STEPS` calls (an instant `ls`
    between them), then an answer."""
    await asyncio.sleep(DELAY_S)
    done = sum(1 for m in call.messages if m.role == "toolResult")
    if done < int(os.environ.get("PIAGENTS_BENCH_STEPS", "4")):
        return Reply(tool_calls=[ToolCall(name="ls", args={"path": "."}, id=f"s{done}")])
    return f"done in {done} steps by {os.getpid()}"
