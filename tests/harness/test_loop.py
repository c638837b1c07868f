"""The agent loop, driven by the faux model against a real SQLite store."""

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import ClassVar

import pytest

from piagents.ai.faux import FunctionModel, Reply
from piagents.ai.messages import AssistantMessage, ToolCall, ToolResultMessage
from piagents.ai.models import ModelRef
from piagents.ai.retry import RetryPolicy
from piagents.harness.events import AssistantDelta, Input, RunEnded
from piagents.harness.loop import AgentLoop, LoopHooks
from piagents.harness.loop_records import LoopConfig
from piagents.harness.session import Session
from piagents.harness.tool_calls import ABORTED_TOOL_TEXT
from piagents.harness.tools.base import ToolContext, ToolResult
from piagents.store.records import MessageEntry
from piagents.store.sqlite import SQLiteStore
from support import settled, until


class EchoTool:
    name = "echo"
    description = "Echo text after an optional delay."
    parameters: ClassVar[dict] = {
        "type": "object",
        "properties": {"text": {"type": "string"}, "delay": {"type": "number"}},
        "required": ["text"],
        "additionalProperties": False,
    }
    prompt_snippet = "echo text"
    prompt_guidelines = ()

    def __init__(self):
        self.started: list[str] = []
        self.finished: list[str] = []
        self.cancelled: list[str] = []
        self.held: dict[str, asyncio.Event] = {}

    def hold(self, text: str) -> asyncio.Event:
        """Calls echoing `text` run until the test sets the event returned."""
        return self.held.setdefault(text, asyncio.Event())

    async def execute(self, args, ctx: ToolContext) -> ToolResult:
        self.started.append(args["text"])
        try:
            if args["text"] in self.held:
                await self.held[args["text"]].wait()
            else:
                await asyncio.sleep(args.get("delay", 0))  # a tool that takes this long
        except asyncio.CancelledError:
            self.cancelled.append(args["text"])
            raise
        self.finished.append(args["text"])
        return ToolResult(args["text"].upper(), details={"n": len(args["text"])})


def echo(text, delay=0.0):
    return ToolCall("echo", {"text": text, "delay": delay})


class Harness:
    def __init__(self, tmp_path: Path, tg: asyncio.TaskGroup, route, hooks=None, **config):
        self.store = SQLiteStore(tmp_path / "store.db")
        self.session = Session.create(self.store, cwd=str(tmp_path), model="faux/function")
        self.tool = EchoTool()
        self.loop = AgentLoop(
            self.session,
            task_group=tg,
            resolve_provider=lambda ref: FunctionModel(route),
            model=ModelRef("faux", "function"),
            thinking="off",
            tools=[self.tool],
            system_prompt="sys",
            output_dir=tmp_path / "out",
            config=LoopConfig(retry=RetryPolicy(0, 0, 0), **config),
            hooks=hooks,
        )
        self.events = []
        self.loop.listeners.append(self.events.append)

    def messages(self):
        return [
            e.message for e in self.store.entries(self.session.id) if isinstance(e, MessageEntry)
        ]


def texts(messages):
    return [(m.role, m.text) for m in messages]


async def test_a_plain_prompt_runs_one_turn_and_returns_the_answer(tmp_path):
    async with asyncio.TaskGroup() as tg:
        h = Harness(tmp_path, tg, lambda call: "hello there")
        outcome = await h.loop.prompt("hi")
    assert outcome.status == "completed" and outcome.answer == "hello there"
    assert texts(h.messages()) == [("user", "hi"), ("assistant", "hello there")]


async def test_tools_run_in_parallel_and_results_are_recorded_in_call_order(tmp_path):
    class Probe(EchoTool):
        """`slow` can end only once `fast` has run: run one after the other, it never does."""

        fast_ran = asyncio.Event()

        async def execute(self, args, ctx):
            if args["text"] == "fast":
                self.fast_ran.set()
            else:
                async with asyncio.timeout(30):
                    await self.fast_ran.wait()
            return await super().execute(args, ctx)

    def route(call):
        if len(call.messages) == 1:
            return Reply(tool_calls=[echo("slow"), echo("fast")])
        return "done"

    async with asyncio.TaskGroup() as tg:
        h = Harness(tmp_path, tg, route)
        h.loop.tools["echo"] = Probe()
        outcome = await h.loop.prompt("go")
    results = [m for m in h.messages() if isinstance(m, ToolResultMessage)]
    assert [(r.text, r.is_error) for r in results] == [("SLOW", False), ("FAST", False)]
    assert results[0].details == {"n": 4}
    assert outcome.answer == "done"


