"""A root's live-work check asks only the Agents of its tree that may be busy: with
many idle Agents loaded (a runtime closing unloads them one by one, and the root's
state is worked out after each) it asks none of them."""

from agent_support import runtime, spawn

from support import Gate, settled


async def test_a_roots_live_work_asks_none_of_its_idle_agents(home, work, script):
    gate = Gate()
    script.on("*", gate.handler)
    script.on(None, lambda call: "root turn")
    async with runtime(home, script, maxConcurrent=30, maxOutstanding=30) as rt:
        root = await rt.open_root(cwd=work)
        names = [f"a{i}" for i in range(20)]
        for name in names:
            gate.release(name)
            await spawn(root, name)
        done = await root.call_tool("agent", {"action": "wait", "target": names, "timeout": 30})
        assert done.text.count("<agent-result") == len(names), done.text
        await settled()
        children = {a.id for a in rt.agents.values() if a.id != root.id}
        assert len(children) == len(names)
        assert all(rt.coordinator.state_of(i) == "idle" for i in children)
        asked: list[str] = []
        real = rt.coordinator.state_of

        def counting(agent_id):
            asked.append(agent_id)
            return real(agent_id)

        rt.coordinator.state_of = counting
        try:
            assert not rt.coordinator.tree_has_live_work(root.id)
        finally:
            rt.coordinator.state_of = real
        assert not children & set(asked), asked
