"""SDK Program scopes are Program records (programs/scopes.py): running from `async with`
to their one end (completed, failed, stopped), announced as scripts are, stopped when
their caller goes offline or the runtime closes, reopened `stopped` after kill -9; the
`program` tool never shows them, and the task panel shows an open one."""

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from program_support import program, run, runtime, shorts

from piagents.events import ProgramChanged
from piagents.programs.sdk import ProgramScopeSession
from piagents.tui.task_panel import take_snapshot
from piagents.tui.task_rows import task_rows
from support import Gate, until

HERE = Path(__file__).parent


def announcements(rt):
    seen = []

    def on_event(event):  # with what the store holds when it is announced
        if isinstance(event, ProgramChanged):
            recorded = rt.store.get_program(event.program_id)
            seen.append((event.program_id, event.kind, event.state, recorded.state))

    rt.subscribe(on_event)
    return seen


async def test_a_scope_is_recorded_running_while_open_and_completed_after(home, work):
    async with runtime(home) as rt:
        seen = announcements(rt)
        root = await rt.open_root(cwd=work)
        async with root.program() as p:
            inside = rt.store.get_program(p.id)
            assert rt.programs.running(root.id)  # work that keeps its caller loaded
        after = rt.store.get_program(p.id)
        still_running = rt.programs.running(root.id)
    assert (inside.kind, inside.state, inside.caller_id, inside.root_id) == (
        "scope",
        "running",
        root.id,
        root.id,
    )
    assert (after.state, after.reason, after.result, after.returned) == (
        "completed",
        None,
        None,
        True,
    )
    assert after.ended is not None and after.ended >= after.created > 0
    assert not still_running
    assert seen == [
        (p.id, "scope", "running", "running"),
        (p.id, "scope", "completed", "completed"),
    ]


async def test_a_scope_whose_body_raises_is_recorded_failed_with_the_error(home, work):
    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)
        with pytest.raises(ValueError):
            async with root.program() as p:
                raise ValueError("no such file")
        record = rt.store.get_program(p.id)
    assert (record.state, record.reason) == (
        "failed",
        "the scope's code raised ValueError: no such file",
    )


async def test_a_cancelled_scope_is_recorded_stopped(home, work):
    opened = asyncio.Event()
    ids = []

    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)

        async def body():
            async with root.program() as p:
                ids.append(p.id)
                opened.set()
                await asyncio.Event().wait()

        task = asyncio.create_task(body())
        await opened.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        record = rt.store.get_program(ids[0])
    assert (record.state, record.reason) == ("stopped", "the scope's code was cancelled.")


async def test_a_scope_stops_when_its_caller_goes_offline_and_its_exit_changes_nothing(home, work):
    gate = Gate()
    async with runtime(home, gate.handler) as rt:
        seen = announcements(rt)
        root = await rt.open_root(cwd=work)
        async with root.program() as p:
            h = p.agent(name="counter")
            send = asyncio.create_task(h.send("count"))
            await until(lambda: gate.started, "the Agent's turn to start")
            await rt.unload(root)
            stopped = rt.store.get_program(p.id)
            agent_gone = h.id not in rt.agents
            with pytest.raises(Exception, match="aborted"):
                await send
        after = rt.store.get_program(p.id)
    assert (stopped.state, stopped.reason) == ("stopped", "its caller went offline.")
    assert agent_gone
    assert after == stopped  # leaving the scope later records nothing new
    assert [s for _, _, s, _ in seen] == ["running", "stopped"]


async def test_closing_the_runtime_stops_an_open_scope(home, work):
    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)
        session = root.program()
        p = await session.__aenter__()
        root_id = root.id
    async with runtime(home) as rt:
        record = rt.store.get_program(p.id)
        await rt.open_root(session=root_id)
        again = rt.store.get_program(p.id)
    await session.__aexit__(None, None, None)  # the runtime is gone: nothing to record
    assert (record.state, record.reason) == ("stopped", "the runtime closed.")
    assert again == record


async def test_a_scope_open_in_a_process_killed_with_kill_9_reopens_stopped(home, work, tmp_path):
    ready = tmp_path / "ready"
    env = {**os.environ, "PYTHONPATH": f"{HERE}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "program_peer.py"), str(home), str(work), str(ready), "scope"],
        env=env,
        stdin=subprocess.DEVNULL,
    )
    try:
        await until(ready.exists)
    finally:
        proc.kill()  # SIGKILL: no cleanup at all
        proc.wait(timeout=20)
    root_id, scope_id = ready.read_text().split()
    async with runtime(home) as rt:
        left = rt.store.get_program(scope_id)
        seen = announcements(rt)
        root = await rt.open_root(session=root_id)
        record = rt.store.get_program(scope_id)
        listed = await program(root, action="list")
    assert (left.kind, left.state) == ("scope", "running")  # as the process left it
    reason = "the process that ran it ended before the Program did."
    assert (record.state, record.reason) == ("stopped", reason)
    assert seen == [(scope_id, "scope", "stopped", "stopped")]
    assert listed.text == "No Programs."


async def test_the_program_tool_never_shows_scopes_in_list_wait_stop_or_short_ids(home, work):
    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)
        async with root.program() as ended_scope:
            pass
        async with root.program() as p:
            assert (await program(root, action="list")).text == "No Programs."
            assert (await program(root, action="wait")).text == "No results."
            for action in ("wait", "stop"):
                refused = await program(root, action=action, target=p.id)
                assert refused.is_error
                assert refused.text == f'No Program matches "{p.id}". Use list to find Programs.'
            script = (await run(root, "return 1", background=True)).details["id"]
            # A scope whose ID shares the script's first 30 characters: it would make the
            # script's short ID 31 characters long if it counted.
            near = ProgramScopeSession(
                rt.programs.agents,
                root,
                program_id=script[:30] + "f" * 6,
                records=rt.programs.scopes,
            )
            async with near:
                await until(lambda: rt.store.get_program(script).state == "completed")
                listed = await program(root, action="list")
                waited = await program(root, action="wait")
            short = shorts(rt, root)[script]
        kinds = {x.id: x.kind for x in rt.store.programs(root.id)}
    assert short == script[:8]
    assert listed.text == f"{short}  completed"
    assert waited.text.startswith("Script completed\n") and waited.text.endswith("Output:\n1")
    assert kinds == {
        ended_scope.id: "scope",
        p.id: "scope",
        near.id: "scope",
        script: "script",
    }


async def test_a_scopes_agents_read_its_messages_as_from_the_scope(home, work):
    def route(call):
        return [m for m in call.messages if m.role == "user"][-1].text

    async with runtime(home, route) as rt:
        root = await rt.open_root(cwd=work, name="boss")
        async with root.program() as p:
            heard = await p.agent(name="w").send("hello")
            short = rt.read_model.running_programs(root)[0].short_id
    assert heard == f'<agent-message from="Program" id="{short}">\nhello\n</agent-message>'


async def test_an_open_scope_has_a_panel_row_with_no_live_agent_until_it_ends(home, work):
    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)
        async with root.program() as p:
            entries = rt.read_model.running_programs(root)
            rows = task_rows(take_snapshot(rt.read_model, root))
        after = task_rows(take_snapshot(rt.read_model, root))
    assert [(e.id, e.kind, e.background) for e in entries] == [(p.id, "scope", False)]
    assert rows == ["Tasks (1 live, /tasks to view)", f"  Program {p.id[:8]}  running"]
    assert after == []