async def test_the_name_of_a_tool_call_being_written_comes_with_each_of_its_pieces(tmp_path):
    def route(call):
        if len(call.messages) == 1:
            return Reply(tool_calls=[echo("hi")])
        return "done"

    async with asyncio.TaskGroup() as tg:
        h = Harness(tmp_path, tg, route)
        await h.loop.prompt("go")
    pieces = [e for e in h.events if isinstance(e, AssistantDelta) and e.kind == "toolCall"]
    assert pieces and {e.tool for e in pieces} == {"echo"}


async def test_sequential_mode_runs_tools_one_after_another(tmp_path):
    order = []

    class Probe(EchoTool):
        async def execute(self, args, ctx):
            order.append(("start", args["text"]))
            # `a` takes a moment: run in parallel, `b` would end first
            await asyncio.sleep(args.get("delay", 0))
            order.append(("end", args["text"]))
            return ToolResult(args["text"])

    def route(call):
        if len(call.messages) == 1:
            return Reply(tool_calls=[echo("a", 0.05), echo("b")])
        return "ok"

    async with asyncio.TaskGroup() as tg:
        h = Harness(tmp_path, tg, route, tool_execution="sequential")
        h.loop.tools["echo"] = Probe()
        await h.loop.prompt("go")
    assert order == [("start", "a"), ("end", "a"), ("start", "b"), ("end", "b")]


async def test_a_malformed_tool_call_gets_an_error_naming_the_field_and_the_turn_goes_on(tmp_path):
    def route(call):
        if len(call.messages) == 1:
            return Reply(tool_calls=[ToolCall("echo", {"text": 5})])
        return "recovered"

    async with asyncio.TaskGroup() as tg:
        h = Harness(tmp_path, tg, route)
        outcome = await h.loop.prompt("go")
    result = next(m for m in h.messages() if isinstance(m, ToolResultMessage))
    assert result.is_error and "'text'" in result.text
    assert outcome.answer == "recovered"


async def test_an_unknown_tool_gets_an_error_result(tmp_path):
    def route(call):
        if len(call.messages) == 1:
            return Reply(tool_calls=[ToolCall("nope", {})])
        return "ok"

    async with asyncio.TaskGroup() as tg:
        h = Harness(tmp_path, tg, route)
        await h.loop.prompt("go")
    result = next(m for m in h.messages() if isinstance(m, ToolResultMessage))
    assert result.is_error and result.text == "Tool nope not found."


async def test_a_steer_joins_the_current_run_after_its_tool_calls(tmp_path):
    seen = []

    async def route(call):
        seen.append([m.text for m in call.messages if m.role == "user"])
        if len(call.messages) == 1:
            return Reply(tool_calls=[echo("x")])
        return "answer"

    async with asyncio.TaskGroup() as tg:
        h = Harness(tmp_path, tg, route)
        release = h.tool.hold("x")
        first = h.loop.submit(Input("start"))
        await until(lambda: h.tool.started, what="the tool call")
        steer = h.loop.submit(Input("also this", "steer"))
        release.set()
        a, b = await first, await steer
    assert a is b and a.status == "completed"
    assert [i.text for i in a.inputs] == ["start", "also this"]
    assert seen[-1] == ["start", "also this"]
    assert texts(h.messages())[:4] == [
        ("user", "start"),
        ("assistant", ""),
        ("toolResult", "X"),
        ("user", "also this"),
    ]


async def test_a_follow_up_waits_for_a_new_run_after_the_current_one(tmp_path):
    async def route(call):
        await asyncio.sleep(0.05)  # a model call that takes a moment
        return f"answer to {call.messages[-1].text}"

    async with asyncio.TaskGroup() as tg:
        h = Harness(tmp_path, tg, route)
        first = h.loop.submit(Input("one"))
        second = h.loop.submit(Input("two"))
        a, b = await first, await second
    assert a is not b
    assert (a.answer, b.answer) == ("answer to one", "answer to two")
    assert sum(isinstance(e, RunEnded) for e in h.events) == 2


