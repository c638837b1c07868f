"""/agents and the agent viewer, driven headlessly with Pilot and the faux model."""

from __future__ import annotations

import msgspec
from tui_support import make_app, screen_text, started, submit, type_text, until, user_texts

from piagents.agents.listing import unwrap
from piagents.agents.mailbox import poke
from piagents.ai.messages import AssistantMessage, TextContent, UserMessage
from piagents.harness.session import Session
from piagents.store.records import GenerationRecord, SessionRecord
from piagents.supervision import placement
from piagents.testing import Reply, ToolCall
from piagents.tui.agent_list import (
    AgentListScreen,
    agent_entries,
    entry_text,
    owners_label,
    tree_entries,
)
from piagents.tui.viewer import ViewerScreen


def root_spawning(*names):
    def route(call):
        last = call.messages[-1]
        if last.role == "toolResult":
            return "spawned"
        if last.role == "user" and last.text == "spawn":
            return Reply(
                tool_calls=[
                    ToolCall("agent", {"action": "spawn", "name": n, "message": f"task of {n}"})
                    for n in names
                ]
            )
        return "root reply"

    return route


def spawning_child(name, gate):
    """An owned Agent that spawns `name` on its first turn, then waits on its gate."""

    def route(call):
        if call.messages[-1].role == "toolResult":
            return gate.handler(call)
        return Reply(
            tool_calls=[
                ToolCall("agent", {"action": "spawn", "name": name, "message": f"task of {name}"})
            ]
        )

    return route


def record(id, name, owner=None, created=0):
    return SessionRecord(id=id, cwd="/", name=name, owner_id=owner, root_id="r", created=created)


def agent_named(app, name):
    return next(a for a in app.runtime.agents.values() if a.name == name)


async def open_viewer(pilot, name):
    app = pilot.app
    await submit(pilot, "/agents")
    await until(pilot, lambda: isinstance(app.screen, AgentListScreen), what="the list")
    screen = app.screen
    await until(pilot, lambda: any(e.label.startswith(name) for e in screen.entries))
    index = next(i for i, e in enumerate(screen.entries) if e.label.split(" ")[0] == name)
    for _ in range(index):
        await pilot.press("down")
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(app.screen, ViewerScreen), what="the viewer")
    return app.screen


# ---- the list (pure) ---------------------------------------------------------------


def test_busy_agents_come_first_and_newest_first_within_each_group():
    records = [
        record("a", "old-busy", "r", 1),
        record("b", "new-idle", "r", 4),
        record("c", "new-busy", "r", 3),
        record("d", "old-idle", "r", 2),
    ]
    states = {"a": "running", "b": "idle", "c": "waiting", "d": "idle"}

    entries = agent_entries(records, "r", states, {}, {"a": "first  input\nof a"})

    assert [e.label for e in entries] == ["new-busy", "old-busy", "new-idle", "old-idle"]
    assert entries[1].first_input == "first input of a"
    assert entries[1].state == "running"


def test_an_agent_run_by_another_process_says_which_one():
    records = [record("a", "here", "r", 1), record("b", "managed", "r", 2)]
    where = {"b": "worker 1a2b3c4d on box2"}

    entries = agent_entries(records, "r", {}, {}, {}, None, where)

    assert [(e.label, e.where) for e in entries] == [
        ("managed", "worker 1a2b3c4d on box2"),
        ("here", ""),
    ]
    assert entry_text(entries[0]).plain == "managed (b)  idle  in worker 1a2b3c4d on box2"
    assert entry_text(entries[1]).plain == "here (a)  idle"


def test_agents_not_owned_by_the_current_one_are_named_with_their_owners():
    records = {
        r.id: r for r in (record("w", "w", "root"), record("s", "sub", "w"), record("x", "x", "s"))
    }

    assert owners_label(records["w"], records, "root") == "w"
    assert owners_label(records["s"], records, "root") == "sub ‹ w"
    assert owners_label(records["x"], records, "root") == "x ‹ sub ‹ w"
    assert owners_label(records["x"], records, "w") == "x ‹ sub"


