"""The main screen, driven headlessly with Pilot and the faux model."""

from __future__ import annotations

import json

from tui_support import (
    StreamingModel,
    make_app,
    runtime,
    screen_text,
    started,
    submit,
    type_text,
    until,
    user_texts,
)

import piagents
from piagents.testing import FunctionModel, Reply, ToolCall
from piagents.tui.app import PiAgentsApp
from piagents.tui.blocks import AgentMessageBlock, AssistantBlock, ToolBlock, UserBlock
from support import settled


def spawn(name, message="go"):
    return Reply(
        tool_calls=[ToolCall("agent", {"action": "spawn", "name": name, "message": message})]
    )


def spawn_then_answer(*names, answer="spawned"):
    """A root route: the first input spawns `names`, tool results get `answer`, else echo."""

    def route(call):
        last = call.messages[-1]
        if last.role == "toolResult":
            return answer
        if last.role == "user" and last.text == "spawn":
            return Reply(
                tool_calls=[
                    ToolCall("agent", {"action": "spawn", "name": n, "message": f"task {n}"})
                    for n in names
                ]
            )
        return f"echo: {last.text[:40]}"

    return route


# ---- transcript and editor ---------------------------------------------------------


async def test_an_answer_streams_into_the_transcript_as_markdown_with_thinking_dimmed(home, work):
    def route(call):
        return [
            ("thinking", "Let me think"),
            ("thinking", " about it."),
            ("pause", 0.05),
            ("text", "# Title\n\nSome "),
            ("pause", 0.05),
            ("text", "**bold** text."),
        ]

    app = make_app(home, work, StreamingModel(route))
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await submit(pilot, "hello")
        await until(pilot, lambda: "bold text." in screen_text(app), what="the answer")
        text = screen_text(app)
        assert "hello" in text
        assert "Let me think about it." in text
        assert "Title" in text
        answer = app.query_one(AssistantBlock)
        assert answer.text == "# Title\n\nSome **bold** text."
        thinking = answer.query_one(".thinking")
        assert thinking.styles.text_style.italic


