"""A running Program's own Agents (programs/agents.py), through the port the runner
uses, on a real runtime with the faux model: made idle, answering `send()`, typed
results through `submit_result`, isolated from every other Agent, held to the tree's
limits, and taken offline for good, bottom-up, when the Program ends."""

import asyncio

import pytest
from program_support import Script

import piagents
from piagents.agents.errors import AgentCallError
from piagents.programs.agents import CoordinatedProgramAgents
from piagents.programs.ports import Closed, ProgramScope
from piagents.programs.script_api import ToolError
from piagents.store.records import new_program_id
from piagents.testing import FunctionModel, Reply, ToolCall
from support import Gate, settled, until


@pytest.fixture
def script():
    return Script()


def runtime(home, script, **agents_settings):
    settings = {"pi-agents": agents_settings} if agents_settings else None
    return piagents.Runtime(home=home, model=FunctionModel(script), settings=settings)


def program_agents(rt, unload=None):
    return CoordinatedProgramAgents(
        rt.coordinator, rt.operations, rt.coordinator.ports, unload or rt.unload
    )


def scope_of(caller):
    program_id = new_program_id()
    return ProgramScope(program_id, program_id[:8], caller)


def last_user_text(call):
    return [m for m in call.messages if m.role == "user"][-1].text


def tool_results(call):
    """The texts of the tool results since the latest user message."""
    out = []
    for m in reversed(call.messages):
        if m.role == "user":
            break
        if m.role == "toolResult":
            out.append(m.text)
    return out[::-1]


# ---- made, messaged, answered ------------------------------------------------------------


async def test_an_agent_of_a_program_starts_idle_and_send_returns_its_answer(home, work, script):
    script.on("tests", lambda call: f"ran: {last_user_text(call)}")
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work, name="boss")
        face, scope = program_agents(rt), scope_of(root)
        agent_id, name = face.create(scope, {"name": "tests"})
        assert name == "tests"
        assert rt.coordinator.state_of(agent_id) == "idle"
        assert script.calls_of("tests") == []
        answer = await face.send(scope, agent_id, "Run the tests", "followUp", None)
        assert answer == (
            f'ran: <agent-message from="Program" id="{scope.short_id}">\n'
            "Run the tests\n</agent-message>"
        )
        record = rt.store.get_session(agent_id)
        assert record.owner_id == root.id and record.root_id == root.id
        assert record.meta["program"] == scope.program_id


async def test_a_programs_agent_reads_its_messages_as_from_its_program(home, work, script):
    from program_support import program, run

    script.on("w", last_user_text)
    code = "w = agent(name='w')\nreturn await w.send('Count the files')"
    async with piagents.Runtime(home=home, model=FunctionModel(script), tools=["+program"]) as rt:
        root = await rt.open_root(cwd=work, name="boss")
        started = await run(root, code, background=True)
        short = started.text.removeprefix("Program ").removesuffix(" started.")
        waited = await program(root, action="wait", target=short)
    assert waited.text.endswith(
        f'Output:\n<agent-message from="Program" id="{short}">\nCount the files\n</agent-message>'
    )


async def test_omitted_names_are_generated_and_names_are_unique_in_the_program(home, work, script):
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        face, scope = program_agents(rt), scope_of(root)
        assert face.create(scope, {})[1] == "agent-1"
        assert face.create(scope, {"name": "agent-2"})[1] == "agent-2"
        assert face.create(scope, {})[1] == "agent-3"
        with pytest.raises(ToolError, match='Name "agent-1" is already used'):
            face.create(scope, {"name": "agent-1"})
        # Another Program, and the caller's own spawn, may use the same name.
        assert program_agents(rt).create(scope_of(root), {"name": "agent-1"})[1] == "agent-1"
        spawned = await root.call_tool(
            "agent", {"action": "spawn", "name": "agent-1", "message": "hi"}
        )
        assert not spawned.is_error, spawned.text


async def test_options_are_checked_as_spawn_checks_them(home, work, script):
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        face, scope = program_agents(rt), scope_of(root)
        with pytest.raises(ToolError, match="is not a directory"):
            face.create(scope, {"cwd": "missing"})
        with pytest.raises(ToolError, match="Invalid agent call: model 'nowhere/x'"):
            face.create(scope, {"model": "nowhere/x"})
        with pytest.raises(ToolError, match="thinkingLevel 'loud'"):
            face.create(scope, {"thinking_level": "loud"})
        with pytest.raises(ToolError, match="context 'all'"):
            face.create(scope, {"context": "all"})
        with pytest.raises(ToolError, match="`name` must be a string"):
            face.create(scope, {"name": 3})
        (work / "pkg").mkdir()
        agent_id, _ = face.create(scope, {"cwd": "pkg", "thinking_level": "high"})
        record = rt.store.get_session(agent_id)
        assert record.cwd == str((work / "pkg").resolve()) and record.thinking == "high"


