"""A supervision lead's status widget and /agents sections, driven with Pilot."""

from __future__ import annotations

import json

import pytest
from tui_support import runtime, screen_text, started, submit, type_text, until

from piagents.harness.session import Session
from piagents.store.records import GenerationRecord
from piagents.testing import Reply, ToolCall
from piagents.tui.app import PiAgentsApp
from piagents.tui.supervision_screen import SupervisionScreen
from piagents.tui.viewer import ViewerScreen


def lead_app(home, work, script, clock=None) -> PiAgentsApp:
    rt = runtime(home, script, spawnPlacement="inline")
    opener = lambda r: r.open_root(cwd=work, agent_api="supervision")  # noqa: E731
    if clock is None:
        return PiAgentsApp(rt, opener)
    return PiAgentsApp(rt, opener, clock=clock)


async def delegate(app, task="Look around.", definition="generalist"):
    result = await app.root.call_tool(
        "agent", {"action": "delegate", "definition": definition, "task": task}
    )
    assert not result.is_error, result.text
    return result.details["agent"]


async def press(pilot, button):
    """Enter on a focused button, once it can be pressed again (a button ignores presses
    while it shows the last one, about 0.2 s)."""
    await until(pilot, lambda: not button.has_class("-active"), what="the button")
    await pilot.press("enter")


def live_labels(app):
    return [g.label for g in app.runtime.store.generations(root_id=app.root.id, live=True)]


async def open_section(pilot, section):
    app = pilot.app
    await submit(pilot, "/agents")
    await until(pilot, lambda: isinstance(app.screen, SupervisionScreen), what="/agents")
    screen = app.screen
    screen.query_one("TabbedContent").active = section
    await pilot.pause()
    return screen


@pytest.fixture
def managed(script, gate):
    """Managed agents work until their gate opens; the lead answers plainly."""
    script.on(None, lambda call: "lead reply")
    script.on("*", gate.handler)
    return script


# ---- the status widget ------------------------------------------------------------------


async def test_the_status_widget_shows_a_leads_working_agents_with_markers(
    home, work, managed, gate
):
    app = lead_app(home, work, managed)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        status = app.supervision_status
        assert not status.display
        await delegate(app)
        await until(pilot, lambda: "generalist-1" in gate.started, what="the agent to work")
        await until(pilot, lambda: "1 working" in "".join(status.lines), what="the widget")
        assert status.display
        assert status.lines[0] == "Agents: 1 working (/agents to manage)"
        row = status.lines[1]
        assert row.startswith("● generalist-1  ")
        assert "faux/function · off · " in row and "/128k " in row
        assert not app.task_panel.display  # the lead's agents show here, not in the panel
        assert "● generalist-1" in screen_text(app)
        gate.release("generalist-1")
        await until(pilot, lambda: not live_labels(app), what="the result")
        await until(pilot, lambda: not status.display, what="the widget to hide")