async def test_enter_sends_a_steer_while_a_turn_runs_and_alt_enter_a_follow_up(
    home, work, script, gate
):
    script.on(None, gate.handler)
    app = make_app(home, work, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await submit(pilot, "first")
        await until(pilot, lambda: app.root.loop.in_turn, what="the turn")
        await submit(pilot, "steer me")
        await submit(pilot, "later", key="alt+enter")
        await until(pilot, lambda: len(app.root.loop.queued_inputs()) == 2, what="two queued")
        deliveries = [(i.text, i.delivery) for i in app.root.loop.queued_inputs()]
        assert deliveries == [("steer me", "steer"), ("later", "followUp")]
        await until(pilot, lambda: "Steer: steer me" in screen_text(app), what="queued lines")
        assert "Follow-up: later" in screen_text(app)
        gate.release(None)
        await until(pilot, lambda: not app.root.loop.busy, what="the turns to end")
        assert user_texts(script.calls[-1])[-1] == "later"


async def test_enter_sends_a_follow_up_when_no_turn_runs(home, work, script):
    app = make_app(home, work, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await submit(pilot, "hello there")
        await until(pilot, lambda: "root done" in screen_text(app), what="the answer")
        assert app.editor.text == ""
        assert isinstance(app.transcript.children[0], UserBlock)


async def test_escape_aborts_the_turn_and_puts_queued_messages_back_in_the_editor(
    home, work, script, gate
):
    script.on(None, gate.handler)
    app = make_app(home, work, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await submit(pilot, "first")
        await until(pilot, lambda: app.root.loop.in_turn, what="the turn")
        await submit(pilot, "one more")
        await submit(pilot, "and another", key="alt+enter")
        await until(pilot, lambda: len(app.root.loop.queued_inputs()) == 2, what="queued")
        await pilot.press("escape")
        await until(pilot, lambda: not app.root.loop.busy, what="the abort")
        await until(pilot, lambda: app.editor.text != "", what="the editor to refill")
        assert app.editor.text == "one more\n\nand another"
        await until(pilot, lambda: "(aborted)" in screen_text(app), what="the aborted mark")


async def test_shift_enter_and_ctrl_j_break_lines_instead_of_sending(home, work, script):
    app = make_app(home, work, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await type_text(pilot, "one")
        await pilot.press("shift+enter")
        await type_text(pilot, "two")
        await pilot.press("ctrl+j")
        await type_text(pilot, "three")
        assert app.editor.text == "one\ntwo\nthree"
        await pilot.press("enter")
        await until(pilot, lambda: script.calls, what="the model call")
        assert user_texts(script.calls[0]) == ["one\ntwo\nthree"]


async def test_ctrl_c_clears_the_editor_and_twice_on_an_empty_editor_quits(home, work, script):
    app = make_app(home, work, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await type_text(pilot, "draft")
        await pilot.press("ctrl+c")
        assert app.editor.text == ""
        await pilot.press("ctrl+c")
        assert app.is_running
        await pilot.press("ctrl+c")
        await until(pilot, lambda: not app.is_running, what="the app to exit")
    assert app.return_value == 0


async def test_tool_calls_show_their_arguments_and_long_results_fold_until_expanded(
    home, work, script
):
    (work / "long.txt").write_text("\n".join(f"line {i}" for i in range(40)))

    def root(call):
        if call.messages[-1].role == "toolResult":
            return "read it"
        return Reply(tool_calls=[ToolCall("read", {"path": "long.txt"})])

    script.on(None, root)
    app = make_app(home, work, script)
    async with app.run_test(size=(100, 40)) as pilot:
        await started(pilot)
        await submit(pilot, "read the file")
        await until(pilot, lambda: "read it" in screen_text(app), what="the answer")
        block = app.query_one(ToolBlock)
        text = screen_text(app)
        assert "read  long.txt" in text
        assert "line 7" in text and "line 8" not in text
        assert "32 more lines" in text
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert block.expanded
        app.transcript.scroll_end(animate=False)
        await until(pilot, lambda: "line 39" in screen_text(app), what="the unfolded result")
        app.transcript.scroll_to_widget(block, animate=False, top=True)
        await pilot.pause()
        await pilot.click(ToolBlock, offset=(2, 0))
        assert not block.expanded


async def test_messages_from_other_agents_show_their_senders_name_and_short_id(
    home, work, script, gate
):
    script.on(None, spawn_then_answer("w"))
    script.on("w", gate.handler)
    app = make_app(home, work, script)
    async with app.run_test(size=(100, 40)) as pilot:
        await started(pilot)
        await submit(pilot, "spawn")
        await until(pilot, lambda: "w" in gate.started, what="w to start")
        gate.release("w")
        await until(pilot, lambda: app.query(AgentMessageBlock), what="the notification")
        child = next(a for a in app.runtime.agents.values() if a.name == "w")
        short = app.runtime.coordinator.short_map(app.root.session.record)[child.id]
        await until(pilot, lambda: f"From w ({short})" in screen_text(app), what="the sender")
        # The notice's text is painted after its header: wait for it, not for a frame.
        await until(
            pilot, lambda: f"Agent w ({short}) completed." in screen_text(app), what="the notice"
        )


async def test_the_footer_shows_cwd_session_name_model_thinking_tokens_cost_and_context(
    home, work, script, monkeypatch
):
    monkeypatch.setenv("HOME", str(work.parent))
    app = make_app(home, work, script)
    async with app.run_test(size=(120, 30)) as pilot:
        await started(pilot)
        footer = screen_text(app).splitlines()[-2:]
        assert footer[0].startswith(" ~/work")
        assert "↑0 ↓0 $0.000 0.0%/128k" in footer[1]
        assert footer[1].endswith("faux/function • off")


# ---- task panel ----------------------------------------------------------------------


async def test_the_task_panel_appears_when_an_owned_agent_starts_and_disappears_when_idle(
    home, work, script, gate
):
    script.on(None, spawn_then_answer("w"))
    script.on("w", gate.handler)
    app = make_app(home, work, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        assert not app.task_panel.display
        await submit(pilot, "spawn")
        await until(pilot, lambda: app.task_panel.display, what="the panel")
        child = next(a for a in app.runtime.agents.values() if a.name == "w")
        short = app.runtime.coordinator.short_map(app.root.session.record)[child.id]
        assert app.task_panel.lines == (
            "Tasks (1 live, /tasks to view)",
            f"  Agent w ({short})  running",
        )
        assert "Tasks (1 live, /tasks to view)" in screen_text(app)
        gate.release("w")
        await until(
            pilot,
            lambda: not app.runtime.coordinator.tree_has_live_work(app.root.id),
            what="the tree to go idle",
        )
        await until(pilot, lambda: not app.task_panel.display, what="the panel to hide")
        assert "Tasks (" not in screen_text(app)


async def test_the_task_panel_shows_the_tree_with_states_and_queued_counts(
    home, work, script, gate
):
    def w(call):
        if call.messages[-1].role == "toolResult":
            return gate.handler(call)
        return spawn("sub")

    script.on(None, spawn_then_answer("w", "v"))
    script.on("w", w)
    script.on("v", gate.handler)
    script.on("sub", gate.handler)
    app = make_app(home, work, script, maxConcurrent=2, maxOutstanding=8)
    async with app.run_test(size=(100, 40)) as pilot:
        await started(pilot)
        await submit(pilot, "spawn")
        await until(pilot, lambda: len(app.runtime.agents) == 4, what="three owned agents")
        agents = {a.name: a for a in app.runtime.agents.values()}
        await until(pilot, lambda: "Agent sub" in "\n".join(app.task_panel.lines), what="sub")
        app.runtime.coordinator.user_input(agents["sub"], "again")
        app.runtime.coordinator.user_input(agents["sub"], "and again")
        shorts = app.runtime.coordinator.short_map(app.root.session.record)
        expected = (
            "Tasks (3 live, /tasks to view)",
            f"  Agent w ({shorts[agents['w'].id]})  running",
            f"    Agent sub ({shorts[agents['sub'].id]})  queued  2 queued",
            f"  Agent v ({shorts[agents['v'].id]})  running",
        )
        await until(pilot, lambda: app.task_panel.lines == expected, what=str(expected))
        for line in expected:
            assert line in screen_text(app)
        for name in ("w", "v", "sub"):
            gate.release(name)
        await until(pilot, lambda: not app.task_panel.display, what="the panel to hide")


async def test_slash_tasks_hides_and_shows_the_task_panel(home, work, script, gate):
    script.on(None, spawn_then_answer("w"))
    script.on("w", gate.handler)
    app = make_app(home, work, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await submit(pilot, "spawn")
        await until(pilot, lambda: app.task_panel.display, what="the panel")
        await submit(pilot, "/tasks")
        await until(pilot, lambda: not app.task_panel.display, what="the panel to hide")
        assert "Tasks (" not in screen_text(app)
        await submit(pilot, "/tasks")
        await until(pilot, lambda: app.task_panel.display, what="the panel to show")
        assert "Tasks (1 live, /tasks to view)" in screen_text(app)
        gate.release("w")


async def test_the_task_panel_counts_the_rows_that_do_not_fit(home, work, script, gate):
    names = [f"w{i}" for i in range(8)]
    script.on(None, spawn_then_answer(*names))
    script.on("*", gate.handler)
    app = make_app(home, work, script, maxConcurrent=8, maxOutstanding=8)
    async with app.run_test(size=(100, 24)) as pilot:
        await started(pilot)
        await submit(pilot, "spawn")
        await until(pilot, lambda: len(gate.started) == 8, what="eight agents")
        rows = app.panel_rows()
        await until(pilot, lambda: app.task_panel.lines[-1:] == (f"  +{8 - rows + 1} more",))
        assert app.task_panel.lines[0] == "Tasks (8 live, /tasks to view)"
        assert len(app.task_panel.lines) == rows + 1
        for name in names:
            gate.release(name)


# ---- slash commands --------------------------------------------------------------------


async def test_slash_commands_complete_with_tab_and_the_arrow_keys(home, work, script):
    app = make_app(home, work, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await type_text(pilot, "/t")
        assert app.completion_list.display
        labels = [str(app.completion_list.get_option_at_index(i).prompt) for i in range(2)]
        assert labels[0].startswith("/thinking <level>")
        assert labels[1].startswith("/tasks")
        await pilot.press("down", "tab")
        assert app.editor.text == "/tasks"
        await pilot.press("ctrl+c")
        await type_text(pilot, "/thinking h")
        await pilot.press("tab")
        assert app.editor.text == "/thinking high"
        assert not app.completion_list.display
        await pilot.press("enter")
        await until(pilot, lambda: app.root.thinking == "high", what="the level")


async def test_escape_closes_the_completions_without_aborting(home, work, script):
    app = make_app(home, work, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await type_text(pilot, "/mo")
        assert app.completion_list.display
        await pilot.press("escape")
        assert not app.completion_list.display
        assert app.editor.text == "/mo"


async def test_slash_model_and_slash_thinking_change_the_session_and_the_footer(home, work, script):
    app = make_app(home, work, script)
    async with app.run_test(size=(120, 30)) as pilot:
        await started(pilot)
        await submit(pilot, "/model faux/other")
        await until(pilot, lambda: str(app.root.model) == "faux/other", what="the model")
        await pilot.press("escape")
        await submit(pilot, "/thinking medium")
        await until(pilot, lambda: app.root.thinking == "medium", what="the level")
        await until(pilot, lambda: "faux/other • medium" in screen_text(app), what="the footer")
        await submit(pilot, "/thinking loud")
        await until(pilot, lambda: "unknown thinking level 'loud'" in screen_text(app))
        assert app.runtime.store.get_session(app.root.id).thinking == "medium"


async def test_slash_name_names_the_session_and_the_footer_shows_it(home, work, script):
    app = make_app(home, work, script)
    async with app.run_test(size=(120, 30)) as pilot:
        await started(pilot)
        await submit(pilot, "/name refactor")
        await until(pilot, lambda: app.root.name == "refactor", what="the name")
        await until(pilot, lambda: "work • refactor" in screen_text(app), what="the footer")


async def test_slash_new_starts_a_session_and_slash_resume_picks_the_old_one(home, work, script):
    app = make_app(home, work, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        first = app.root
        await submit(pilot, "remember this")
        await until(pilot, lambda: "root done" in screen_text(app), what="the answer")
        await submit(pilot, "/new")
        await until(pilot, lambda: app.root is not first, what="a new root")
        await until(pilot, lambda: "remember this" not in screen_text(app), what="a clean view")
        assert first.id not in app.runtime.agents
        await submit(pilot, "/resume")
        await until(pilot, lambda: "remember this" in screen_text(app), what="the picker")
        await pilot.press("enter")
        await until(pilot, lambda: app.root.id == first.id, what="the old session")
        await until(pilot, lambda: "root done" in screen_text(app), what="its transcript")


async def test_slash_compact_summarises_the_conversation(home, work, script):
    def route(call):
        return "A summary." if "<conversation>" in call.messages[-1].text else "ok " * 20

    script.on(None, route)
    rt = piagents.Runtime(
        home=home,
        model=FunctionModel(script),
        settings={"compaction": {"keepRecentTokens": 1}},
    )
    app = PiAgentsApp(rt, lambda r: r.open_root(cwd=work))
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        for text in ("one", "two"):
            await submit(pilot, text)
            await until(pilot, lambda: not app.root.loop.busy and script.calls, what="a turn")
        await until(pilot, lambda: len(script.calls) == 2)
        await submit(pilot, "/compact")
        await until(pilot, lambda: "Context compacted (" in screen_text(app), what="compaction")


async def test_slash_export_writes_the_session_as_jsonl(home, work, script):
    app = make_app(home, work, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await submit(pilot, "hello")
        await until(pilot, lambda: "root done" in screen_text(app), what="the answer")
        await submit(pilot, "/export out.jsonl")
        await until(pilot, lambda: (work / "out.jsonl").exists(), what="the file")
        lines = [json.loads(x) for x in (work / "out.jsonl").read_text().splitlines()]
        assert lines[0]["type"] == "session" and lines[0]["id"] == app.root.id
        assert "Exported" in screen_text(app)


async def test_slash_help_lists_the_commands_and_unknown_commands_are_reported(home, work, script):
    app = make_app(home, work, script)
    async with app.run_test(size=(100, 50)) as pilot:
        await started(pilot)
        await submit(pilot, "/help")
        await until(pilot, lambda: "/resume" in screen_text(app), what="the help")
        await pilot.press("escape")
        await submit(pilot, "/frobnicate")
        await until(pilot, lambda: "Unknown command /frobnicate" in screen_text(app))
        assert script.calls == []


async def test_slash_quit_exits_and_takes_the_agents_offline(home, work, script, gate):
    script.on(None, spawn_then_answer("w"))
    script.on("w", gate.handler)
    app = make_app(home, work, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await submit(pilot, "spawn")
        await until(pilot, lambda: "w" in gate.started, what="w to start")
        await submit(pilot, "/quit")
        await until(pilot, lambda: not app.is_running, what="the app to exit")
    assert app.return_value == 0
    assert app.runtime.agents == {}


async def test_starting_on_a_session_in_use_shows_the_ownership_error_then_exits(
    home, work, script
):
    async with runtime(home, script) as holder:
        taken = await holder.open_root(cwd=work)
        rt = runtime(home, script)
        app = PiAgentsApp(rt, lambda r: r.open_root(session=taken.id))
        async with app.run_test(size=(100, 30)) as pilot:
            await until(pilot, lambda: "in use by another" in screen_text(app), what="the error")
            await pilot.pause()  # idle: whatever the app would do by itself is done
            assert app.is_running
            assert "Session in use" in screen_text(app)
            await pilot.press("enter")
            await until(pilot, lambda: not app.is_running, what="the app to exit")
        assert app.return_value == 1
        assert holder.store.lease_of(taken.id) is not None


async def test_the_ui_keeps_up_with_a_long_streamed_answer(home, work):
    lines = [f"Line {i} of a long answer." for i in range(300)]

    def route(call):
        return [("text", line + "\n\n") for line in lines]

    app = make_app(home, work, StreamingModel(route))
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await submit(pilot, "go")
        await until(pilot, lambda: not app.root.loop.busy, what="the stream")
        await until(pilot, lambda: "Line 299 of a long answer." in screen_text(app))
        block = app.query_one(AssistantBlock)
        assert block.text == "".join(line + "\n\n" for line in lines)


async def test_piagents_runtime_is_closed_when_the_test_leaves_without_quitting(home, work, script):
    app = make_app(home, work, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        root = app.root
    assert root.id not in app.runtime.agents
    assert isinstance(app.runtime, piagents.Runtime)
    await settled()
