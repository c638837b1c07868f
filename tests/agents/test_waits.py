"""Waits as a model makes them: several at once, each ending when its own targets are done."""

import asyncio
import time

from agent_support import agent_calls, runtime, spawn, tool_results

from piagents.agents.clock import AsyncioClock
from support import ElapsedClock, Gate, until


def committed_results(agent):
    return [m.text for m in agent.session.context() if m.role == "toolResult"]


WAIT_A = {"action": "wait", "target": "a", "timeout": 60}
WAIT_B = {"action": "wait", "target": "b", "timeout": 60}


async def test_two_waits_in_one_reply_each_return_when_their_own_target_is_done(home, work, script):
    gate = Gate()
    script.on("*", gate.handler)
    answers = []

    async def root_turn(call):
        if len(call.messages) == 1:
            return agent_calls(WAIT_A, WAIT_B)
        answers.append(tool_results(call))
        return "both back"

    script.on(None, root_turn)
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        await spawn(root, "a")
        await spawn(root, "b")
        await until(lambda: sorted(gate.started) == ["a", "b"])
        run = asyncio.ensure_future(root.prompt("wait for both"))
        await until(lambda: rt.coordinator.state_of(root.id) == "waiting")

        gate.release("a")  # the first wait returns now, well before its timeout
        await until(lambda: "a finished" in committed_results(root))
        assert rt.coordinator.state_of(root.id) == "waiting"  # still in the wait for b
        gate.release("b")
        assert await asyncio.wait_for(run, 5) == "both back"
    assert answers == [["a finished", "b finished"]]


async def test_two_waits_at_once_return_in_the_order_their_targets_finish(home, work, script):
    gate = Gate()
    script.on("*", gate.handler)
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        await spawn(root, "a")
        await spawn(root, "b")
        for_a = asyncio.ensure_future(root.call_tool("agent", WAIT_A))
        for_b = asyncio.ensure_future(root.call_tool("agent", WAIT_B))
        await until(lambda: rt.coordinator.state_of(root.id) == "waiting")
        gate.release("b")
        assert (await asyncio.wait_for(for_b, 5)).text == "b finished"
        assert not for_a.done() and rt.coordinator.state_of(root.id) == "waiting"
        gate.release("a")
        assert (await asyncio.wait_for(for_a, 5)).text == "a finished"
        await until(lambda: rt.coordinator.state_of(root.id) == "idle")


async def test_an_owned_agent_in_two_waits_gives_its_slot_up_once_and_takes_it_back_once(
    home, work, script
):
    gate = Gate()
    script.on("a", gate.handler)
    script.on("b", gate.handler)
    finals = []

    async def lead(call):
        results = tool_results(call)
        if not results:
            return agent_calls(
                {"action": "spawn", "name": "a", "message": "go"},
                {"action": "spawn", "name": "b", "message": "go"},
            )
        if len(results) == 2 and all("queued" in r or "started" in r for r in results):
            return agent_calls(WAIT_A, WAIT_B)
        finals.append(results[2:])  # after the two spawns
        return "lead done"

    script.on("lead", lead)
    script.on(None, lambda call: "root turn")
    async with runtime(home, script, maxConcurrent=1) as rt:
        root = await rt.open_root(cwd=work)
        lead_id = (await spawn(root, "lead")).details["id"]
        tree = rt.coordinator.tree(root.id)
        # The lead gave up the only slot to wait: a runs; b waits for the slot.
        await until(lambda: gate.started == ["a"])
        assert rt.coordinator.state_of(lead_id) == "waiting"
        assert not tree.slots.holds(lead_id)
        gate.release("a")
        await until(lambda: gate.started == ["a", "b"])
        assert rt.coordinator.state_of(lead_id) == "waiting"  # b's wait goes on, slotless
        assert not tree.slots.holds(lead_id)
        gate.release("b")
        waited = await root.call_tool("agent", {"action": "wait", "timeout": 10})
        assert waited.text == "lead done"
        assert finals == [["a finished", "b finished"]]
        assert tree.slots.holders == set()


async def test_a_wait_that_times_out_returns_its_pending_agents_without_real_time_passing(
    home, work, script
):
    gate = Gate()
    script.on("*", gate.handler)
    clock = ElapsedClock()
    async with runtime(home, script, wait_clock=clock) as rt:
        root = await rt.open_root(cwd=work)
        a_id = (await spawn(root, "a")).details["id"]
        started = time.monotonic()
        res = await root.call_tool("agent", {"action": "wait", "target": "a", "timeout": 10})
        assert time.monotonic() - started < 5  # not the 10 s the model asked for
        assert clock.timeouts == [10.0]
        assert res.details == {"results": [], "pending": [{"id": a_id, "name": "a"}]}
        assert rt.coordinator.state_of(root.id) != "waiting"
        gate.release("a")
        await until(lambda: rt.coordinator.state_of(a_id) == "idle")
        done = await root.call_tool("agent", {"action": "wait", "target": "a", "timeout": 10})
        assert done.text == "a finished"
        assert clock.timeouts == [10.0]  # nothing pending: no second wait


async def test_the_real_clock_ends_a_wait_at_its_timeout_or_when_the_event_is_set():
    event = asyncio.Event()
    assert await AsyncioClock().wait_for(event, 0.01) is False
    event.set()
    assert await AsyncioClock().wait_for(event, 60) is True
