"""Scenarios of the Pi Agents spec, driven through the SDK contract with the faux model."""

import asyncio
from pathlib import Path

import pytest
from agent_support import runtime, spawn

import piagents
from piagents.testing import FunctionModel, Reply, ToolCall
from support import ElapsedClock, Gate, settled, until


def user_texts(call):
    return [m.text for m in call.messages if m.role == "user"]


def stuck_until(release):
    """A route that ignores cancellation (a stuck turn) until `release` is set."""

    async def stuck(call):
        while not release.is_set():
            try:
                await release.wait()
            except asyncio.CancelledError:
                continue
        return "late"

    return stuck


async def test_inputs_beyond_the_slots_queue_and_start_as_slots_free(home, work, script, store_url):
    gate = Gate()
    script.on("*", gate.handler)
    script.on(None, lambda call: "root turn")
    async with runtime(home, script, maxConcurrent=2, maxOutstanding=8, store=store_url) as rt:
        root = await rt.open_root(cwd=work)
        a = await spawn(root, "a")
        b = await spawn(root, "b")
        c = await spawn(root, "c")
        assert a.text.endswith("started.") and b.text.endswith("started.")
        assert c.text == f"Agent c ({c.details['id'][:8]}) queued: all 2 slots are busy."
        assert c.details["queued"] is True
        await until(lambda: len(gate.started) == 2)
        assert sorted(gate.started) == ["a", "b"]
        assert rt.coordinator.state_of(c.details["id"]) == "queued"
        gate.release("a")
        await until(lambda: "c" in gate.started)
        gate.release("b")
        gate.release("c")
        res = await root.call_tool("agent", {"action": "wait", "timeout": 10})
        assert res.text.count("<agent-result") == 3


async def test_send_to_an_idle_agent_reports_queued_when_slots_are_busy(home, work, script):
    gate = Gate()
    script.on("*", gate.handler)
    script.on(None, lambda call: "root turn")
    async with runtime(home, script, maxConcurrent=1) as rt:
        root = await rt.open_root(cwd=work)
        gate.release("a")
        await spawn(root, "a")
        await root.call_tool("agent", {"action": "wait", "target": "a", "timeout": 10})
        await spawn(root, "b")
        res = await root.call_tool("agent", {"action": "send", "target": "a", "message": "more"})
        a_id = res.details["id"]
        assert res.text == f"Input accepted by a ({a_id[:8]}), queued: all 1 slots are busy."
        assert res.details == {"id": a_id, "queued": True}
        gate.release("b")
        await root.call_tool("agent", {"action": "wait", "timeout": 10})


async def test_inputs_beyond_the_limit_are_rejected_and_notifications_do_not_count(
    home, work, script
):
    gate = Gate()
    script.on("*", gate.handler)
    script.on(None, lambda call: "root turn")
    async with runtime(home, script, maxConcurrent=1, maxOutstanding=2) as rt:
        root = await rt.open_root(cwd=work)
        await spawn(root, "a")
        await spawn(root, "b")
        res = await root.call_tool("agent", {"action": "spawn", "name": "c", "message": "x"})
        assert res.is_error
        assert res.text == (
            "Input rejected: 2 inputs have not ended. Wait for results or abort an Agent."
        )
        res = await root.call_tool("agent", {"action": "send", "target": "a", "message": "y"})
        assert res.is_error and res.text.startswith("Input rejected: 2 inputs")
        assert [s.name for s in rt.store.list_sessions(root_id=root.id)] == ["b", "a"]
        gate.release("a")
        gate.release("b")
        await root.call_tool("agent", {"action": "wait", "timeout": 10})
        ok = await root.call_tool("agent", {"action": "send", "target": "a", "message": "z"})
        assert not ok.is_error