async def test_steer_and_write_return_none_once_accepted(home, work, script):
    gate = Gate()
    script.on("w", gate.handler)
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        face, scope = program_agents(rt), scope_of(root)
        agent_id, _ = face.create(scope, {"name": "w"})
        assert await face.send(scope, agent_id, "note this", "write", None) is None
        first = asyncio.create_task(face.send(scope, agent_id, "work", "followUp", None))
        await until(lambda: gate.started, "the turn to start")
        assert await face.send(scope, agent_id, "hurry", "steer", None) is None
        gate.release("w")
        assert await first == "w finished"
        with pytest.raises(ToolError, match="deliver_as must be followUp, steer or write"):
            await face.send(scope, agent_id, "x", "later", None)
        with pytest.raises(ToolError, match="schema is only for deliver_as='followUp'"):
            await face.send(scope, agent_id, "x", "write", {"type": "integer"})


# ---- schema and submit_result --------------------------------------------------------------


async def test_a_schema_input_offers_submit_result_and_returns_the_first_valid_value(
    home, work, script
):
    seen = []

    def counter(call):
        seen.append((list(call.tools), tool_results(call)[-1:]))
        step = len(seen)
        if step == 1:
            return Reply(tool_calls=[ToolCall("submit_result", {"value": "three"})])
        if step == 2:
            return Reply(tool_calls=[ToolCall("submit_result", {"value": 3})])
        if step == 3:
            return Reply(tool_calls=[ToolCall("submit_result", {"value": 4})])
        return "counted"

    script.on("counter", counter)
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        face, scope = program_agents(rt), scope_of(root)
        agent_id, _ = face.create(scope, {"name": "counter"})
        value = await face.send(scope, agent_id, "Count them", "followUp", {"type": "integer"})
        assert value == 3
        assert all("submit_result" in tools for tools, _ in seen)
        assert seen[1][1] == [
            "The value does not match the schema: 'three' is not of type 'integer'. "
            "Call submit_result again."
        ]
        assert seen[2][1] == ["Result submitted."]
        assert seen[3][1] == [
            "A result was already submitted for this input; the first one stands."
        ]
        # The tool was for that input only.
        assert await face.send(scope, agent_id, "Thanks", "followUp", None) == "counted"
        assert "submit_result" not in script.calls_of("counter")[-1].tools
        assert "submit_result" not in rt.agents[agent_id].loop.tools


async def test_a_mismatch_inside_an_object_names_where_it_is(home, work, script):
    replies = iter(
        [
            Reply(tool_calls=[ToolCall("submit_result", {"value": {"n": "x"}})]),
            Reply(tool_calls=[ToolCall("submit_result", {"value": {"n": 1}})]),
            "ok",
        ]
    )
    seen = []
    script.on("w", lambda call: seen.append(tool_results(call)[-1:]) or next(replies))
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        face, scope = program_agents(rt), scope_of(root)
        agent_id, _ = face.create(scope, {"name": "w"})
        assert await face.send(scope, agent_id, "go", "followUp", schema) == {"n": 1}
    assert seen[1] == [
        "The value does not match the schema at value['n']: 'x' is not of type 'integer'. "
        "Call submit_result again."
    ]


async def test_a_schema_input_whose_turn_ends_without_a_valid_value_raises(home, work, script):
    script.on("w", lambda call: "I will not")
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        face, scope = program_agents(rt), scope_of(root)
        agent_id, _ = face.create(scope, {"name": "w"})
        with pytest.raises(ToolError) as caught:
            await face.send(scope, agent_id, "go", "followUp", {"type": "integer"})
        text = "Agent w ended its turn without calling submit_result with a valid value."
        assert str(caught.value) == text
        [ended] = rt.store.inputs(recipient_ids=[agent_id])
        assert (ended.status, ended.result) == ("failed", text)
        with pytest.raises(ToolError, match="not a valid JSON schema"):
            await face.send(scope, agent_id, "go", "followUp", {"type": "nonsense"})


# ---- failed, aborted, interrupted -----------------------------------------------------------


async def test_a_failed_input_makes_send_raise_with_its_error(home, work, script):
    script.on("w", lambda call: Reply(text="the model broke", stop_reason="error"))
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        face, scope = program_agents(rt), scope_of(root)
        agent_id, _ = face.create(scope, {"name": "w"})
        with pytest.raises(ToolError, match=r"Agent w failed: .*the model broke"):
            await face.send(scope, agent_id, "go", "followUp", None)


