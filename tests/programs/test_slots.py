"""An owned caller gives up its slot while its foreground Program runs and while it
waits for its background Programs, and takes one again before it continues."""

from program_support import Script, runtime

from piagents.testing import Reply, ToolCall
from support import until

HOLD = "while [ ! -f go ]; do sleep 0.02; done"  # ends when the test makes the file


def program_call(**args):
    return Reply(tool_calls=[ToolCall("program", args)])


async def spawn(root, name):
    res = await root.call_tool("agent", {"action": "spawn", "name": name, "message": "go"})
    assert not res.is_error, res.text


async def check_slot_given_up(home, work, first_reply, second_reply=None):
    script = Script()
    turns = []
    b_saw_go = []

    def a_turn(call):
        turns.append(len(call.messages))
        if len(turns) == 1:
            return first_reply
        if len(turns) == 2 and second_reply is not None:
            return second_reply
        return "a done"

    script.on("a", a_turn)
    script.on("b", lambda call: b_saw_go.append((work / "go").exists()) or "b done")
    script.on(None, lambda call: "root")
    async with runtime(home, script, settings={"pi-agents": {"maxConcurrent": 1}}) as rt:
        root = await rt.open_root(cwd=work)
        await spawn(root, "a")
        await until(
            lambda: rt.coordinator.marks.get(a_id(rt)) and a_marks(rt).gave_up_slot,
            "a gave up its slot",
        )
        await spawn(root, "b")  # the one slot is free: b runs while a's Program does
        await until(lambda: b_saw_go, "b ran while a's Program held")
        (work / "go").write_text("")
        await until(lambda: "a done" in results(rt, "a"))
    assert b_saw_go == [False]


def a_id(rt):
    return next(a.id for a in rt.agents.values() if a.name == "a")


def a_marks(rt):
    return rt.coordinator.marks[a_id(rt)]


def results(rt, name):
    agent = next(a for a in rt.agents.values() if a.name == name)
    return [r.result for r in rt.store.inputs(recipient_ids=[agent.id], outstanding=False)]


async def test_an_owned_caller_gives_up_its_slot_while_its_foreground_program_runs(home, work):
    code = f"await tools.bash(command={HOLD!r})"
    await check_slot_given_up(home, work, program_call(action="run", code=code))


async def test_an_owned_caller_gives_up_its_slot_while_it_waits_for_its_programs(home, work):
    code = f"await tools.bash(command={HOLD!r})"
    await check_slot_given_up(
        home,
        work,
        program_call(action="run", code=code, background=True),
        program_call(action="wait", timeout=60),
    )