async def test_a_steer_joins_the_current_turn_while_a_follow_up_waits_for_the_next(
    home, work, script
):
    turns = []

    async def worker(call):
        users = user_texts(call)
        turns.append(users[-1])
        if len(call.messages) == 1:
            # the turn stays in its tool call until the test has sent both messages
            return Reply(
                tool_calls=[ToolCall("bash", {"command": "until [ -e go ]; do sleep 0.01; done"})]
            )
        return "answer to " + users[-1].split("\n")[1]

    script.on("w", worker)
    script.on(None, lambda call: "root turn")
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work, name="boss")
        await spawn(root, "w", "first")
        await until(lambda: turns, what="w's first model call")
        f = await root.call_tool("agent", {"action": "send", "target": "w", "message": "later"})
        s = await root.call_tool(
            "agent", {"action": "send", "target": "w", "message": "now", "deliverAs": "steer"}
        )
        assert f.details["queued"] is False and s.details["queued"] is False
        (work / "go").touch()
        res = await root.call_tool("agent", {"action": "wait", "target": "w", "timeout": 10})
        # the steer joined the first turn: two inputs answered by one turn, then the follow-up
        assert res.text.count('status="completed"') == 3
        assert "answer to now" in res.text and "answer to later" in res.text
    assert len(turns) == 3  # tool turn, answer (after steer), follow-up turn


async def test_abort_stops_the_turn_and_withdraws_queued_inputs_without_notifying(
    home, work, script
):
    root_calls = []
    script.on("w", lambda call: asyncio.sleep(30))  # a long turn, cut short by the test
    script.on(None, lambda call: root_calls.append(call) or "root turn")
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        spawned = await spawn(root, "w")
        wid = spawned.details["id"]
        await until(lambda: rt.coordinator.state_of(wid) == "running")
        await root.call_tool("agent", {"action": "send", "target": "w", "message": "queued"})
        res = await root.call_tool("agent", {"action": "abort", "target": "w"})
        assert res.text == f"Agent w ({wid[:8]}) aborted."
        assert res.details == {"id": wid, "aborted": True}
        assert rt.coordinator.state_of(wid) == "idle"
        waited = await root.call_tool("agent", {"action": "wait", "target": "w", "timeout": 10})
        assert waited.text.count('status="aborted"') == 2
        again = await root.call_tool("agent", {"action": "abort", "target": "w"})
        assert again.text == f"Agent w ({wid[:8]}) has no turn or queued inputs."
        assert again.details == {"id": wid, "aborted": False}
        await settled()
    assert root_calls == []  # the owner aborted them: no notification woke the root


async def test_a_turn_that_does_not_stop_is_abandoned_after_the_abort_timeout(home, work, script):
    release = asyncio.Event()
    script.on("w", stuck_until(release))
    script.on(None, lambda call: "root turn")
    async with runtime(home, script, abortTimeoutMs=200) as rt:
        root = await rt.open_root(cwd=work)
        wid = (await spawn(root, "w")).details["id"]
        await until(lambda: rt.coordinator.state_of(wid) == "running")
        res = await root.call_tool("agent", {"action": "abort", "target": "w"})
        assert res.is_error
        assert res.text == (
            f"Agent w ({wid[:8]}) did not stop within the timeout and may still be running."
        )
        assert rt.coordinator.state_of(wid) == "idle"
        assert not rt.coordinator.tree_has_live_work(root.id)
        release.set()


async def test_an_owner_not_waiting_gets_a_notification_as_a_steer(home, work, script, store_url):
    root_inputs = []
    script.on("w", lambda call: "done!")

    def root_handler(call):
        root_inputs.append(user_texts(call)[-1])
        return "noted"

    script.on(None, root_handler)
    async with runtime(home, script, store=store_url) as rt:
        root = await rt.open_root(cwd=work)
        wid = (await spawn(root, "w")).details["id"]
        await until(lambda: root_inputs)
        await until(lambda: rt.coordinator.state_of(root.id) == "idle")
        waited = await root.call_tool("agent", {"action": "wait"})
        assert waited.text == "done!"
    assert root_inputs == [
        f'<agent-message from="w" id="{wid[:8]}">\nAgent w ({wid[:8]}) completed.\n</agent-message>'
    ]


async def test_an_owner_waiting_for_the_agent_gets_no_notification(home, work, script):
    root_calls = []
    script.on("w", lambda call: "done!")
    script.on(None, lambda call: root_calls.append(1) or "x")
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        await spawn(root, "w")
        res = await root.call_tool("agent", {"action": "wait", "target": "w", "timeout": 10})
        assert res.text == "done!"
        await settled()
    assert root_calls == []