def test_a_programs_agents_are_named_with_their_program_as_owner():
    program_id = "0190abcd-1234-7000-8000-000000000000"
    tests = SessionRecord(
        id="t", cwd="/", name="tests", owner_id="w", root_id="r", meta={"program": program_id}
    )
    records = {r.id: r for r in (record("w", "w", "root"), tests, record("s", "sub", "t"))}

    assert owners_label(records["t"], records, "w") == "tests ‹ Program 0190abcd"
    assert owners_label(records["s"], records, "w") == "sub ‹ tests ‹ Program 0190abcd"
    assert owners_label(records["s"], records, "root") == "sub ‹ tests ‹ Program 0190abcd ‹ w"
    assert owners_label(records["s"], records, "t") == "sub"
    shorts = {program_id: "0190abcd-1"}  # its caller has another Program 0190abcd-0…
    assert (
        owners_label(records["s"], records, "root", shorts)
        == "sub ‹ tests ‹ Program 0190abcd-1 ‹ w"
    )


# ---- the list on screen ------------------------------------------------------------


async def test_slash_agents_lists_the_tree_with_states_first_inputs_and_owners(
    home, work, script, gate
):
    script.on(None, root_spawning("w", "v"))
    script.on("w", spawning_child("sub", gate))
    script.on("v", lambda call: "v done")
    script.on("sub", gate.handler)
    app = make_app(home, work, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await submit(pilot, "spawn")
        await until(pilot, lambda: "sub" in gate.started and "w" in gate.started)
        await until(
            pilot, lambda: app.runtime.coordinator.state_of(agent_named(app, "v").id) == "idle"
        )
        await submit(pilot, "/agents")
        await until(pilot, lambda: isinstance(app.screen, AgentListScreen), what="the list")
        screen = app.screen
        await until(pilot, lambda: len(screen.entries) == 3, what="three entries")
        assert [(e.label, e.state) for e in screen.entries] == [
            ("sub ‹ w", "running"),
            ("w", "running"),
            ("v", "idle"),
        ]
        assert [e.first_input for e in screen.entries] == ["task of sub", "task of w", "task of v"]
        text = screen_text(app)
        assert "sub ‹ w (" in text and "task of sub" in text
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, AgentListScreen))
        gate.release("sub")
        gate.release("w")


# ---- the viewer --------------------------------------------------------------------


