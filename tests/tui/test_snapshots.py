"""SVG snapshots of the UI (pytest-textual-snapshot); update with `--snapshot-update`."""

from __future__ import annotations

import pytest
from tui_support import make_app, runtime, screen_text, submit, until

from piagents.testing import Reply, ToolCall
from piagents.tui.app import PiAgentsApp
from piagents.tui.viewer import ViewerScreen


def spawn(*names):
    return Reply(
        tool_calls=[
            ToolCall("agent", {"action": "spawn", "name": n, "message": f"Task of {n}."})
            for n in names
        ]
    )


@pytest.fixture
def tree_app(home, work, tmp_path, monkeypatch, script, gate, seeded_ids):
    """A root whose Agents w and v run, while w's own Agent sub waits for a slot."""
    monkeypatch.setenv("HOME", str(tmp_path))

    def root(call):
        if call.messages[-1].role == "toolResult":
            return "I started **w** and **v**; they are working."
        return spawn("w", "v")

    def w(call):
        if call.messages[-1].role == "toolResult":
            return gate.handler(call)
        return spawn("sub")

    script.on(None, root)
    script.on("w", w)
    script.on("*", gate.handler)
    # A clock that stands still: the progress line's spinner and time stay as they are.
    return make_app(home, work, script, clock=lambda: 0, maxConcurrent=2, maxOutstanding=8)


async def start_tree(pilot) -> None:
    app = pilot.app
    await until(pilot, lambda: app.root is not None, what="the root")
    await submit(pilot, "Split the work between two Agents.")
    await until(pilot, lambda: len(app.task_panel.lines) == 4, what="the panel's three rows")
    await until(pilot, lambda: not app.root.loop.busy, what="the root's answer")
    await until(pilot, lambda: "queued" in app.task_panel.lines[2], what="sub to queue")
    await pilot.pause()  # the last refresh renders: the pilot waits until the app is idle


def test_the_main_screen_with_a_running_tree(tree_app, snap_compare):
    assert snap_compare(tree_app, terminal_size=(100, 30), run_before=start_tree)


def test_the_main_screen_in_a_narrow_terminal(tree_app, snap_compare):
    assert snap_compare(tree_app, terminal_size=(60, 24), run_before=start_tree)


def test_the_agent_viewer(tree_app, snap_compare):
    async def open_w(pilot):
        await start_tree(pilot)
        app = pilot.app
        w = next(a for a in app.runtime.agents.values() if a.name == "w")
        app.open_viewer(w.id)
        await until(pilot, lambda: isinstance(app.screen, ViewerScreen), what="the viewer")
        await until(pilot, lambda: "Task of w." in screen_text(app), what="w's input")
        await pilot.pause()  # the last refresh renders: the pilot waits until the app is idle

    assert snap_compare(tree_app, terminal_size=(100, 30), run_before=open_w)


def test_the_main_screen_of_a_lead_with_managed_agents(
    home, work, tmp_path, monkeypatch, script, gate, seeded_ids, snap_compare
):
    """The supervision status widget: a generalist and a reviewer with its own scout."""
    monkeypatch.setenv("HOME", str(tmp_path))
    started_at: list[int] = []  # elapsed times are read from this fixed clock

    def clock() -> int:
        return started_at[0] + 83_400 if started_at else 0

    def reviewer(call):
        if call.messages[-1].role == "toolResult":
            return gate.handler(call)
        args = {"action": "delegate", "definition": "scout", "task": "Find the tests."}
        return Reply(tool_calls=[ToolCall("agent", args)])

    script.on(None, lambda call: "Two agents are on it.")
    script.on("reviewer-1", reviewer)
    script.on("*", gate.handler)
    rt = runtime(home, script, spawnPlacement="inline")
    app = PiAgentsApp(rt, lambda r: r.open_root(cwd=work, agent_api="supervision"), clock=clock)

    async def delegate_two(pilot) -> None:
        await until(pilot, lambda: app.root is not None, what="the lead")
        await submit(pilot, "Start two agents.")
        await until(pilot, lambda: "Two agents are on it." in screen_text(app), what="answer")
        for definition, task in (("generalist", "Survey the code."), ("reviewer", "Review it.")):
            args = {"action": "delegate", "definition": definition, "task": task}
            assert not (await app.root.call_tool("agent", args)).is_error
        await until(pilot, lambda: len(gate.started) == 3, what="three agents working")
        status = app.supervision_status
        await until(pilot, lambda: "3 working" in "".join(status.lines[:1]), what="the widget")
        started_at.append(min(g.created for g in rt.store.generations(root_id=app.root.id)))
        app.refresh_supervision()
        await pilot.pause()  # the last refresh renders: the pilot waits until the app is idle

    assert snap_compare(app, terminal_size=(100, 30), run_before=delegate_two)


