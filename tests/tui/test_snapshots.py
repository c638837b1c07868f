"""SVG snapshots of the UI (pytest-textual-snapshot); update with `--snapshot-update`."""

from __future__ import annotations

import pytest
from tui_support import make_app, screen_text, submit, until

from piagents.testing import Reply, ToolCall
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
    return make_app(home, work, script, maxConcurrent=2, maxOutstanding=8)


async def start_tree(pilot) -> None:
    app = pilot.app
    await until(pilot, lambda: app.root is not None, what="the root")
    await submit(pilot, "Split the work between two Agents.")
    await until(pilot, lambda: len(app.task_panel.lines) == 4, what="the panel's three rows")
    await until(pilot, lambda: not app.root.loop.busy, what="the root's answer")
    await until(pilot, lambda: "queued" in app.task_panel.lines[2], what="sub to queue")
    await pilot.pause(0.1)


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
        await pilot.pause(0.1)

    assert snap_compare(tree_app, terminal_size=(100, 30), run_before=open_w)