async def test_the_viewer_shows_the_agents_conversation_live(home, work, script, gate):
    script.on(None, root_spawning("w"))
    script.on("w", gate.handler)
    app = make_app(home, work, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await submit(pilot, "spawn")
        await until(pilot, lambda: "w" in gate.started, what="w to start")
        viewer = await open_viewer(pilot, "w")
        await until(pilot, lambda: "task of w" in screen_text(app), what="w's input")
        assert "Agent w (" in screen_text(app) and "running" in screen_text(app)
        gate.release("w")
        await until(pilot, lambda: "w finished" in screen_text(app), what="w's answer, live")
        await until(pilot, lambda: "idle" in screen_text(app).splitlines()[0], what="idle")
        assert viewer.transcript.agent is agent_named(app, "w")


async def test_text_typed_in_the_viewer_is_the_users_own_input_to_that_agent(home, work, script):
    script.on(None, root_spawning("w"))
    script.on("w", lambda call: f"w got {unwrap(user_texts(call)[-1])}")
    app = make_app(home, work, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await submit(pilot, "spawn")
        await until(pilot, lambda: app.runtime.agents and len(app.runtime.agents) == 2)
        w = agent_named(app, "w")
        await until(pilot, lambda: not app.runtime.coordinator.tree_has_live_work(app.root.id))
        await open_viewer(pilot, "w")
        await submit(pilot, "hello w")
        await until(pilot, lambda: "w got hello w" in screen_text(app), what="w's answer")
        last = [i for i in app.runtime.store.inputs(recipient_ids=[w.id]) if i.text == "hello w"]
        assert last[0].sender_id is None and not last[0].has_result
        assert user_texts(script.calls[-1])[-1] == "hello w"  # no sender header


async def test_the_interrupt_key_in_the_viewer_aborts_the_agents_turn(home, work, script, gate):
    script.on(None, root_spawning("w"))
    script.on("w", gate.handler)
    app = make_app(home, work, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await submit(pilot, "spawn")
        await until(pilot, lambda: "w" in gate.started, what="w to start")
        w = agent_named(app, "w")
        await open_viewer(pilot, "w")
        await type_text(pilot, "draft")
        await pilot.press("escape")
        await until(pilot, lambda: not w.loop.busy, what="w's turn to stop")
        assert app.runtime.coordinator.state_of(w.id) == "idle"
        assert isinstance(app.screen, ViewerScreen)
        assert app.screen.editor.text == "draft"
        await until(pilot, lambda: "Interrupted." in screen_text(app))


async def test_the_clear_key_clears_the_input_then_closes_the_viewer(home, work, script, gate):
    script.on(None, root_spawning("w"))
    script.on("w", gate.handler)
    app = make_app(home, work, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await submit(pilot, "spawn")
        await until(pilot, lambda: "w" in gate.started, what="w to start")
        viewer = await open_viewer(pilot, "w")
        await type_text(pilot, "draft")
        await pilot.press("ctrl+c")
        assert viewer.editor.text == ""
        assert app.screen is viewer
        await pilot.press("ctrl+c")
        await until(pilot, lambda: app.screen is not viewer, what="the viewer to close")
        assert app.is_running
        assert agent_named(app, "w").loop.busy
        gate.release("w")


async def test_the_current_session_keeps_running_behind_the_viewer(home, work, script, gate):
    def root(call):
        last = call.messages[-1]
        if last.role == "user" and last.text == "spawn":
            return root_spawning("w")(call)
        if last.role == "user" and last.text == "block":
            return gate.handler(call)
        return "root reply"

    script.on(None, root)
    script.on("w", lambda call: "w done")
    app = make_app(home, work, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await submit(pilot, "spawn")
        await until(pilot, lambda: not app.runtime.coordinator.tree_has_live_work(app.root.id))
        await submit(pilot, "block")
        await until(pilot, lambda: None in gate.started, what="the root's turn")
        viewer = await open_viewer(pilot, "w")
        gate.release(None)
        await until(pilot, lambda: not app.root.loop.busy, what="the root's turn to end")
        await pilot.press("ctrl+c")
        await until(pilot, lambda: app.screen is not viewer, what="the main screen")
        await until(pilot, lambda: "None finished" in screen_text(app), what="the root's answer")


async def test_the_viewer_of_an_offline_agent_shows_its_history_and_wakes_it_on_input(
    home, work, script
):
    script.on(None, root_spawning("w"))
    script.on("w", lambda call: f"w got {unwrap(user_texts(call)[-1])}")
    app = make_app(home, work, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await submit(pilot, "spawn")
        await until(pilot, lambda: len(app.runtime.agents) == 2)
        w = agent_named(app, "w")
        await until(pilot, lambda: not app.runtime.coordinator.tree_has_live_work(app.root.id))
        await app.runtime.unload(w)
        viewer = await open_viewer(pilot, "w")
        await until(pilot, lambda: "w got task of w" in screen_text(app), what="the history")
        assert viewer.agent is None
        await submit(pilot, "wake up")
        await until(pilot, lambda: "w got wake up" in screen_text(app), what="the woken answer")
        assert viewer.agent is not None


def run_elsewhere(app, work) -> Session:
    """An owned Agent's session that another process (a worker) runs: not loaded here."""
    root = app.root.session.record
    session = Session.create(
        app.runtime.store,
        cwd=str(work),
        model="faux/x",
        name="far",
        owner_id=root.id,
        root_id=root.id,
    )
    session.append_message(UserMessage.of("first task"))
    return session


async def test_the_viewer_follows_what_an_agent_run_elsewhere_commits(home, work, script):
    # A managed agent's worker is another process: it commits to the store and pokes
    # this runtime, which the viewer hears as a change.
    script.on(None, lambda call: "root reply")
    app = make_app(home, work, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        elsewhere = run_elsewhere(app, work)
        viewer = ViewerScreen(app.model, app.root, elsewhere.id)
        await app.push_screen(viewer)
        await until(pilot, lambda: "first task" in screen_text(app), what="the history")
        elsewhere.append_message(AssistantMessage((TextContent("working on it"),)))
        assert await poke(app.runtime.holder.token)  # as the worker does after committing
        await until(pilot, lambda: "working on it" in screen_text(app), what="the new entry")
        assert screen_text(app).count("first task") == 1  # only what is new was added
        assert viewer.agent is None


async def test_the_viewer_shows_the_live_output_of_an_agent_working_elsewhere(home, work, script):
    script.on(None, lambda call: "root reply")
    app = make_app(home, work, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        root = app.root.session.record
        store = app.runtime.store
        elsewhere = run_elsewhere(app, work)
        g = GenerationRecord(
            id="g1",
            label="far",
            definition="generalist",
            root_id=root.id,
            owner_id=root.id,
            session_id=elsewhere.id,
            cwd=str(work),
            task="first task",
            placement="process",
            state="working",
            pid=999999,
        )
        store.add_generation(g)
        output = "\n".join(f"line {i}" for i in range(10)) + "\nhalf a sentence so f"
        placement.write_evidence(store, "g1", {"recent_output": output})
        viewer = ViewerScreen(app.model, app.root, elsewhere.id)
        await app.push_screen(viewer)
        live = viewer.query_one("#viewer-live")
        await until(pilot, lambda: "half a sentence so f" in screen_text(app), what="live")
        assert str(live.render()).splitlines() == [
            "line 5",
            "line 6",
            "line 7",
            "line 8",
            "line 9",
            "half a sentence so f",
        ]
        ended = msgspec.structs.replace(g, state="ended", outcome="completed", ended=1)
        assert store.update_generation(ended, end=True)
        await until(pilot, lambda: not live.display, what="the live output to go")


# ---- the viewer's keys and its hint -------------------------------------------------------


def reading_child(gate):
    """An owned Agent that reads a long file, then waits on its gate."""

    def route(call):
        if call.messages[-1].role == "toolResult":
            return gate.handler(call)
        return Reply(tool_calls=[ToolCall("read", {"path": "long.txt"})])

    return route


async def test_the_hint_names_each_key_the_viewer_binds():
    from piagents.tui.viewer import HINT, KEYS

    assert " · ".join(f"{key} {what}" for key, what in KEYS) == HINT
    for key in ("Enter", "Alt+Enter", "Shift+Enter", "Esc", "Ctrl+C", "PgUp/PgDn", "Ctrl+O"):
        assert key in dict(KEYS)


async def test_ctrl_o_and_the_page_keys_act_on_the_viewers_conversation(home, work, script, gate):
    (work / "long.txt").write_text("\n".join(f"line {i}" for i in range(60)))
    script.on(None, root_spawning("w"))
    script.on("w", reading_child(gate))
    app = make_app(home, work, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await submit(pilot, "spawn")
        await until(pilot, lambda: "w" in gate.started, what="w to read and wait")
        viewer = await open_viewer(pilot, "w")
        await until(pilot, lambda: "more lines" in screen_text(app), what="w's folded result")
        await pilot.press("ctrl+o")
        await until(pilot, lambda: viewer.transcript.expanded, what="the viewer to unfold")
        assert not app.transcript.expanded
        viewer.transcript.scroll_end(animate=False)
        await until(pilot, lambda: "line 59" in screen_text(app), what="the end of the result")
        bottom = viewer.transcript.scroll_y
        assert bottom > 0
        await pilot.press("pageup")
        await until(pilot, lambda: viewer.transcript.scroll_y < bottom, what="a page up")
        await pilot.press("pagedown")
        await until(pilot, lambda: viewer.transcript.scroll_y == bottom, what="a page down")
        gate.release("w")


async def test_alt_enter_in_the_viewer_sends_a_follow_up_for_after_the_turn(
    home, work, script, gate
):
    script.on(None, root_spawning("w"))
    script.on("w", gate.handler)
    app = make_app(home, work, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await submit(pilot, "spawn")
        await until(pilot, lambda: "w" in gate.started, what="w to start")
        w = agent_named(app, "w")
        await open_viewer(pilot, "w")
        await submit(pilot, "later", key="alt+enter")
        await until(pilot, lambda: w.loop.queued_inputs(), what="the input to queue")
        assert [(i.text, i.delivery) for i in w.loop.queued_inputs()] == [("later", "followUp")]
        gate.release("w")


async def test_the_page_keys_page_the_agent_list_instead_of_the_hidden_transcript(
    home, work, script, gate
):
    script.on(None, root_spawning(*(f"a{i}" for i in range(12))))
    script.on("*", gate.handler)
    app = make_app(home, work, script, maxConcurrent=12, maxOutstanding=12)
    async with app.run_test(size=(100, 20)) as pilot:
        await started(pilot)
        await submit(pilot, "spawn")
        await until(pilot, lambda: len(gate.started) == 12, what="the twelve to start")
        await submit(pilot, "/agents")
        await until(pilot, lambda: isinstance(app.screen, AgentListScreen), what="the list")
        options = app.screen.query_one("OptionList")
        await until(pilot, lambda: options.option_count == 12, what="the rows")
        assert options.highlighted == 0
        await pilot.press("pagedown")
        await until(pilot, lambda: (options.highlighted or 0) > 1, what="a page down")
        for i in range(12):
            gate.release(f"a{i}")


# ---- a Program's Agents ------------------------------------------------------------


PROGRAM_SENDS = """
a = agent(name="tests")
try:
    return await a.send("run the tests")
except ToolError as e:
    return "send raised: " + str(e)
"""


async def test_the_viewer_talks_to_a_programs_agent_and_interrupting_it_makes_send_raise(
    home, work, script, gate, monkeypatch
):
    import piagents
    from piagents.programs.addressing import short_ids
    from piagents.tui.app import PiAgentsApp

    made = iter(f"0190abcd-0000-7000-8000-00000000000{n}" for n in range(9))
    monkeypatch.setattr("piagents.programs.runner.new_program_id", lambda: next(made))
    script.on("tests", gate.handler)
    rt = piagents.Runtime(
        home=home, model=piagents.testing.FunctionModel(script), tools=["+program"]
    )
    app = PiAgentsApp(rt, lambda r: r.open_root(cwd=work))
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        root = app.root
        first = await root.call_tool("program", {"action": "run", "code": "return 1"})
        start = {"action": "run", "code": PROGRAM_SENDS, "background": True}
        program_id = (await root.call_tool("program", start)).details["id"]
        await until(pilot, lambda: "tests" in gate.started, what="the Program's Agent to start")
        short = short_ids([first.details["id"], program_id])[program_id]
        await until(
            pilot,
            lambda: f"  Program {short}  running" in app.task_panel.lines,
            what="the Program's row",
        )
        labels = [e.label for e in tree_entries(rt.read_model, root)]
        assert labels == [f"tests ‹ Program {short}"]  # /agents lists it
        viewer = await open_viewer(pilot, "tests")
        tests = agent_named(app, "tests")
        await until(pilot, lambda: f"tests ‹ Program {short} (" in screen_text(app))
        await type_text(pilot, "and lint")
        await pilot.press("enter")  # a steer: its turn is running
        await until(
            pilot,
            lambda: [i.text for i in rt.store.inputs(recipient_ids=[tests.id])][-1] == "and lint",
            what="the user's input to the Program's Agent",
        )
        await pilot.press("escape")
        await until(pilot, lambda: rt.store.get_program(program_id).state != "running")
        assert app.screen is viewer
        await until(pilot, lambda: viewer.editor.text == "and lint", what="the steer taken back")
        ended = rt.store.get_program(program_id)
    assert short == program_id  # its caller's other Program shares all but the last character
    assert ended.state == "completed"
    assert "send raised: Agent tests's input was aborted." in ended.result