async def test_abort_ends_the_running_input_and_its_send_raises(home, work, script):
    gate = Gate()
    script.on("w", gate.handler)
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        face, scope = program_agents(rt), scope_of(root)
        agent_id, _ = face.create(scope, {"name": "w"})
        running = asyncio.create_task(face.send(scope, agent_id, "go", "followUp", None))
        queued = asyncio.create_task(face.send(scope, agent_id, "then", "followUp", None))
        await until(lambda: gate.started, "the turn to start")
        await face.abort(scope, agent_id)
        for send in (running, queued):
            with pytest.raises(ToolError) as caught:
                await send
            assert str(caught.value) == "Agent w's input was aborted."
        statuses = {i.status for i in rt.store.inputs(recipient_ids=[agent_id])}
        assert statuses == {"aborted"}
        # It stays available.
        gate.release("w")
        assert await face.send(scope, agent_id, "again", "followUp", None) == "w finished"


async def test_an_input_the_user_interrupts_in_the_viewer_makes_send_raise(home, work, script):
    gate = Gate()
    script.on("w", gate.handler)
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        face, scope = program_agents(rt), scope_of(root)
        agent_id, _ = face.create(scope, {"name": "w"})
        send = asyncio.create_task(face.send(scope, agent_id, "go", "followUp", None))
        await until(lambda: gate.started, "the turn to start")
        await rt.read_model.stop(rt.agents[agent_id])
        with pytest.raises(ToolError, match="aborted"):
            await send


# ---- isolation ---------------------------------------------------------------------------


async def test_the_caller_neither_sees_nor_reaches_its_programs_agents(home, work, script):
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        face, scope = program_agents(rt), scope_of(root)
        agent_id, _ = face.create(scope, {"name": "hidden"})
        assert await face.send(scope, agent_id, "work", "followUp", None) == "hidden done"
        await settled()
        # No notification reached the caller, and nothing is left for its wait.
        assert script.calls_of(None) == [] and not rt.agents[root.id].loop.busy
        listed = await root.call_tool("agent", {"action": "list"})
        assert listed.text == "No matching Agents."
        for action in (
            {"action": "send", "target": "hidden", "message": "hi"},
            {"action": "send", "target": agent_id, "message": "hi", "deliverAs": "write"},
            {"action": "abort", "target": agent_id[:8]},
            {"action": "wait", "target": "hidden"},
        ):
            res = await root.call_tool("agent", action)
            assert res.is_error, action
            assert res.text.startswith("No visible Agent matches"), res.text
        waited = await root.call_tool("agent", {"action": "wait", "history": 1})
        assert waited.text == "No results."


async def test_program_agents_see_only_one_another_and_their_own_sub_agents(home, work, script):
    listings = {}

    def lister(call):
        if not tool_results(call):
            return Reply(tool_calls=[ToolCall("agent", {"action": "list"})])
        listings[call.agent_name] = tool_results(call)[0]
        return "listed"

    script.on(
        "a",
        lambda call: (
            Reply(
                tool_calls=[ToolCall("agent", {"action": "spawn", "name": "sub", "message": "hi"})]
            )
            if not tool_results(call)
            else "spawned"
        ),
    )
    script.on("sub", lister)
    script.on("b", lister)
    script.on("other", lister)
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        await root.call_tool("agent", {"action": "spawn", "name": "mine", "message": "hi"})
        face, scope = program_agents(rt), scope_of(root)
        a, _ = face.create(scope, {"name": "a"})
        b, _ = face.create(scope, {"name": "b"})
        other_face, other_scope = program_agents(rt), scope_of(root)
        other, _ = other_face.create(other_scope, {"name": "other"})
        assert await face.send(scope, a, "spawn one", "followUp", None) == "spawned"
        await until(lambda: "sub" in listings, "the sub-Agent to list")
        assert await face.send(scope, b, "list", "followUp", None) == "listed"
        assert await other_face.send(other_scope, other, "list", "followUp", None) == "listed"
        names = {
            who: {line.split(" (")[0] for line in text.splitlines() if not line.startswith(" ")}
            for who, text in listings.items()
        }
        assert names == {"sub": {"a", "b"}, "b": {"a", "sub"}, "other": {"No matching Agents."}}
        # The caller's list still shows only its own.
        listed = await root.call_tool("agent", {"action": "list"})
        rows = [line for line in listed.text.splitlines() if not line.startswith(" ")]
        assert [row.split(" (")[0] for row in rows] == ["mine"]


