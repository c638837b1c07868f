"""The loop guards: a bound on a run's model calls, and a stop to identical calls."""

import asyncio
import json
from typing import ClassVar

import pytest

import piagents
from piagents.agent import RunFailed
from piagents.ai.models import ModelRef
from piagents.harness.loop import AgentLoop
from piagents.harness.loop_guard import model_calls_exhausted, repeat_note, repeat_stopped
from piagents.harness.session import Session
from piagents.harness.tools.base import ToolResult
from piagents.store.sqlite import SQLiteStore
from piagents.testing import FunctionModel, Reply, ToolCall


class Looper:
    """Calls `make(n)` (the n-th tool call, from 1) until `stop_after` calls, then answers."""

    def __init__(self, make, stop_after=None):
        self.make = make
        self.stop_after = stop_after
        self.results: list[str] = []
        self.calls = 0

    def __call__(self, call):
        self.calls += 1
        if call.messages[-1].role == "toolResult":
            self.results.append(call.messages[-1].text)
        if self.stop_after is not None and self.calls > self.stop_after:
            return "done"
        return Reply(tool_calls=[self.make(self.calls)])


def runtime(home, route, **agents):
    settings = {"pi-agents": agents} if agents else None
    return piagents.Runtime(home=home, model=FunctionModel(route), settings=settings)


async def test_the_same_call_with_the_same_result_is_noted_from_the_third_and_stops_at_the_fifth(
    home, work
):
    (work / "a.txt").write_text("a")
    model = Looper(lambda n: ToolCall("ls", {}))
    async with runtime(home, model) as rt:
        root = await rt.open_root(cwd=work)
        with pytest.raises(RunFailed) as failed:
            await root.prompt("look around")
        assert str(failed.value) == repeat_stopped("ls", 5)
        assert model.calls == 5  # no model call after the fifth identical result
        results = [m.text for m in root.session.context() if m.role == "toolResult"]
    assert results[:2] == ["a.txt", "a.txt"]
    assert results[2:] == [f"a.txt\n\n{repeat_note('ls', n)}" for n in (3, 4, 5)]
    assert model.results == results[:4]  # what the model read


def test_the_repeat_texts_name_the_tool_the_count_and_what_to_do():
    assert repeat_note("ls", 3) == (
        "[This is the 3rd ls call in a row with the same arguments and the same result; "
        "repeating it will not change anything. Do something else, or answer with what "
        "you have: the run stops at 5 in a row.]"
    )
    assert repeat_stopped("ls", 5) == (
        "Stopped: the model called ls 5 times in a row with the same arguments and got "
        "the same result each time. Send a message to go on from here."
    )


async def test_the_same_call_whose_result_changes_is_not_a_loop(home, work):
    count = "n=$(cat n 2>/dev/null || echo 0); echo $((n+1)) | tee n"
    model = Looper(lambda n: ToolCall("bash", {"command": count}), stop_after=8)
    async with runtime(home, model) as rt:
        root = await rt.open_root(cwd=work)
        assert await root.prompt("count") == "done"
    assert model.results == [str(n) for n in range(1, 9)]


async def test_calls_that_differ_only_in_their_arguments_are_not_a_loop(home, work):
    (work / "notes.txt").write_text("one line\n")
    model = Looper(lambda n: ToolCall("read", {"path": "notes.txt", "limit": n}), stop_after=7)
    async with runtime(home, model) as rt:
        root = await rt.open_root(cwd=work)
        assert await root.prompt("read") == "done"
    assert model.results == ["one line"] * 7


