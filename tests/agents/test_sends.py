"""Sends made together in one reply, on both stores: a `wait` in the same reply sees
what the send gave, and the outstanding limit holds for sends made at once."""

import asyncio

from agent_support import agent_calls, runtime, spawn, tool_results

from piagents.agents import texts
from support import Gate, until


async def test_a_wait_in_the_same_reply_as_a_send_waits_for_what_the_send_gave(
    home, work, script, store_url
):
    script.on("a", lambda call: f"answer {len(call.messages)}")
    seen = []

    async def root_turn(call):
        if len(call.messages) == 1:
            return agent_calls(
                {"action": "send", "target": "a", "message": "again"},
                {"action": "wait", "target": "a", "timeout": 60},
            )
        seen.append(tool_results(call))
        return "done"

    script.on(None, root_turn)
    async with runtime(home, script, store=store_url) as rt:
        root = await rt.open_root(cwd=work)
        await spawn(root, "a")
        first = await root.call_tool("agent", {"action": "wait", "target": "a", "timeout": 60})
        assert first.text == "answer 1"
        assert await asyncio.wait_for(root.prompt("ask a again"), 10) == "done"
    sent, waited = seen[0]
    assert sent.startswith("Input accepted by a (")
    assert waited == "answer 3"  # its first exchange, then the second message


async def test_sends_made_together_cannot_pass_the_outstanding_limit_together(
    home, work, script, store_url
):
    gate = Gate()
    script.on("a", gate.handler)
    seen = []

    async def root_turn(call):
        if len(call.messages) == 1:
            return agent_calls(
                *({"action": "send", "target": "a", "message": f"m{i}"} for i in range(3))
            )
        seen.append(tool_results(call))
        return "sent"

    script.on(None, root_turn)
    async with runtime(home, script, store=store_url, maxConcurrent=1, maxOutstanding=2) as rt:
        root = await rt.open_root(cwd=work)
        await spawn(root, "a")  # one input outstanding while a is held
        await until(lambda: gate.started == ["a"])
        assert await asyncio.wait_for(root.prompt("three more"), 10) == "sent"
        tree = rt.coordinator.tree(root.id)
        assert tree.outstanding == 2
        gate.release("a")
        await until(lambda: tree.outstanding == 0)
    results = seen[0]
    assert results[0].startswith("Input accepted by a (")
    assert results[1:] == [texts.input_rejected(2)] * 2
