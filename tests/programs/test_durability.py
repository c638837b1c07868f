"""Programs are records: closing the runtime or the caller going offline stops the
running ones (recorded with why), and a process killed with kill -9 leaves records
that reopen as `stopped`, never `running`."""

import os
import subprocess
import sys
from pathlib import Path

from program_support import program, run, runtime, shorts

from piagents.events import ProgramChanged
from support import until

HERE = Path(__file__).parent
BUSY = "while True:\n    pass"


async def test_closing_the_runtime_stops_running_programs_and_their_results_remain(home, work):
    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)
        done = (await run(root, "return 'kept'", background=True)).details["id"]
        await until(lambda: rt.store.get_program(done).state == "completed")
        busy = (await run(root, BUSY, background=True)).details["id"]
        root_id = root.id
    async with runtime(home) as rt:
        root = await rt.open_root(session=root_id)
        record = rt.store.get_program(busy)
        short = shorts(rt, root)
        listed = await program(root, action="list")
        waited = await program(root, action="wait")
    assert (record.state, record.reason) == ("stopped", "the runtime closed.")
    assert listed.text == f"{short[busy]}  stopped\n{short[done]}  completed"
    assert f'<program-result id="{short[done]}" status="completed">' in waited.text
    assert "Script aborted: the runtime closed." in waited.text


async def test_a_caller_going_offline_stops_its_programs(home, work):
    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)
        busy = (await run(root, BUSY, background=True)).details["id"]
        await rt.unload(root)
        record = rt.store.get_program(busy)
        assert busy not in rt.programs.live
    assert (record.state, record.reason) == ("stopped", "its caller went offline.")
    assert "Script aborted: its caller went offline." in record.result


async def test_a_process_killed_during_a_background_program_reopens_it_stopped(
    home, work, tmp_path
):
    ready = tmp_path / "ready"
    env = {**os.environ, "PYTHONPATH": f"{HERE}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "program_peer.py"), str(home), str(work), str(ready)],
        env=env,
        stdin=subprocess.DEVNULL,
    )
    try:
        await until(ready.exists)
    finally:
        proc.kill()  # SIGKILL: no cleanup at all
        proc.wait(timeout=20)
    root_id, program_id = ready.read_text().split()
    async with runtime(home) as rt:
        assert rt.store.get_program(program_id).state == "running"  # as the process left it
        announced = []

        def on_event(e):  # with what the store holds when it is announced
            if isinstance(e, ProgramChanged):
                announced.append((e.program_id, e.state, rt.store.get_program(e.program_id).state))

        rt.subscribe(on_event)
        root = await rt.open_root(session=root_id)
        record = rt.store.get_program(program_id)
        short = shorts(rt, root)[program_id]
        waited = await program(root, action="wait", target=short)
    reason = "the process that ran it ended before the Program did."
    assert (record.state, record.reason) == ("stopped", reason)
    assert announced == [(program_id, "stopped", "stopped")]
    assert waited.text == (
        f'<program-result id="{short}" status="stopped">\n'
        "Script failed\nWall time 0.0 seconds\nOutput:\n\nScript error:\n"
        f"Script aborted: {reason}\n\nNo tool calls were made.\n</program-result>"
    )


async def test_a_woken_root_stays_loaded_while_its_background_program_runs(home, work):
    from program_support import Script, user_texts

    from piagents.testing import Reply, ToolCall

    script = Script()
    heard = []
    hold = "while [ ! -f go ]; do sleep 0.02; done"
    start = {"action": "run", "code": f"await tools.bash(command={hold!r})", "background": True}

    def sleeper(call):
        heard.append(user_texts(call)[-1])
        if len(heard) == 1 and not any(m.role == "toolResult" for m in call.messages):
            return Reply(tool_calls=[ToolCall("program", start)])
        return "ok"

    script.on("sleeper", sleeper)
    script.on(None, lambda call: "caller turn")
    async with runtime(home, script) as rt:
        sid = (await rt.open_root(cwd=work, name="sleeper")).id
    async with runtime(home, script) as rt:
        caller = await rt.open_root(cwd=work, name="caller")
        message = {"action": "send", "target": "sleeper", "message": "wake up"}
        assert not (await caller.call_tool("agent", message)).is_error
        await until(lambda: rt.programs.running(sid), "the woken root's Program runs")
        await until(lambda: rt.coordinator.state_of(sid) == "idle", "its turn ended")
        loaded_while_running = sid in rt.agents
        (work / "go").write_text("")
        await until(lambda: sid not in rt.agents, "unloaded once its Program ended")
        program = rt.store.programs(sid)[0]
    assert loaded_while_running
    assert program.state == "completed"
    assert heard[-1].startswith("Program ") and heard[-1].endswith(" completed.")