async def test_wait_times_out_naming_the_agents_still_pending(home, work, script):
    gate = Gate()
    script.on("*", gate.handler)
    script.on(None, lambda call: "root turn")
    clock = ElapsedClock()  # the 10 s pass at once
    async with runtime(home, script, wait_clock=clock) as rt:
        root = await rt.open_root(cwd=work)
        gate.release("fast")
        fast = (await spawn(root, "fast")).details["id"]
        slow = (await spawn(root, "slow")).details["id"]
        await until(lambda: rt.coordinator.state_of(fast) == "idle")
        res = await root.call_tool("agent", {"action": "wait", "timeout": 10})
        assert clock.timeouts == [10.0]
        assert res.text == (
            f'<agent-result name="fast" id="{fast[:8]}" status="completed">\n'
            "fast finished\n</agent-result>\n\n"
            f"Still pending: slow ({slow[:8]})"
        )
        assert res.details["pending"] == [{"id": slow, "name": "slow"}]
        assert "interrupted" not in res.details
        gate.release("slow")


async def test_a_steer_to_the_waiting_agent_ends_its_wait_and_a_write_does_not(home, work, script):
    gate = Gate()
    script.on("*", gate.handler)
    script.on(None, lambda call: "root turn")
    async with runtime(home, script) as rt:
        boss = await rt.open_root(cwd=work, name="boss")
        other = await rt.open_root(cwd=work, name="other")
        slow = (await spawn(boss, "slow")).details["id"]
        waiting = asyncio.create_task(boss.call_tool("agent", {"action": "wait", "timeout": 60}))
        await until(lambda: rt.coordinator.state_of(boss.id) == "waiting")
        w = await other.call_tool(
            "agent", {"action": "send", "target": "boss", "message": "fyi", "deliverAs": "write"}
        )
        assert w.text == f"Write accepted by boss ({boss.id[:8]})."
        assert w.details == {"ids": [boss.id]}
        await settled()
        assert not waiting.done()
        await other.call_tool(
            "agent", {"action": "send", "target": "boss", "message": "now!", "deliverAs": "steer"}
        )
        res = await asyncio.wait_for(waiting, 5)
        assert res.text == (
            f"Still pending: slow ({slow[:8]})\n"
            "Stopped waiting for a new message. Wait again to keep waiting."
        )
        assert res.details == {
            "results": [],
            "pending": [{"id": slow, "name": "slow"}],
            "interrupted": True,
        }
        gate.release("slow")


async def test_an_input_from_a_non_owner_carries_the_reply_note_and_has_no_result(
    home, work, script
):
    seen = []
    script.on("b", lambda call: seen.append(user_texts(call)[-1]) or "b answer")
    script.on("a", lambda call: "a answer")
    script.on(None, lambda call: "root turn")
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        a = (await spawn(root, "a")).details["id"]
        b = (await spawn(root, "b")).details["id"]
        await root.call_tool("agent", {"action": "wait", "timeout": 10})
        a_agent = rt.agents[a]
        res = await a_agent.call_tool("agent", {"action": "send", "target": "b", "message": "hey"})
        assert res.text == f"Input accepted by b ({b[:8]})."
        await until(lambda: len(seen) == 2)
        assert seen[-1] == (
            f'<agent-message from="a" id="{a[:8]}" note="Reply with send">\nhey\n</agent-message>'
        )
        await until(lambda: rt.coordinator.state_of(b) == "idle")
        nothing = await root.call_tool("agent", {"action": "wait", "target": "b"})
        assert nothing.text == "No results."


async def test_writes_go_to_several_agents_and_start_no_turn(home, work, script):
    script.on("*", lambda call: "ok")
    script.on(None, lambda call: "root turn")
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        a = (await spawn(root, "a")).details["id"]
        b = (await spawn(root, "b")).details["id"]
        await root.call_tool("agent", {"action": "wait", "timeout": 10})
        calls_before = len(script.calls)
        res = await root.call_tool(
            "agent",
            {"action": "send", "target": ["a", "b"], "message": "note", "deliverAs": "write"},
        )
        assert res.text == f"Write accepted by a ({a[:8]}), b ({b[:8]})."
        assert res.details == {"ids": [a, b]}
        await settled()
        assert len(script.calls) == calls_before
        ctx = rt.agents[a].session.context()
        assert ctx[-1].text == f'<agent-message id="{root.id[:8]}">\nnote\n</agent-message>'


