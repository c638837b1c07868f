"""A lead's delegation, as the event stream tells it: the generation's states and its
result for the lead."""

import asyncio
from typing import Any

import piagents
from piagents.events import GenerationChanged, ResultDelivered, RuntimeEvent
from piagents.testing import FunctionModel

SETTINGS = {"pi-agents": {"spawnPlacement": "inline", "abortTimeoutMs": 2000}}


async def test_a_delegation_announces_its_generation_and_its_result(home, work) -> None:
    gate = asyncio.Event()

    async def script(call: Any) -> str:
        if call.agent_name == "generalist-1":
            await gate.wait()
            return "the answer is 42"
        return "noted"

    async with piagents.Runtime(home=home, model=FunctionModel(script), settings=SETTINGS) as rt:
        seen: list[RuntimeEvent] = []
        rt.subscribe(seen.append)
        stream = rt.events()
        lead = await rt.open_root(cwd=work, agent_api="supervision")
        res = await lead.call_tool(
            "agent", {"action": "delegate", "definition": "generalist", "task": "find it"}
        )
        assert not res.is_error, res.text
        gate.set()
        async with asyncio.timeout(10), stream:
            async for event in stream:
                if isinstance(event, ResultDelivered) and event.generation_id is not None:
                    break

    generation = res.details["request"]
    states = [e.state for e in seen if isinstance(e, GenerationChanged)]
    assert states[0] == "starting" and states[-1] == "ended"
    assert all(
        (e.generation_id, e.label, e.root_id) == (generation, "generalist-1", lead.id)
        for e in seen
        if isinstance(e, GenerationChanged)
    )
    [result] = [e for e in seen if isinstance(e, ResultDelivered) and e.generation_id]
    assert (result.owner_id, result.status) == (lead.id, "completed")
