"""The SDK face of Programs (programs/sdk.py): a scope opened from a root whose Agents
belong to it, with pydantic models for schemas, on a real runtime with the faux model."""

import asyncio

import pydantic
import pytest

import piagents
from piagents.programs.agents import CoordinatedProgramAgents
from piagents.programs.ports import Closed
from piagents.programs.script_api import ToolError
from piagents.programs.sdk import ProgramScopeSession
from piagents.testing import FunctionModel, Reply, ToolCall
from support import Gate, until


class Count(pydantic.BaseModel):
    files: int
    names: list[str]


def scope_session(rt, root, **options):
    agents = CoordinatedProgramAgents(
        rt.coordinator, rt.operations, rt.coordinator.ports, rt.unload
    )
    return ProgramScopeSession(agents, root, **options)


async def test_a_pydantic_model_stands_for_the_schema_and_send_returns_an_instance(home, work):
    offered = []

    def route(call):
        offered.append(call.tools)
        if len(offered) == 1:
            return Reply(
                tool_calls=[ToolCall("submit_result", {"value": {"files": 2, "names": ["a"]}})]
            )
        return "done"

    async with piagents.Runtime(home=home, model=FunctionModel(route)) as rt:
        root = await rt.open_root(cwd=work)
        async with scope_session(rt, root) as p:
            h = p.agent(name="counter")
            assert h.name == "counter" and rt.store.get_session(h.id).meta["program"] == p.id
            value = await h.send("Count them", schema=Count)
            assert value == Count(files=2, names=["a"])
            assert await h.send("Thanks") == "done"
        assert p.closed == Closed()
        assert h.id not in rt.agents
        listed = await root.call_tool("agent", {"action": "list"})
        assert listed.text == "No matching Agents."


async def test_leaving_the_scope_aborts_its_agents_work(home, work):
    gate = Gate()
    async with piagents.Runtime(home=home, model=FunctionModel(gate.handler)) as rt:
        root = await rt.open_root(cwd=work)
        async with scope_session(rt, root, cleanup_timeout=5.0) as p:
            h = p.agent()
            send = asyncio.create_task(h.send("work"))
            await until(lambda: gate.started, "the turn to start")
        with pytest.raises(ToolError, match="aborted"):
            await send
        assert h.name == "agent-1" and h.id not in rt.agents
        with pytest.raises(ToolError, match="The Program has ended"):
            p.agent()


async def test_a_root_opens_a_program_scope_whose_agents_the_task_panel_shows(home, work):
    from piagents.tui.task_panel import take_snapshot
    from piagents.tui.task_rows import task_rows

    gate = Gate()
    async with piagents.Runtime(home=home, model=FunctionModel(gate.handler)) as rt:
        root = await rt.open_root(cwd=work)
        async with root.program() as p:
            h = p.agent(name="counter")
            send = asyncio.create_task(h.send("Count them"))
            await until(lambda: gate.started, "the turn to start")
            assert [e.program_id for e in rt.read_model.roster(root)] == [p.id]
            short = rt.read_model.roster(root)[0].short_id
            assert task_rows(take_snapshot(rt.read_model, root))[1:] == [
                f"  Program {p.id[:8]}  running",
                f"    Agent counter ({short})  running",
            ]
            gate.release("counter")
            assert await send == "counter finished"
        assert h.id not in rt.agents
        assert task_rows(take_snapshot(rt.read_model, root)) == []