async def test_queue_mode_all_takes_every_waiting_follow_up_into_one_run(tmp_path):
    answering = asyncio.Event()
    answer = asyncio.Event()

    async def route(call):
        answering.set()
        await answer.wait()
        return "ok"

    async with asyncio.TaskGroup() as tg:
        h = Harness(tmp_path, tg, route, follow_up_mode="all")
        first = h.loop.submit(Input("one"))
        await answering.wait()
        second = h.loop.submit(Input("two"))
        third = h.loop.submit(Input("three"))
        answer.set()
        await first
        b, c = await second, await third
    assert b is c and [i.text for i in b.inputs] == ["two", "three"]


async def test_a_write_while_idle_is_added_at_once_and_starts_no_turn(tmp_path):
    calls = []

    async with asyncio.TaskGroup() as tg:
        h = Harness(tmp_path, tg, lambda call: calls.append(1) or "x")
        assert h.loop.submit(Input("note", "write")) is None
    assert texts(h.messages()) == [("user", "note")]
    assert calls == []


async def test_a_write_while_running_is_added_at_the_next_tool_boundary(tmp_path):
    async def route(call):
        if len(call.messages) == 1:
            return Reply(tool_calls=[echo("x")])
        return "done"

    async with asyncio.TaskGroup() as tg:
        h = Harness(tmp_path, tg, route)
        release = h.tool.hold("x")
        run = h.loop.submit(Input("go"))
        await until(lambda: h.tool.started, what="the tool call")
        h.loop.submit(Input("fyi", "write"))
        release.set()
        outcome = await run
    assert texts(h.messages()) == [
        ("user", "go"),
        ("assistant", ""),
        ("toolResult", "X"),
        ("user", "fyi"),
        ("assistant", "done"),
    ]
    assert [i.text for i in outcome.inputs] == ["go"]  # a write has no result


async def test_abort_cancels_the_stream_keeps_partial_text_and_leaves_the_session_usable(tmp_path):
    hanging = asyncio.Event()

    async def route(call):
        if call.messages[-1].text == "hang":
            hanging.set()
            await asyncio.sleep(30)  # a model call that hangs until aborted
        return "fine"

    async with asyncio.TaskGroup() as tg:
        h = Harness(tmp_path, tg, route)
        run = h.loop.submit(Input("hang"))
        await hanging.wait()
        result = await h.loop.abort(timeout=2)
        outcome = await run
        assert result.stopped and outcome.status == "aborted"
        assert (await h.loop.prompt("again")).answer == "fine"
    last_two = h.messages()[-2:]
    assert texts(last_two) == [("user", "again"), ("assistant", "fine")]
    aborted = [
        m for m in h.messages() if isinstance(m, AssistantMessage) and m.stop_reason == "aborted"
    ]
    assert len(aborted) == 1
    assert aborted[0].api == "faux"  # it names its wire API, as answers do
    # the aborted message never reaches the model again
    assert all(m.role != "assistant" or m.text == "fine" for m in h.session.context())


async def test_abort_cancels_running_tools_and_records_error_results(tmp_path):
    def route(call):
        if len(call.messages) == 1:
            return Reply(tool_calls=[echo("slow"), echo("quick")])
        return "never"

    async with asyncio.TaskGroup() as tg:
        h = Harness(tmp_path, tg, route)
        h.tool.hold("slow")  # never released: the abort cancels it
        run = h.loop.submit(Input("go"))
        await until(lambda: h.tool.finished == ["quick"], what="the quick tool call")
        await h.loop.abort(timeout=2)
        assert (await run).status == "aborted"
    results = [m for m in h.messages() if isinstance(m, ToolResultMessage)]
    assert [(r.text, r.is_error) for r in results] == [(ABORTED_TOOL_TEXT, True), ("QUICK", False)]
    assert h.tool.cancelled == ["slow"]


async def test_abort_withdraws_queued_inputs(tmp_path):
    hanging = asyncio.Event()

    async def route(call):
        hanging.set()
        await asyncio.sleep(30)  # a model call that hangs until aborted
        return "x"

    async with asyncio.TaskGroup() as tg:
        h = Harness(tmp_path, tg, route)
        first = h.loop.submit(Input("one"))
        second = h.loop.submit(Input("two"))
        await hanging.wait()
        result = await h.loop.abort(timeout=2)
        assert [i.text for i in result.withdrawn] == ["two"]
        assert (await first).status == "aborted" and (await second).status == "aborted"
    assert h.loop.phase == "idle"