async def test_a_run_stops_at_its_bound_of_model_calls_with_a_clear_message(home, work):
    model = Looper(lambda n: ToolCall("ls", {"limit": n}))
    async with runtime(home, model, maxModelCallsPerRun=4) as rt:
        root = await rt.open_root(cwd=work)
        with pytest.raises(RunFailed) as failed:
            await root.prompt("look around")
        assert model.calls == 4
        assert str(failed.value) == model_calls_exhausted(4)
        assert str(failed.value) == (
            'Stopped after 4 model calls in one run (the limit set by "pi-agents": '
            '{"maxModelCallsPerRun": 4} in settings.json). Send a message to go on from '
            "here, or raise the limit."
        )
        # The bound is per run: the next input starts a fresh count.
        model.stop_after = model.calls + 2
        assert await root.prompt("go on") == "done"


async def test_the_default_bound_is_200_model_calls(home, work):
    model = Looper(lambda n: ToolCall("ls", {"limit": n}))
    async with runtime(home, model) as rt:
        root = await rt.open_root(cwd=work)
        with pytest.raises(RunFailed, match="Stopped after 200 model calls"):
            await root.prompt("look around")
    assert model.calls == 200


async def test_an_owned_agent_stopped_by_a_guard_gives_its_owner_a_failed_result(home, work):
    def route(call):
        if call.agent_name == "w":
            return Reply(tool_calls=[ToolCall("ls", {})])
        return "root turn"

    async with runtime(home, route) as rt:
        root = await rt.open_root(cwd=work)
        await root.call_tool("agent", {"action": "spawn", "name": "w", "message": "look"})
        res = await root.call_tool("agent", {"action": "wait", "timeout": 30})
    assert 'status="failed"' in res.text
    assert repeat_stopped("ls", 5) in res.text


async def test_a_wait_that_finds_its_agents_still_working_is_a_poll(home, work):
    async with runtime(home, lambda call: "hi") as rt:
        root = await rt.open_root(cwd=work)
        tool = root.loop.tools["agent"]
    still = {"results": [], "pending": [{"id": "x", "name": "w"}]}
    assert tool.is_poll({"action": "wait", "timeout": 10}, still)
    assert not tool.is_poll({"action": "wait"}, {"results": [], "pending": []})
    assert not tool.is_poll({"action": "list"}, still)


class PollTool:
    """Answers "still waiting" every time, and says that it polls."""

    name = "poll"
    description = "Poll something."
    parameters: ClassVar[dict] = {"type": "object", "properties": {}}
    prompt_snippet = "poll"
    prompt_guidelines = ()

    def is_poll(self, args, details):
        return True

    async def execute(self, args, ctx):
        return ToolResult("still waiting")


async def test_calls_a_tool_calls_polls_may_repeat_without_end(tmp_path):
    calls = []

    def route(call):
        calls.append(1)
        return Reply(tool_calls=[ToolCall("poll", {})]) if len(calls) <= 8 else "done"

    store = SQLiteStore(tmp_path / "store.db")
    async with asyncio.TaskGroup() as tg:
        loop = AgentLoop(
            Session.create(store, cwd=str(tmp_path), model="faux/function"),
            task_group=tg,
            resolve_provider=lambda ref: FunctionModel(route),
            model=ModelRef("faux", "function"),
            thinking="off",
            tools=[PollTool()],
            system_prompt="",
            output_dir=tmp_path / "out",
        )
        outcome = await loop.prompt("wait for it")
    store.close()
    assert (outcome.status, outcome.answer) == ("completed", "done")
    assert len(calls) == 9


def test_max_model_calls_per_run_is_validated_like_the_other_settings():
    from piagents.config import parse_settings

    assert parse_settings({}).agents.max_model_calls_per_run == 200
    ok = parse_settings({"pi-agents": {"maxModelCallsPerRun": 50}})
    assert ok.agents.max_model_calls_per_run == 50 and ok.warnings == ()
    for bad in (0, -3, 2.5, "many", True, None):
        s = parse_settings({"pi-agents": {"maxModelCallsPerRun": bad}}, "settings.json")
        assert s.agents.max_model_calls_per_run == 200
        assert s.warnings == (
            "settings.json: pi-agents.maxModelCallsPerRun: expected a positive integer, "
            f"got {json.dumps(bad)}; using the default.",
        )