async def test_wait_truncates_long_results_and_saves_the_full_text(home, work, script):
    big = "\n".join(f"line {i}" for i in range(3000))
    script.on("a", lambda call: big)
    script.on("b", lambda call: "small")
    script.on(None, lambda call: "root turn")
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        a = (await spawn(root, "a")).details["id"]
        b = (await spawn(root, "b")).details["id"]
        await until(lambda: all(rt.coordinator.state_of(x) == "idle" for x in (a, b)))
        res = await root.call_tool("agent", {"action": "wait", "target": ["a", "b"]})
        path = Path(res.details["fullOutputPath"])
        assert path.exists() and big in path.read_text()
        assert str(path) in res.text
        assert res.text.endswith(f"[Results omitted: b ({b[:8]}). Use wait with fewer targets.]")
        assert "</agent-result>" in res.text
        assert res.details["truncation"]["truncated"] is True
        assert "result" not in res.details["results"][1]
        # the truncated one counts as read; the omitted one stays unread
        again = await root.call_tool("agent", {"action": "wait"})
        assert again.text == "small"


async def test_fork_gives_the_child_the_callers_conversation(home, work, script):
    seen = []
    script.on("f", lambda call: seen.append(user_texts(call)) or "forked")
    script.on(None, lambda call: "root answer")
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        await root.prompt("remember the number 42")
        await spawn(root, "f", "what number?", context="fork")
        await root.call_tool("agent", {"action": "wait", "target": "f", "timeout": 10})
    assert seen[0][0] == "remember the number 42"
    assert seen[0][-1].endswith("what number?\n</agent-message>")


async def test_spawn_defaults_to_the_callers_cwd_model_and_thinking(home, work, script, tmp_path):
    script.on("*", lambda call: "ok")
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work, thinking="high")
        sub = tmp_path / "sub"
        sub.mkdir()
        a = (await spawn(root, "a")).details["id"]
        b = (await spawn(root, "b", cwd=str(sub), thinkingLevel="low")).details["id"]
        ra, rb = rt.store.get_session(a), rt.store.get_session(b)
        assert (ra.cwd, ra.model, ra.thinking) == (str(work), "faux/function", "high")
        assert (rb.cwd, rb.thinking) == (str(sub), "low")
        assert ra.owner_id == root.id and ra.root_id == root.id


async def test_names_are_unique_among_siblings(home, work, script):
    script.on("*", lambda call: "ok")
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        a = (await spawn(root, "a")).details["id"]
        res = await root.call_tool("agent", {"action": "spawn", "name": "a", "message": "x"})
        assert res.is_error and res.text == f'Name "a" is already used by {a[:8]}.'
        # A child's own children have names of their own; after a restart, the names
        # read back from the store are taken.
        b = (await spawn(root, "b")).details["id"]
        await spawn(rt.agents[b], "a")
    async with runtime(home, script) as rt:
        root = await rt.open_root(session=root.id)
        for name, holder in (("a", a), ("b", b)):
            res = await root.call_tool("agent", {"action": "spawn", "name": name, "message": "x"})
            assert res.is_error and res.text == f'Name "{name}" is already used by {holder[:8]}.'
        await spawn(root, "c")


async def test_unknown_and_ambiguous_addresses_are_rejected(home, work, script):
    script.on("*", lambda call: "ok")
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        await spawn(root, "a")
        res = await root.call_tool("agent", {"action": "send", "target": "zz", "message": "x"})
        assert res.text == 'No visible Agent matches "zz". Use list to find Agents.'
        other1 = await rt.open_root(cwd=work, name="twin")
        other2 = await rt.open_root(cwd=work, name="twin")
        res = await root.call_tool("agent", {"action": "send", "target": "twin", "message": "x"})
        assert res.is_error
        assert res.text.startswith('"twin" matches several Agents:\n')
        assert res.text.endswith("\n\nRetry with a longer ID prefix.")
        assert f"twin ({other1.id[:8]})  idle  {work}" in res.text
        assert f"twin ({other2.id[:8]})  idle  {work}" in res.text