async def test_a_stuck_turn_is_abandoned_after_the_timeout(tmp_path):
    release = asyncio.Event()

    stuck = asyncio.Event()

    async def route(call):
        stuck.set()
        while not release.is_set():  # ignores cancellation: a stuck turn
            try:
                await release.wait()
            except asyncio.CancelledError:
                continue
        return "late"

    async with asyncio.TaskGroup() as tg:
        h = Harness(tmp_path, tg, route)
        run = h.loop.submit(Input("stuck"))
        await stuck.wait()
        result = await h.loop.abort(timeout=0.2)
        assert not result.stopped
        assert (await run).status == "aborted"
        assert not h.loop.busy
        release.set()
        await settled()  # the abandoned turn gets its late answer
    # the abandoned turn's late answer is never recorded
    assert all(m.text != "late" for m in h.messages())


async def test_an_errored_model_call_fails_the_run_and_is_omitted_from_context(tmp_path):
    async with asyncio.TaskGroup() as tg:
        h = Harness(tmp_path, tg, lambda call: Reply("rate limited forever", stop_reason="error"))
        outcome = await h.loop.prompt("hi")
    assert outcome.status == "failed" and outcome.answer == "rate limited forever"
    assert [m.role for m in h.session.context()] == ["user"]


async def test_the_before_run_hook_gates_each_run(tmp_path):
    gate = asyncio.Event()
    phases = []

    async def before_run(loop, inputs):
        phases.append(loop.phase)
        await gate.wait()

    async with asyncio.TaskGroup() as tg:
        h = Harness(tmp_path, tg, lambda call: "ok", hooks=LoopHooks(before_run=before_run))
        run = h.loop.submit(Input("x"))
        await until(lambda: phases, what="the before-run hook")
        assert h.loop.phase == "queued" and h.messages() == []
        gate.set()
        assert (await run).status == "completed"
    assert phases == ["queued"]


async def test_each_committed_step_is_in_the_store_before_the_next_model_call(tmp_path):
    counts = []
    h_ref = {}

    def route(call):
        counts.append(len(h_ref["h"].messages()))
        if len(call.messages) < 5:
            return Reply(tool_calls=[echo("a")])
        return "end"

    async with asyncio.TaskGroup() as tg:
        h = Harness(tmp_path, tg, route)
        h_ref["h"] = h
        await h.loop.prompt("go")
    assert counts == [1, 3, 5]


@pytest.mark.parametrize("mode", ["one-at-a-time", "all"])
async def test_steering_mode_decides_how_many_steers_join_at_once(tmp_path, mode):
    models = []

    answer = asyncio.Event()

    async def route(call):
        models.append([m.text for m in call.messages if m.role == "user"])
        await answer.wait()
        return "ok"

    async with asyncio.TaskGroup() as tg:
        h = Harness(tmp_path, tg, route, steering_mode=mode)
        run = h.loop.submit(Input("go"))
        await until(lambda: models, what="the first model call")
        h.loop.submit(Input("s1", "steer"))
        h.loop.submit(Input("s2", "steer"))
        answer.set()
        await run
    if mode == "all":
        assert models == [["go"], ["go", "s1", "s2"]]
    else:
        assert models == [["go"], ["go", "s1"], ["go", "s1", "s2"]]


async def test_an_abort_during_the_before_model_call_hook_makes_no_further_model_call(tmp_path):
    calls = []
    hook_started = asyncio.Event()

    async def slow_hook(loop):
        if calls:
            hook_started.set()
            await asyncio.sleep(30)  # a hook that hangs until aborted

    def route(call):
        calls.append(1)
        return Reply(tool_calls=[echo("x")]) if len(calls) == 1 else "second"

    async with asyncio.TaskGroup() as tg:
        h = Harness(tmp_path, tg, route, hooks=LoopHooks(before_model_call=slow_hook))
        run = h.loop.submit(Input("go"))
        await hook_started.wait()
        result = await h.loop.abort(timeout=2)
        assert result.stopped and (await run).status == "aborted"
    assert calls == [1]


# ---- abandoned work and the process's exit -------------------------------------------

STUCK_PROCESS = Path(__file__).with_name("stuck_process.py")


@pytest.mark.parametrize("scenario", ["route", "thread"])
def test_a_program_exits_after_its_stuck_turn_is_abandoned(scenario, tmp_path):
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    done = subprocess.run(
        [sys.executable, str(STUCK_PROCESS), scenario, str(home), str(work)],
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    assert done.stdout.splitlines() == ["root done", "answered", "exited"], done.stderr
    assert done.returncode == 0, done.stderr
    for noise in ("Traceback", "Task was destroyed", "error occurred"):
        assert noise not in done.stderr, done.stderr