async def test_an_agent_waiting_on_its_question_is_blocked_and_tasks_hides_the_widget(
    home, work, script
):
    script.on(None, lambda call: "lead reply")

    def asking(call):
        if call.messages[-1].role == "toolResult":
            return "answered"
        return Reply(tool_calls=[ToolCall("ask_owner", {"question": "Which branch?"})])

    script.on("generalist-1", asking)
    app = lead_app(home, work, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        status = app.supervision_status
        await delegate(app)
        await until(pilot, lambda: "1 blocked" in "".join(status.lines), what="blocked")
        assert status.lines[1].startswith("◐ generalist-1  ")
        await submit(pilot, "/tasks")
        await until(pilot, lambda: not status.display, what="/tasks to hide it")
        await submit(pilot, "/tasks")
        await until(pilot, lambda: status.display, what="/tasks to show it")


# ---- /agents: Running -------------------------------------------------------------------


async def test_running_lists_the_managed_agents_and_enter_focuses_one(home, work, managed, gate):
    app = lead_app(home, work, managed)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await delegate(app, "Task one.")
        await delegate(app, "Task two.")
        await until(pilot, lambda: len(gate.started) == 2, what="both agents")
        screen = await open_section(pilot, "running")
        await until(pilot, lambda: len(screen.running) == 2, what="two rows")
        assert screen.running[0].startswith("● generalist-1  ")
        assert screen.running[0].endswith("  working")
        assert screen.running[1].startswith("● generalist-2  ")
        await pilot.press("down", "enter")
        await until(pilot, lambda: isinstance(app.screen, ViewerScreen), what="the viewer")
        session = next(
            g.session_id
            for g in app.runtime.store.generations(root_id=app.root.id)
            if g.label == "generalist-2"
        )
        assert app.screen.agent_id == session
        await until(pilot, lambda: "Task two." in screen_text(app), what="its task")
        gate.release("generalist-1")
        gate.release("generalist-2")


# ---- /agents: Definitions ---------------------------------------------------------------


def definition_index(screen, name):
    options = screen.query_one("#definition-list")
    return next(i for i in range(options.option_count) if options.get_option_at_index(i).id == name)


async def highlight(pilot, screen, name):
    options = screen.query_one("#definition-list")
    options.focus()
    options.highlighted = definition_index(screen, name)
    await pilot.pause()


def row_of(screen, name):
    options = screen.query_one("#definition-list")
    return str(options.get_option_at_index(definition_index(screen, name)).prompt)


async def test_definitions_toggle_and_set_model_and_thinking_in_the_global_layer(
    home, work, managed
):
    app = lead_app(home, work, managed)
    async with app.run_test(size=(110, 32)) as pilot:
        await started(pilot)
        screen = await open_section(pilot, "definitions")
        assert row_of(screen, "generalist").startswith("[x] generalist  model default")
        await highlight(pilot, screen, "generalist")
        await pilot.press("enter")
        await until(pilot, lambda: row_of(screen, "generalist").startswith("[ ] generalist"))
        written = (home / "agents" / "generalist.md").read_text()
        assert "enabled: false" in written
        assert not screen.message_is_error and "generalist: disabled" in screen.message

        await pilot.press("m")
        await type_text(pilot, "faux/other")
        await pilot.press("enter")
        await until(pilot, lambda: "model faux/other" in row_of(screen, "generalist"))
        await pilot.press("t")
        await type_text(pilot, "high")
        await pilot.press("enter")
        await until(pilot, lambda: "thinking high" in row_of(screen, "generalist"))
        assert row_of(screen, "generalist") == (
            "[ ] generalist  model faux/other · thinking high  global  disabled"
        )
        await pilot.press("enter")  # enabled again, the other values kept
        await until(pilot, lambda: row_of(screen, "generalist").startswith("[x] generalist"))
        written = (home / "agents" / "generalist.md").read_text()
        assert "enabled: true" in written and "thinking: high" in written


async def test_definitions_show_the_errors_of_refused_writes(home, work, managed):
    app = lead_app(home, work, managed)
    async with app.run_test(size=(110, 32)) as pilot:
        await started(pilot)
        screen = await open_section(pilot, "definitions")
        await highlight(pilot, screen, "scout")
        await pilot.press("enter")  # reviewer delegates to scout
        await until(pilot, lambda: screen.message_is_error, what="the refusal")
        assert "'scout' cannot be disabled while reviewer may delegate to it" in screen.message
        assert row_of(screen, "scout").startswith("[x] scout")
        assert not (home / "agents" / "scout.md").exists()

        await pilot.press("t")
        await type_text(pilot, "ultra")
        await pilot.press("enter")
        await until(pilot, lambda: "thinking" in screen.message, what="the bad level")
        assert screen.message_is_error and "scout.md" in screen.message
        assert not (home / "agents" / "scout.md").exists()
        assert "scout.md" in screen_text(app)


# ---- /agents: Context retirement and Message limits ------------------------------------


async def test_context_retirement_writes_settings_keeping_the_other_keys(home, work, managed):
    (home / "settings.json").write_text(json.dumps({"theme": "dark", "pi-agents": {"x": 1}}))
    app = lead_app(home, work, managed)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        assert app.runtime.settings.agents.context_retirement
        screen = await open_section(pilot, "retirement")
        switch = screen.query_one("#retirement-switch")
        assert switch.value
        switch.focus()
        await pilot.press("enter")
        await until(pilot, lambda: "Context retirement off" in screen.message)
        saved = json.loads((home / "settings.json").read_text())
        assert saved == {"theme": "dark", "pi-agents": {"x": 1, "contextRetirement": False}}
        assert not app.runtime.settings.agents.context_retirement


async def test_a_broken_settings_file_is_not_overwritten(home, work, managed):
    app = lead_app(home, work, managed)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        (home / "settings.json").write_text('{"theme": ')
        screen = await open_section(pilot, "retirement")
        switch = screen.query_one("#retirement-switch")
        switch.focus()
        await pilot.press("enter")
        await until(pilot, lambda: screen.message_is_error, what="the error")
        assert "invalid JSON at line 1" in screen.message
        assert (home / "settings.json").read_text() == '{"theme": '
        assert switch.value  # back as it was
        assert app.runtime.settings.agents.context_retirement


async def test_message_limits_are_written_within_their_range(home, work, managed):
    app = lead_app(home, work, managed)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        screen = await open_section(pilot, "limits")
        box = screen.query_one("#mailboxPayloadLimitBytes")
        assert box.value == "131072"
        box.focus()
        box.value = ""
        await type_text(pilot, "512")
        await pilot.press("enter")
        await until(pilot, lambda: screen.message_is_error, what="the range error")
        assert screen.message == (
            "pi-agents.mailboxPayloadLimitBytes: expected an integer from 1024 to 1048576, got 512"
        )
        assert not (home / "settings.json").exists()
        box.value = ""
        await type_text(pilot, "4096")
        await pilot.press("enter")
        await until(pilot, lambda: screen.message == "mailboxPayloadLimitBytes = 4096.")
        saved = json.loads((home / "settings.json").read_text())
        assert saved == {"pi-agents": {"mailboxPayloadLimitBytes": 4096}}
        assert app.runtime.settings.agents.mailbox_payload_limit_bytes == 4096
        inline = screen.query_one("#inlineAttachmentLimitBytes")
        inline.focus()
        inline.value = ""
        await type_text(pilot, "2048")
        await pilot.press("enter")
        agents = lambda: app.runtime.settings.agents  # noqa: E731
        await until(pilot, lambda: agents().inline_attachment_limit_bytes == 2048)
        saved = json.loads((home / "settings.json").read_text())
        assert saved["pi-agents"] == {
            "mailboxPayloadLimitBytes": 4096,
            "inlineAttachmentLimitBytes": 2048,
        }


# ---- /agents: Stop all ------------------------------------------------------------------


async def test_stop_all_is_cancelled_by_moving_away_and_says_when_nothing_runs(
    home, work, managed, gate
):
    app = lead_app(home, work, managed)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        screen = await open_section(pilot, "stop")
        button = screen.query_one("#stop-all")
        button.focus()
        await press(pilot, button)
        assert screen.message == "No managed agent to stop."
        await delegate(app, "One.")
        await until(pilot, lambda: len(gate.started) == 1, what="the agent")
        await press(pilot, button)
        assert str(button.label) == "Confirm: stop 1"
        await pilot.press("shift+tab")
        await until(pilot, lambda: screen.message == "Stop all cancelled.", what="cancel")
        assert str(button.label) == "Stop all"
        button.focus()
        await press(pilot, button)
        assert screen.message.startswith("Press again to close 1: generalist-1")
        assert live_labels(app) == ["generalist-1"]


async def test_stop_all_closes_every_managed_agent_of_the_lead(home, work, managed, gate):
    app = lead_app(home, work, managed)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await delegate(app, "One.")
        await delegate(app, "Two.")
        await until(pilot, lambda: len(gate.started) == 2, what="both agents")
        screen = await open_section(pilot, "stop")
        button = screen.query_one("#stop-all")
        button.focus()
        await press(pilot, button)
        assert screen.message == (
            "Press again to close 2: generalist-1, generalist-2 (and their own agents). "
            "Move away to cancel."
        )
        assert len(live_labels(app)) == 2  # asked first, nothing closed yet
        await press(pilot, button)
        await until(pilot, lambda: screen.message.startswith("Stopped"), what="Stop all")
        assert screen.message == "Stopped 2: generalist-1, generalist-2."
        assert live_labels(app) == []
        outcomes = {g.outcome for g in app.runtime.store.generations(root_id=app.root.id)}
        assert outcomes == {"closed"}
        await until(pilot, lambda: screen.running == [], what="Running to empty")
        await pilot.press("escape")
        await until(pilot, lambda: not app.supervision_status.display, what="the widget")


def recorded(app, label, state, model="openai/gpt-5", thinking="high"):
    """A generation of another runtime, recorded as `state`, with its saved session."""
    lead = app.root
    session = Session.create(
        app.runtime.store,
        cwd=lead.cwd,
        model=model,
        thinking=thinking,
        name=label,
        owner_id=lead.id,
        root_id=lead.id,
        meta={"managed": {"definition": "generalist", "label": label}},
    )
    app.runtime.store.add_generation(
        GenerationRecord(
            id=f"request-{label}",
            label=label,
            definition="generalist",
            root_id=lead.id,
            owner_id=lead.id,
            session_id=session.id,
            cwd=lead.cwd,
            task="Old work.",
            placement="process",
            state=state,
        )
    )


async def test_lost_and_unknown_agents_are_marked_and_stop_all_reports_what_it_cannot_close(
    home, work, managed
):
    app = lead_app(home, work, managed)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        recorded(app, "old-1", "lost")
        recorded(app, "old-2", "unknown")
        app.refresh_supervision()
        status = app.supervision_status
        await until(pilot, lambda: status.display, what="the widget")
        assert status.lines[0] == "Agents: 1 unknown · 1 lost (/agents to manage)"
        assert status.lines[1].startswith("× old-1  ")
        assert status.lines[1].endswith("  openai/gpt-5 · high · ?")
        assert status.lines[2].startswith("? old-2  ")
        screen = await open_section(pilot, "stop")
        button = screen.query_one("#stop-all")
        button.focus()
        await press(pilot, button)
        await press(pilot, button)
        await until(pilot, lambda: screen.message.startswith("Stopped"), what="Stop all")
        assert screen.message_is_error
        assert screen.message == (
            "Stopped 1: old-1. Not stopped: old-2: close is not available for old-2 "
            "while it is unknown."
        )
        assert live_labels(app) == ["old-2"]


async def test_elapsed_times_tick_once_a_second_from_the_clock(home, work, managed, gate):
    now = [0]
    app = lead_app(home, work, managed, clock=lambda: now[0])
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await delegate(app)
        await until(pilot, lambda: "generalist-1" in gate.started, what="the agent to work")
        created = app.runtime.store.generations(root_id=app.root.id)[0].created
        now[0] = created + 5_000
        status = app.supervision_status
        await until(pilot, lambda: "generalist-1  5s  " in "".join(status.lines), what="5s")
        now[0] = created + 125_000  # no runtime event: only the timer repaints
        await until(pilot, lambda: "generalist-1  2m05s  " in "".join(status.lines), what="2m")
        gate.release("generalist-1")


async def test_definitions_that_cannot_be_discovered_show_the_error(home, work, managed):
    (home / "agents").mkdir()
    (home / "agents" / "broken.md").write_text("---\nname: broken\ncolour: red\n---\nBody.\n")
    app = lead_app(home, work, managed)
    async with app.run_test(size=(110, 32)) as pilot:
        await started(pilot)
        screen = await open_section(pilot, "definitions")
        problems = screen.query_one("#definition-problems")
        assert problems.has_class("-error")
        assert "broken.md" in str(problems.render()) and "colour" in str(problems.render())
        options = screen.query_one("#definition-list")
        assert str(options.get_option_at_index(0).prompt) == "The definitions cannot be read."
