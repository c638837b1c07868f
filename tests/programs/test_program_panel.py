"""Programs as front ends see them: the read model's running Programs of a tree, each
by its short ID among its caller's Programs, and the task panel's rows for them, also
while they have no live Agent."""

from program_support import Script, program, run, runtime, shorts

from piagents.testing import Reply, ToolCall
from piagents.tui.task_panel import take_snapshot
from piagents.tui.task_rows import task_rows
from support import until

BUSY = "while True:\n    pass"


def panel(rt, root):
    return task_rows(take_snapshot(rt.read_model, root))


async def test_running_background_programs_show_under_their_callers_with_no_live_agent(home, work):
    script = Script()
    start = {"action": "run", "code": BUSY, "background": True}
    script.on(
        "w",
        lambda call: (
            "w done"
            if any(m.role == "toolResult" for m in call.messages)
            else Reply(tool_calls=[ToolCall("program", start)])
        ),
    )
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        mine = (await run(root, BUSY, background=True)).details["id"]
        done = (await run(root, "return 1")).details["id"]
        spawn = {"action": "spawn", "name": "w", "message": "start one"}
        assert not (await root.call_tool("agent", spawn)).is_error
        assert (await root.call_tool("agent", {"action": "wait"})).text.endswith("w done")
        w = next(a for a in rt.agents.values() if a.name == "w")
        theirs = rt.store.programs(w.id)[0].id
        entries = rt.read_model.running_programs(root)
        rows = panel(rt, root)
        w_short = rt.read_model.roster(root)[0].short_id
        await program(root, action="stop", target=mine)
        await program(w, action="stop", target=theirs)
        await until(lambda: panel(rt, root) == [], "the panel to lose the stopped Programs")
        root_shorts, w_shorts = shorts(rt, root), shorts(rt, w)
    assert [(e.id, e.caller_id, e.background) for e in entries] == [
        (mine, root.id, True),
        (theirs, w.id, True),
    ]
    assert [e.short_id for e in entries] == [root_shorts[mine], w_shorts[theirs]]
    assert done not in [e.id for e in entries]
    assert rows == [
        "Tasks (2 live, /tasks to view)",
        f"  Agent w ({w_short})  idle",
        f"    Program {entries[1].short_id}  running",
        f"  Program {entries[0].short_id}  running",
    ]