async def test_a_program_agent_cannot_reach_the_caller_or_its_other_agents(home, work, script):
    results = []

    def sender(call):
        if not tool_results(call):
            return Reply(
                tool_calls=[
                    ToolCall("agent", {"action": "send", "target": "boss", "message": "hi"}),
                    ToolCall("agent", {"action": "send", "target": "mine", "message": "hi"}),
                ]
            )
        results.extend(tool_results(call))
        return "tried"

    script.on("p", sender)
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work, name="boss")
        await root.call_tool("agent", {"action": "spawn", "name": "mine", "message": "hi"})
        face, scope = program_agents(rt), scope_of(root)
        p, _ = face.create(scope, {"name": "p"})
        assert await face.send(scope, p, "go", "followUp", None) == "tried"
    assert results == [
        'No visible Agent matches "boss". Use list to find Agents.',
        'No visible Agent matches "mine". Use list to find Agents.',
    ]


async def test_a_program_cannot_use_another_programs_agents(home, work, script):
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        face = program_agents(rt)
        first, second = scope_of(root), scope_of(root)
        agent_id, _ = face.create(first, {"name": "w"})
        with pytest.raises(ToolError, match=f"No Agent {agent_id} belongs to this Program."):
            await face.send(second, agent_id, "hi", "followUp", None)
        with pytest.raises(ToolError, match="belongs to this Program"):
            await face.abort(second, agent_id)


# ---- limits --------------------------------------------------------------------------------


async def test_send_raises_at_max_outstanding_counting_the_whole_tree(home, work, script):
    gate = Gate()
    script.on("*", gate.handler)
    async with runtime(home, script, maxConcurrent=1, maxOutstanding=2) as rt:
        root = await rt.open_root(cwd=work)
        await root.call_tool("agent", {"action": "spawn", "name": "mine", "message": "hi"})
        face, scope = program_agents(rt), scope_of(root)
        a, _ = face.create(scope, {"name": "a"})
        b, _ = face.create(scope, {"name": "b"})
        first = asyncio.create_task(face.send(scope, a, "go", "followUp", None))
        await until(lambda: rt.coordinator.tree(root.id).outstanding == 2, "two open inputs")
        with pytest.raises(ToolError) as caught:
            await face.send(scope, b, "go", "followUp", None)
        assert str(caught.value) == (
            "Input rejected: 2 inputs have not ended. Wait for results or abort an Agent."
        )
        # The Program's input waits for the tree's one slot, held by the caller's Agent.
        assert rt.coordinator.state_of(a) == "queued"
        gate.release("mine")
        gate.release("a")
        assert await first == "a finished"


# ---- the Program ends ------------------------------------------------------------------------


async def test_close_aborts_running_work_bottom_up_and_the_agents_stay_offline(home, work, script):
    gate = Gate()

    def a(call):
        if not tool_results(call):
            return Reply(
                tool_calls=[ToolCall("agent", {"action": "spawn", "name": "sub", "message": "x"})]
            )
        return gate.handler(call)

    script.on("a", a)
    script.on("sub", gate.handler)
    unloaded = []
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)

        async def unload(agent, timeout):
            unloaded.append(agent.name)
            await rt.unload(agent, timeout)

        face, scope = program_agents(rt, unload), scope_of(root)
        agent_id, _ = face.create(scope, {"name": "a"})
        send = asyncio.create_task(face.send(scope, agent_id, "go", "followUp", None))
        await until(lambda: sorted(gate.started) == ["a", "sub"], "both turns to run")
        sub_id = next(i for i, x in rt.agents.items() if x.name == "sub")
        closed = await face.close(scope, 5.0)
        assert closed.abandoned == ()
        assert unloaded == ["sub", "a"]
        with pytest.raises(ToolError, match="aborted"):
            await send
        assert agent_id not in rt.agents and sub_id not in rt.agents
        statuses = {i.status for i in rt.store.inputs(recipient_ids=[agent_id, sub_id])}
        assert statuses <= {"aborted", "completed"} and "outstanding" not in statuses
        # Never woken again: not by the Program, nor by the user.
        with pytest.raises(ToolError, match="The Program has ended"):
            await face.send(scope, agent_id, "more", "followUp", None)
        with pytest.raises(ToolError, match="The Program has ended"):
            face.create(scope, {})
        for target in (agent_id, sub_id):
            with pytest.raises(AgentCallError, match="is offline for good: its Program has ended"):
                await rt.read_model.deliver(target, "wake up")
        await settled()
        assert agent_id not in rt.agents and sub_id not in rt.agents