def test_the_main_screen_with_wait_results_and_a_working_model(
    home, work, tmp_path, monkeypatch, script, gate, seeded_ids, snap_compare
):
    """A wait's results as blocks, then the progress line of the next turn."""
    monkeypatch.setenv("HOME", str(tmp_path))

    def root(call):
        calls = [
            c.args["action"] for m in call.messages if m.role == "assistant" for c in m.tool_calls
        ]
        if "spawn" not in calls:
            return spawn("poet", "chef")
        if "wait" not in calls:
            return Reply(tool_calls=[ToolCall("agent", {"action": "wait"})])
        if call.messages[-1].role == "user" and call.messages[-1].text == "Thanks.":
            return gate.handler(call)
        return "Both answered."

    script.on(None, root)
    script.on("poet", lambda call: "Waves fold on sand,\nsalt wind hums.")
    script.on("chef", lambda call: "**Pasta**, risotto\nand pizza.")
    app = make_app(home, work, script, clock=lambda: 0)

    async def ask(pilot) -> None:
        await until(pilot, lambda: app.root is not None, what="the root")
        await submit(pilot, "Ask them.")
        await until(pilot, lambda: "Both answered." in screen_text(app), what="the answer")
        await until(pilot, lambda: not app.root.loop.busy, what="the end of the run")
        await submit(pilot, "Thanks.")
        await until(pilot, lambda: None in gate.started, what="the next turn")
        await until(pilot, lambda: "Waiting for the model" in app.progress.text, what="the line")
        await pilot.pause()  # the last refresh renders: the pilot waits until the app is idle

    assert snap_compare(app, terminal_size=(100, 40), run_before=ask)
    gate.release(None)


def test_the_main_screen_with_running_background_programs(
    home, work, tmp_path, monkeypatch, script, gate, seeded_ids, snap_compare
):
    """A Program with no live Agent, and one whose Agent runs, under the root."""
    import piagents
    from piagents.testing import FunctionModel

    monkeypatch.setenv("HOME", str(tmp_path))
    made = iter(["0190abcd-0000-7000-8000-000000000000", "0190beef-0000-7000-8000-000000000000"])
    monkeypatch.setattr("piagents.programs.runner.new_program_id", lambda: next(made))
    script.on("tests", gate.handler)
    rt = piagents.Runtime(home=home, model=FunctionModel(script), tools=["+program"])
    app = PiAgentsApp(rt, lambda r: r.open_root(cwd=work), clock=lambda: 0)
    sends = 'return await agent(name="tests").send("run the tests")'

    async def start_programs(pilot):
        await until(pilot, lambda: app.root is not None, what="the root")
        for code in ("while True:\n    pass", sends):
            start = {"action": "run", "code": code, "background": True}
            assert not (await app.root.call_tool("program", start)).is_error
        await until(pilot, lambda: len(app.task_panel.lines) == 4, what="the panel's rows")
        await pilot.pause()  # the last refresh renders: the pilot waits until the app is idle

    assert snap_compare(app, terminal_size=(100, 30), run_before=start_programs)
