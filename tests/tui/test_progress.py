"""The progress line: what the model is doing and for how long, from runtime events."""

from __future__ import annotations

import asyncio

from tui_support import StreamingModel, runtime, screen_text, started, submit, until

from piagents.ai.messages import AssistantMessage, TextContent, ToolResultMessage
from piagents.harness.events import (
    AssistantDelta,
    AssistantRetry,
    MessageCommitted,
    PhaseChanged,
    ToolStarted,
    TurnStarted,
)
from piagents.testing import Reply, ToolCall
from piagents.tui.app import PiAgentsApp
from piagents.tui.progress import Activity, next_activity, progress_text


class Clock:
    """Milliseconds that move only when the test says."""

    def __init__(self) -> None:
        self.now = 1_000_000

    def __call__(self) -> int:
        return self.now


def activities(*events, now=0):
    current = None
    seen = []
    for event in events:
        current = next_activity(current, event, now)
        seen.append(None if current is None else current.doing)
    return current, seen


def test_the_activity_follows_the_loop_from_a_slot_to_the_answer():
    call = ToolCall("bash", {"command": "make test"}, "c1")
    result = ToolResultMessage("c1", "bash", (TextContent("ok"),))
    answer = AssistantMessage((TextContent("done"),), "stop")
    last, seen = activities(
        PhaseChanged("queued"),
        PhaseChanged("running"),
        TurnStarted(1),
        AssistantDelta("thinking", "hm"),
        AssistantDelta("text", "I will"),
        AssistantDelta("toolCall", '{"command": '),
        AssistantDelta("toolCall", '"make test"}'),
        ToolStarted(call),
        MessageCommitted(result),
        TurnStarted(2),
        AssistantRetry(2, 4.0, "HTTP 429: slow down"),
        MessageCommitted(answer),
        PhaseChanged("idle"),
    )

    assert seen == [
        "Waiting for a slot",
        "Waiting for the model",
        "Waiting for the model",
        "Thinking",
        "Writing",
        "Writing a tool call",
        "Writing a tool call",
        "Running bash make test",
        "Waiting for the model",
        "Waiting for the model",
        "Retrying in 4s (attempt 2: HTTP 429: slow down)",
        "Waiting for the model",
        None,
    ]
    assert last is None


def test_the_line_gives_the_spinner_the_activity_the_time_and_a_tool_calls_size():
    writing = Activity(started=10_000, doing="Writing")
    assert progress_text(writing, 22_500) == "⠴ Writing… 12s  (Esc interrupts)"
    assert progress_text(writing, 22_600) == "⠦ Writing… 12s  (Esc interrupts)"
    call = Activity(started=0, doing="Writing a tool call", call_bytes=1234)
    assert progress_text(call, 65_000) == "⠋ Writing a tool call… 1m05s · 1.2 kB  (Esc interrupts)"


def test_parallel_tools_are_counted_until_each_result_is_in():
    first = ToolCall("read", {"path": "a.py"}, "c1")
    second = ToolCall("read", {"path": "b.py"}, "c2")
    _, seen = activities(
        PhaseChanged("running"),
        ToolStarted(first),
        ToolStarted(second),
        MessageCommitted(ToolResultMessage("c1", "read", (TextContent("a"),))),
        MessageCommitted(ToolResultMessage("c2", "read", (TextContent("b"),))),
    )

    assert seen[1:] == [
        "Running read a.py",
        "Running read a.py and 1 more",
        "Running read b.py",
        "Waiting for the model",
    ]


async def test_a_working_model_shows_a_spinner_with_its_time_until_the_answer(home, work, gate):
    clock = Clock()
    app = PiAgentsApp(runtime(home, gate.handler), lambda r: r.open_root(cwd=work), clock=clock)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        assert not app.progress.display and not app.progress.ticking
        await submit(pilot, "hello")
        await until(pilot, lambda: None in gate.started, what="the model to be asked")
        await until(pilot, lambda: "Waiting for the model… 0s" in screen_text(app), what="0s")
        assert app.progress.ticking
        clock.now += 7_000  # no runtime event: the timer repaints the time
        await until(pilot, lambda: "Waiting for the model… 7s" in screen_text(app), what="7s")
        gate.release(None)
        await until(pilot, lambda: "None finished" in screen_text(app), what="the answer")
        await until(pilot, lambda: not app.progress.display, what="the line to go")
        assert not app.progress.ticking  # idle: no timer runs


async def test_streamed_text_shows_as_it_arrives_while_the_line_says_writing(home, work):
    more = asyncio.Event()
    model = StreamingModel(lambda call: [("text", "Let me look"), ("wait", more), ("text", ".")])
    app = PiAgentsApp(runtime(home, model), lambda r: r.open_root(cwd=work))
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await submit(pilot, "look")
        await until(pilot, lambda: "Let me look" in screen_text(app), what="the first text")
        assert app.progress.text.endswith("Writing… 0s  (Esc interrupts)")
        more.set()
        await until(pilot, lambda: not app.progress.display, what="the end of the run")
        assert "Let me look." in screen_text(app)


async def test_a_running_tool_shows_in_the_line_until_its_result(home, work, script, gate):
    def root(call):
        last = call.messages[-1]
        if last.role == "user":
            spawn = {"action": "spawn", "name": "w", "message": "go"}
            return Reply(tool_calls=[ToolCall("agent", spawn)])
        if "started" in last.text:
            return Reply(tool_calls=[ToolCall("agent", {"action": "wait", "target": "w"})])
        return "w is done"

    script.on(None, root)
    script.on("w", gate.handler)
    app = PiAgentsApp(runtime(home, script), lambda r: r.open_root(cwd=work))
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await submit(pilot, "delegate")
        await until(pilot, lambda: "Running agent wait w…" in app.progress.text, what="the wait")
        gate.release("w")
        await until(pilot, lambda: "w is done" in screen_text(app), what="the answer")
        await until(pilot, lambda: not app.progress.ticking, what="the line to stop")


def test_a_tool_call_being_written_is_named_with_its_size():
    last, seen = activities(
        PhaseChanged("running"),
        TurnStarted(1),
        AssistantDelta("toolCall", "", "bash"),
        AssistantDelta("toolCall", '{"command": "ls"}', "bash"),
    )
    assert seen[-1] == "Writing a call of bash"
    assert progress_text(last, 2_000) == "⠋ Writing a call of bash… 2s · 17 B  (Esc interrupts)"