async def test_wait_and_abort_check_ownership(home, work, script):
    script.on("*", lambda call: "ok")
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        a = (await spawn(root, "a")).details["id"]
        b = (await spawn(root, "b")).details["id"]
        await root.call_tool("agent", {"action": "wait", "timeout": 10})
        child = rt.agents[a]
        res = await child.call_tool("agent", {"action": "abort", "target": "b"})
        assert res.is_error and res.text == f"b ({b[:8]}) is not owned by the caller."
        res = await child.call_tool("agent", {"action": "wait", "target": "b"})
        assert res.is_error and res.text == f"b ({b[:8]}) is not owned by the caller."


async def test_list_shows_visible_agents_with_state_and_latest_request(
    home, work, script, store_url
):
    script.on("*", lambda call: "ok")
    async with runtime(home, script, store=store_url) as rt:
        root = await rt.open_root(cwd=work)
        a = (await spawn(root, "a", "build the parser")).details["id"]
        await root.call_tool("agent", {"action": "wait", "timeout": 10})
        res = await root.call_tool("agent", {"action": "list"})
        lines = res.text.split("\n")
        assert lines[0] == f"a ({a[:8]})  idle  {work}"
        assert lines[1].endswith("  build the parser")
        assert res.details == {
            "total": 1,
            "agents": [{"id": a, "name": "a", "ownerId": root.id, "state": "idle"}],
        }
        none = await root.call_tool("agent", {"action": "list", "query": "nothing-like-this"})
        assert none.text == "No matching Agents."


async def test_list_query_matches_user_messages_and_pages(home, work, script, store_url):
    script.on("*", lambda call: "ok")
    async with runtime(home, script, store=store_url) as rt:
        root = await rt.open_root(cwd=work)
        for i in range(5):
            await spawn(root, f"w{i}", f"task number {i} about {'cats' if i % 2 else 'dogs'}")
            await asyncio.sleep(0.01)  # distinct times: entries are ordered by latest match
        await root.call_tool("agent", {"action": "wait", "timeout": 10})
        res = await root.call_tool("agent", {"action": "list", "query": "CATS|w4", "limit": 2})
        assert res.details["total"] == 3
        assert [x["name"] for x in res.details["agents"]] == ["w4", "w3"]
        assert res.text.endswith("[1 more results. Use offset=2 to continue.]")
        both = await root.call_tool("agent", {"action": "list", "query": "task dogs"})
        assert sorted(x["name"] for x in both.details["agents"]) == ["w0", "w2", "w4"]


async def test_restarting_the_runtime_brings_agents_back_idle_with_unread_results(
    home, work, script, store_url
):
    script.on("*", lambda call: "kept result")
    script.on(None, lambda call: "root turn")
    async with runtime(home, script, store=store_url) as rt:
        root = await rt.open_root(cwd=work)
        root_id = root.id
        a = (await spawn(root, "a")).details["id"]
        await until(lambda: rt.coordinator.state_of(a) == "idle")
    async with runtime(home, script, store=store_url) as rt:
        root = await rt.open_root(session=root_id)
        listed = await root.call_tool("agent", {"action": "list"})
        assert listed.details["agents"][0]["state"] == "idle"
        res = await root.call_tool("agent", {"action": "wait"})
        assert res.text == "kept result"
        again = await root.call_tool("agent", {"action": "send", "target": a, "message": "more"})
        assert not again.is_error
        res = await root.call_tool("agent", {"action": "wait", "target": "a", "timeout": 10})
        assert res.text == "kept result"


async def test_closing_the_runtime_ends_unfinished_inputs_aborted(home, work, script):
    script.on("w", lambda call: asyncio.sleep(30))  # a long turn, cut short by the test
    script.on(None, lambda call: "root turn")
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        root_id = root.id
        wid = (await spawn(root, "w")).details["id"]
        await until(lambda: rt.coordinator.state_of(wid) == "running")
    async with runtime(home, script) as rt:
        root = await rt.open_root(session=root_id)
        res = await root.call_tool("agent", {"action": "wait"})
        assert res.text == (
            f'<agent-result name="w" id="{wid[:8]}" status="aborted">\n'
            "The input was aborted.\n</agent-result>"
        )


async def test_a_root_is_running_while_its_tree_has_live_work(home, work, script):
    gate = Gate()
    script.on("*", gate.handler)
    script.on(None, lambda call: "root turn")
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        await spawn(root, "w")
        assert rt.coordinator.state_of(root.id) == "running"
        gate.release("w")
        await root.call_tool("agent", {"action": "wait", "timeout": 10})
        assert rt.coordinator.state_of(root.id) == "idle"