async def test_work_that_does_not_stop_within_the_cleanup_timeout_is_abandoned(home, work, script):
    started, release = asyncio.Event(), asyncio.Event()

    async def stubborn(call):
        started.set()
        while not release.is_set():
            try:
                await release.wait()
            except asyncio.CancelledError:
                continue  # it ignores the abort
        return "late"

    script.on("w", stubborn)
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        face, scope = program_agents(rt), scope_of(root)
        agent_id, _ = face.create(scope, {"name": "w"})
        send = asyncio.create_task(face.send(scope, agent_id, "go", "followUp", None))
        await started.wait()
        closed = await face.close(scope, 0.05)
        assert closed.abandoned == ("Agent w",)
        assert agent_id not in rt.agents
        with pytest.raises(ToolError, match="aborted"):
            await send
        release.set()


async def test_membership_is_kept_in_the_store_and_hides_the_agent_after_reopen(home, work, script):
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        root_id = root.id
        face, scope = program_agents(rt), scope_of(root)
        agent_id, _ = face.create(scope, {"name": "kept"})
        assert await face.send(scope, agent_id, "go", "followUp", None) == "kept done"
    async with runtime(home, script) as rt:
        root = await rt.open_root(session=root_id)
        record = rt.store.get_session(agent_id)
        assert rt.coordinator.program_of(record) == scope.program_id
        listed = await root.call_tool("agent", {"action": "list"})
        assert listed.text == "No matching Agents."
        res = await root.call_tool("agent", {"action": "send", "target": "kept", "message": "x"})
        assert res.text == 'No visible Agent matches "kept". Use list to find Agents.'
        with pytest.raises(AgentCallError, match="offline for good"):
            await rt.read_model.deliver(agent_id, "wake up")
        assert agent_id not in rt.agents


async def test_the_user_still_sees_a_programs_agents_with_their_program(home, work, script):
    script.on(
        "a",
        lambda call: (
            Reply(
                tool_calls=[ToolCall("agent", {"action": "spawn", "name": "sub", "message": "x"})]
            )
            if not tool_results(call)
            else "spawned"
        ),
    )
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        await root.call_tool("agent", {"action": "spawn", "name": "mine", "message": "hi"})
        face, scope = program_agents(rt), scope_of(root)
        a, _ = face.create(scope, {"name": "a"})
        assert await face.send(scope, a, "go", "followUp", None) == "spawned"
        sub = next(i for i, x in rt.agents.items() if x.name == "sub")
        snapshot = rt.read_model.tree(root)
        assert {r.name for r in snapshot.records} == {"mine", "a", "sub"}
        assert snapshot.programs == {a: scope.program_id, sub: scope.program_id}
        assert {a, sub} <= set(snapshot.shorts)
        roster = {e.name: e.program_id for e in rt.read_model.roster(root)}
        assert roster == {"mine": None, "a": scope.program_id, "sub": scope.program_id}


async def test_the_callers_other_agents_do_not_see_the_programs_agents(home, work, script):
    seen = []

    def mine(call):
        if not tool_results(call):
            return Reply(
                tool_calls=[
                    ToolCall("agent", {"action": "list"}),
                    ToolCall("agent", {"action": "send", "target": "hidden", "message": "hi"}),
                ]
            )
        seen.extend(tool_results(call))
        return "looked"

    script.on("mine", mine)
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work, name="boss")
        face, scope = program_agents(rt), scope_of(root)
        face.create(scope, {"name": "hidden"})
        await root.call_tool("agent", {"action": "spawn", "name": "mine", "message": "look"})
        waited = await root.call_tool("agent", {"action": "wait", "target": "mine"})
        assert waited.text == "looked"
    assert seen[0].startswith("boss (") and "hidden" not in seen[0]
    assert seen[1] == 'No visible Agent matches "hidden". Use list to find Agents.'


async def test_closing_tells_no_owner_of_the_inputs_it_aborts(home, work, script):
    gate = Gate()
    script.on(
        "a",
        lambda call: (
            Reply(
                tool_calls=[ToolCall("agent", {"action": "spawn", "name": "sub", "message": "x"})]
            )
            if not tool_results(call)
            else "spawned"
        ),
    )
    script.on("sub", gate.handler)
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        face, scope = program_agents(rt), scope_of(root)
        a, _ = face.create(scope, {"name": "a"})
        assert await face.send(scope, a, "go", "followUp", None) == "spawned"
        await until(lambda: gate.started == ["sub"], "the sub-Agent's turn")
        calls = len(script.calls_of("a"))
        assert await face.close(scope, 5.0) == Closed()
        await settled()
        assert len(script.calls_of("a")) == calls
        assert [i.kind for i in rt.store.inputs(recipient_ids=[a])] == ["input"]
