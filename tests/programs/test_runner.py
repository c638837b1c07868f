"""One runner per runtime: the sandbox's workers start with the first Program and end
when the runtime closes; Programs are records from their start to their one end."""

from program_support import run, runtime

from piagents.programs.sandbox import _worker_processes


async def test_the_sandboxs_workers_start_with_the_first_program_and_end_with_the_runtime(
    home, work
):
    before = _worker_processes()
    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)
        idle = _worker_processes() - before
        await run(root, "return 1")
        serving = _worker_processes() - before
    assert idle == set()
    assert serving != set()
    assert _worker_processes() - before == set()


async def test_a_program_is_recorded_running_at_its_start_and_ended_once(home, work):
    seen = []
    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)
        rt.store.add_program = record_add(rt.store.add_program, seen)
        res = await run(root, "return 'v'")
        record = rt.store.get_program(res.details["id"])
        ended_again = rt.store.end_program(record)
    assert [(p.state, p.code) for p in seen] == [("running", "return 'v'")]
    assert (record.state, record.reason, record.returned) == ("completed", None, True)
    assert record.result == res.text
    assert record.caller_id == root.id and record.root_id == root.id
    assert record.ended is not None and record.ended >= record.created
    assert ended_again is False


def record_add(add, seen):
    def recorded(program):
        seen.append(program)
        add(program)

    return recorded


BUSY = "while True:\n    pass"


async def test_a_programs_start_and_end_are_announced_once_each_is_committed(home, work):
    from program_support import program

    from piagents.events import ProgramChanged, event_to_json

    seen = []
    async with runtime(home) as rt:

        def on_event(event):
            if isinstance(event, ProgramChanged):  # what the store holds when it is announced
                seen.append((event_to_json(event), rt.store.get_program(event.program_id).state))

        rt.subscribe(on_event)
        root = await rt.open_root(cwd=work)
        busy = (await run(root, BUSY, background=True)).details["id"]
        await program(root, action="stop", target=busy)
        done = (await run(root, "return 1")).details["id"]
    fields = {"callerId": root.id, "rootId": root.id, "type": "program", "kind": "script"}
    assert seen == [
        ({**fields, "programId": busy, "state": "running", "background": True}, "running"),
        ({**fields, "programId": busy, "state": "stopped", "background": True}, "stopped"),
        ({**fields, "programId": done, "state": "running", "background": False}, "running"),
        ({**fields, "programId": done, "state": "completed", "background": False}, "completed"),
    ]