async def test_an_input_to_an_offline_root_wakes_it_in_the_background(home, work, script):
    answered = []
    script.on("sleeper", lambda call: answered.append(user_texts(call)[-1]) or "awake")
    script.on(None, lambda call: "root turn")
    async with runtime(home, script) as rt:
        sleeper = await rt.open_root(cwd=work, name="sleeper")
        sid = sleeper.id
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work, name="caller")
        w = await root.call_tool(
            "agent", {"action": "send", "target": "sleeper", "message": "x", "deliverAs": "write"}
        )
        assert w.is_error and "offline" in w.text
        res = await root.call_tool(
            "agent", {"action": "send", "target": "sleeper", "message": "wake up"}
        )
        assert res.text == f"Input accepted by sleeper ({sid[:8]})."
        await until(lambda: answered)
        await until(lambda: sid not in rt.agents)  # unloaded again once idle
        assert rt.store.lease_of(sid) is None


@pytest.mark.parametrize(
    "bad",
    [
        {"action": "spawn", "name": "x"},
        {"action": "send", "target": "x", "message": "  "},
        {"action": "wait", "timeout": 5},
        {"action": "list", "limit": 500},
        {"action": "nope"},
        {"action": "spawn", "name": "x", "message": "y", "bogus": 1},
    ],
)
async def test_invalid_calls_come_back_as_errors(home, work, script, bad):
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        res = await root.call_tool("agent", bad)
        assert res.is_error and res.text


async def test_an_agent_gives_up_its_slot_while_it_waits_and_resumes_ahead_of_new_inputs(
    home, work, script
):
    order = []
    gate = Gate()

    async def lead(call):
        order.append(("lead", len(call.messages)))
        if len(call.messages) == 1:
            return Reply(
                tool_calls=[
                    ToolCall("agent", {"action": "spawn", "name": "helper", "message": "help"})
                ]
            )
        if len(call.messages) == 3:
            return Reply(tool_calls=[ToolCall("agent", {"action": "wait", "timeout": 30})])
        return "lead done"

    async def helper(call):
        order.append(("helper", 0))
        await gate.event("helper").wait()
        return "helped"

    async def other(call):
        order.append(("other", 0))
        return "other done"

    script.on("lead", lead)
    script.on("helper", helper)
    script.on("other", other)
    script.on(None, lambda call: "root turn")
    async with runtime(home, script, maxConcurrent=1) as rt:
        root = await rt.open_root(cwd=work)
        lead_id = (await spawn(root, "lead")).details["id"]
        # lead holds the only slot; helper queues behind it, until lead waits
        await until(lambda: ("helper", 0) in order)
        assert rt.coordinator.state_of(lead_id) == "waiting"
        other_res = await spawn(root, "other")
        assert other_res.details["queued"] is True
        gate.release("helper")
        await until(lambda: ("lead", 5) in order and ("other", 0) in order)
        # lead took the slot back before "other", whose input had not started
        assert order.index(("lead", 5)) < order.index(("other", 0))
        await root.call_tool("agent", {"action": "wait", "timeout": 10})


async def test_after_the_user_stops_a_root_messages_from_agents_become_writes(home, work, script):
    root_turns = []

    async def root_handler(call):
        root_turns.append(user_texts(call)[-1])
        if user_texts(call)[-1] == "long job":
            await asyncio.sleep(30)  # a long turn: the user stops it
        return "root answer"

    script.on("boss", root_handler)
    script.on("w", lambda call: "w done")
    async with runtime(home, script) as rt:
        boss = await rt.open_root(cwd=work, name="boss")
        other = await rt.open_root(cwd=work, name="other")
        boss.send("long job")
        await until(lambda: root_turns == ["long job"])
        boss.send("queued by the user")
        await other.call_tool("agent", {"action": "send", "target": "boss", "message": "ping"})
        taken_back = await boss.abort()
        assert [i.text for i in taken_back] == ["queued by the user"]
        await settled()
        # the other Agent's message only added to the conversation: no new turn
        assert root_turns == ["long job"]
        assert boss.session.context()[-1].text.endswith("ping\n</agent-message>")
        await other.call_tool("agent", {"action": "send", "target": "boss", "message": "again"})
        await settled()
        assert root_turns == ["long job"]
        # the next input from its user ends that
        assert await boss.prompt("hello") == "root answer"
        await other.call_tool("agent", {"action": "send", "target": "boss", "message": "now"})
        await until(lambda: len(root_turns) == 3)


