"""The fan-out on the OpenAI Agents SDK, agents as tools, in memory, in our process.

A root Agent is offered its 100 sub-agents as tools (`Agent.as_tool`). Its fake
model calls every sub-agent once per response, 10 responses in a row, then
answers: each sub-agent handles 10 inputs one after another (1000 nested
`Runner.run` calls), the 100 of each wave concurrently, as the SDK runs the
function calls of one response. Sub-agents answer at once (`plain`) or after
3 sequential calls of a constant async tool (`tools`). Nothing is persisted.

Differences from our fan-out, for reading the ratio: the waves are lock-step
(a sub-agent's next input starts when the slowest of the wave is done), the
root makes 11 model calls of its own, and no step is durable.

    python bench/oa_same_process.py plain|tools [--agents N] [--inputs N]

`bench_fanout.py` imports `run_fanout` and runs it in the same process as ours.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

from agents.models.interface import Model
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputItem,
    ResponseOutputMessage,
    ResponseOutputText,
)

from agents import (
    Agent,
    ModelResponse,
    Runner,
    Usage,
    function_tool,
    set_tracing_disabled,
)

FINAL = "final answer"
set_tracing_disabled(True)  # the default exporter would POST traces to api.openai.com


def _outputs_done(items: str | list[Any]) -> int:
    """How many function-call outputs the model input holds."""
    if isinstance(items, str):
        return 0
    return sum(
        (i.get("type") if isinstance(i, dict) else getattr(i, "type", None))
        == "function_call_output"
        for i in items
    )


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        type="function_call",
        call_id=call_id,
        name=name,
        arguments=json.dumps(arguments),
        status="completed",
    )


def _text(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        type="message",
        id="msg_fake",
        role="assistant",
        status="completed",
        content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
    )


class ScriptedModel(Model):
    """A zero-latency model whose response depends only on the outputs so far."""

    def __init__(self, agents: int, inputs: int, tool_calls: int, *, root: bool) -> None:
        self.agents, self.inputs, self.tool_calls, self.root = agents, inputs, tool_calls, root
        self.calls = 0

    def _respond(self, items: str | list[Any]) -> list[ResponseOutputItem]:
        self.calls += 1
        done = _outputs_done(items)
        if self.root:
            wave, in_wave = divmod(done, self.agents)
            if in_wave == 0 and wave < self.inputs:  # every sub-agent once more
                return [
                    _call(f"call_{wave}_{i}", f"sub{i}", {"input": f"input {i}.{wave}"})
                    for i in range(self.agents)
                ]
            return [_text("all done")]
        if done < self.tool_calls:
            return [_call(f"call_{done}", "lookup", {"q": "x"})]
        return [_text(FINAL)]

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[Any],
        model_settings: Any,
        tools: list[Any],
        output_schema: Any,
        handoffs: list[Any],
        tracing: Any,
        *,
        previous_response_id: str | None = None,
        conversation_id: str | None = None,
        prompt: Any = None,
    ) -> ModelResponse:
        return ModelResponse(output=self._respond(input), usage=Usage(requests=1), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the benchmark uses Runner.run only")


tool_calls_made = 0


@function_tool
async def lookup(q: str) -> str:  # async, as in the peer scripts: no worker thread
    """Return a constant."""
    global tool_calls_made
    tool_calls_made += 1
    return "42"


async def run_fanout(mode: str, agents: int = 100, inputs: int = 10) -> dict[str, Any]:
    """One fan-out; returns wall time and counts (asserted)."""
    global tool_calls_made
    tool_calls_made = 0
    tool_calls = 3 if mode == "tools" else 0
    sub_model = ScriptedModel(agents, inputs, tool_calls, root=False)
    subs = [
        Agent(
            name=f"sub{i}",
            instructions="Answer.",
            model=sub_model,
            tools=[lookup] if tool_calls else [],
        )
        for i in range(agents)
    ]
    root_model = ScriptedModel(agents, inputs, 0, root=True)
    root = Agent(
        name="root",
        instructions="Fan out.",
        model=root_model,
        tools=[
            s.as_tool(tool_name=f"sub{i}", tool_description="A sub-agent.")
            for i, s in enumerate(subs)
        ],
    )
    t0 = time.perf_counter()
    out = await Runner.run(root, "fan out", max_turns=inputs + 5)
    wall = time.perf_counter() - t0
    runs = agents * inputs
    assert out.final_output == "all done", out.final_output
    assert sub_model.calls == runs * (tool_calls + 1), sub_model.calls
    assert tool_calls_made == runs * tool_calls, tool_calls_made
    return {
        "framework": "openai-agents (same process, agents as tools)",
        "mode": mode,
        "wall_s": wall,
        "runs": runs,
        "model_calls": sub_model.calls + root_model.calls,
        "tool_calls": tool_calls_made,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("mode", choices=("plain", "tools"))
    p.add_argument("--agents", type=int, default=100)
    p.add_argument("--inputs", type=int, default=10)
    args = p.parse_args()
    print(json.dumps(asyncio.run(run_fanout(args.mode, args.agents, args.inputs))))


if __name__ == "__main__":
    main()