async def test_clearing_the_users_queue_leaves_other_agents_messages_queued(home, work, script):
    release = asyncio.Event()
    root_turns = []

    async def root_handler(call):
        root_turns.append(user_texts(call)[-1])
        await release.wait()
        return "ok"

    script.on("boss", root_handler)
    async with runtime(home, script) as rt:
        boss = await rt.open_root(cwd=work, name="boss")
        other = await rt.open_root(cwd=work, name="other")
        boss.send("first")
        await until(lambda: root_turns)
        boss.send("mine")
        await other.call_tool("agent", {"action": "send", "target": "boss", "message": "theirs"})
        cleared = boss.clear_queue()
        assert [i.text for i in cleared] == ["mine"]
        assert [i.text for i in boss.loop.queued_inputs()] == ["theirs"]
        release.set()
        await until(lambda: len(root_turns) == 2)
        assert root_turns[1].endswith("theirs\n</agent-message>")


async def test_manual_compaction_summarises_older_context(home, work, script):
    def root(call):
        if "summar" in call.system_prompt.lower():
            return "## Goal\nthe summary"
        return "answer " + "x" * 400

    script.on(None, root)
    settings = {"compaction": {"keepRecentTokens": 50}}
    async with piagents.Runtime(home=home, model=FunctionModel(script), settings=settings) as rt:
        r = await rt.open_root(cwd=work)
        for i in range(4):
            await r.prompt(f"question {i} " + "y" * 400)
        entry = await r.compact()
        assert entry is not None and "the summary" in entry.summary
        ctx = r.session.context()
        assert "the summary" in ctx[0].text and len(ctx) < 8


async def test_history_returns_read_results_again_marked_as_history(home, work, script):
    answers = iter(["first answer", "second answer"])
    script.on("w", lambda call: next(answers))
    script.on(None, lambda call: "root turn")
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        wid = (await spawn(root, "w")).details["id"]
        assert (await root.call_tool("agent", {"action": "wait", "target": "w"})).text == (
            "first answer"
        )
        await root.call_tool("agent", {"action": "send", "target": "w", "message": "again"})
        res = await root.call_tool("agent", {"action": "wait", "target": "w", "history": 1})
        assert res.text == (
            f'<agent-result name="w" id="{wid[:8]}" status="completed" history="true">\n'
            "first answer\n</agent-result>\n\n"
            f'<agent-result name="w" id="{wid[:8]}" status="completed">\n'
            "second answer\n</agent-result>"
        )
        assert [r["history"] for r in res.details["results"]] == [True, False]


async def test_list_filters_by_state(home, work, script):
    gate = Gate()
    script.on("*", gate.handler)
    script.on(None, lambda call: "root turn")
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        gate.release("done")
        done = (await spawn(root, "done")).details["id"]
        await until(lambda: rt.coordinator.state_of(done) == "idle")
        busy = (await spawn(root, "busy")).details["id"]
        await until(lambda: rt.coordinator.state_of(busy) == "running")
        running = await root.call_tool("agent", {"action": "list", "state": "running"})
        assert [a["id"] for a in running.details["agents"]] == [busy]
        idle = await root.call_tool("agent", {"action": "list", "state": "idle"})
        assert [a["id"] for a in idle.details["agents"]] == [done]
        gate.release("busy")


async def test_work_that_does_not_stop_when_going_offline_is_abandoned_and_reported(
    home, work, script, caplog
):
    release = asyncio.Event()
    script.on("w", stuck_until(release))
    script.on(None, lambda call: "root turn")
    rt = runtime(home, script, abortTimeoutMs=200)
    async with rt:
        root = await rt.open_root(cwd=work)
        wid = (await spawn(root, "w")).details["id"]
        await until(lambda: rt.coordinator.state_of(wid) == "running")
    assert rt.abandoned == [wid]
    assert "did not stop within 0.2 s" in caplog.text
    release.set()
    await settled()  # the abandoned turn ends: nothing is left pending
