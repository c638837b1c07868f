"""The `program` tool as a model uses it: run in the foreground and the background,
wait, list and stop, with the result layout and texts of PROGRAM-NOTES.md."""

import asyncio
import json
import re
from pathlib import Path

from program_support import Script, program, run, runtime, shorts, user_texts

from support import ElapsedClock, settled, until


def wall(text):
    """The result with its one measured value, the wall time, made fixed."""
    return re.sub(r"Wall time \d+\.\d seconds", "Wall time 0.0 seconds", text)


# ---- run in the foreground --------------------------------------------------------


async def test_a_completed_program_returns_its_text_items_console_and_value(home, work):
    (work / "notes.txt").write_text("one\ntwo\n")
    code = (
        "content = await tools.read(path='notes.txt')\n"
        "lines = content.splitlines()\n"
        "print('read', len(lines))\n"
        "text('first item')\n"
        "text('second item')\n"
        "return {'lines': lines}"
    )
    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)
        res = await run(root, code)
    assert not res.is_error
    assert wall(res.text) == (
        "Script completed\n"
        "Wall time 0.0 seconds\n"
        "Output:\n"
        "==> text 1/2 <==\nfirst item\n"
        "==> text 2/2 <==\nsecond item\n"
        "<console_output>\nread 2\n</console_output>\n"
        '{"lines": ["one", "two"]}'
    )


async def test_a_string_value_is_shown_as_it_is_and_no_value_shows_nothing(home, work):
    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)
        assert wall((await run(root, "return 'plain'")).text).endswith("Output:\nplain")
        assert wall((await run(root, "x = 1")).text) == (
            "Script completed\nWall time 0.0 seconds\nOutput:\n"
        )


async def test_a_failed_tool_call_raises_and_the_failure_lists_the_calls_made(home, work):
    (work / "a.txt").write_text("a")
    code = "await tools.read(path='a.txt')\nprint('before')\nawait tools.read(path='missing.txt')"
    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)
        res = await run(root, code)
    assert res.is_error
    assert wall(res.text) == (
        "Script failed\n"
        "Wall time 0.0 seconds\n"
        "Output:\n"
        "<console_output>\nbefore\n</console_output>\n"
        "Script error:\n"
        "Traceback (most recent call last):\n"
        '  File "<program>", line 3, in <module>\n'
        "    await tools.read(path='missing.txt')\n"
        "ToolError: File not found: missing.txt\n"
        "\n"
        "Tool calls made before the failure (they are not undone): read (ok), read (error)"
    )


async def test_a_failure_without_tool_calls_says_none_were_made(home, work):
    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)
        res = await run(root, "x = {}\nx['k']")
    assert res.is_error
    assert wall(res.text).endswith("KeyError: k\n\nNo tool calls were made.")


async def test_a_caught_tool_error_lets_the_program_go_on(home, work):
    code = "try:\n    await tools.read(path='nope')\nexcept ToolError as e:\n    return str(e)"
    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)
        res = await run(root, code)
    assert wall(res.text).endswith("Output:\nFile not found: nope")


async def test_bash_gives_its_structured_result_also_for_a_non_zero_exit(home, work):
    code = (
        "ok = await tools.bash(command='echo hello')\n"
        "bad = await tools.bash(command='echo oops; exit 3')\n"
        "return [ok['output'], ok['exit_code'], ok['truncated'], bad['output'],"
        " bad['exit_code'], 'full_output_path' in ok, ok['wall_time_seconds'] >= 0]"
    )
    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)
        res = await run(root, code)
    assert wall(res.text).endswith('Output:\n["hello", 0, false, "oops", 3, false, true]')


async def test_a_timed_out_bash_raises_like_any_failed_call(home, work):
    code = "await tools.bash(command='sleep 5', timeout=0.2)"
    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)
        res = await run(root, code)
    assert res.is_error
    assert "ToolError: " in res.text and "timed out" in res.text
    assert res.text.endswith("(they are not undone): bash (error)")


async def test_a_program_cannot_call_program_or_a_tool_its_caller_is_not_offered(home, work):
    async with runtime(home, tools=("read", "program")) as rt:
        root = await rt.open_root(cwd=work)
        own = await run(root, "await tools.program(action='list')")
        other = await run(root, "await tools.bash(command='true')")
        asked = await run(root, "return await _pi_tool('bash', {'command': 'true'})")
    assert "AttributeError: 'tools' object has no attribute 'program'" in own.text
    assert "AttributeError: 'tools' object has no attribute 'bash'" in other.text
    assert "ToolError: Tool bash not found." in asked.text


async def test_arguments_are_checked_against_the_tools_schema_at_each_call(home, work):
    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)
        res = await run(root, "await tools.read(file='x')")
    assert res.is_error
    assert "ToolError: " in res.text
    assert res.text.endswith("(they are not undone): read (error)")


async def test_a_timeout_stops_a_busy_loop(home, work):
    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)
        res = await run(root, "while True:\n    pass", timeout=0.5)
        record = rt.store.programs(root.id)[0]
    assert res.is_error
    assert wall(res.text) == (
        "Script failed\nWall time 0.0 seconds\nOutput:\n\nScript error:\n"
        "Script timed out: the Program ran longer than its timeout of 0.5 seconds.\n\n"
        "No tool calls were made."
    )
    assert (record.state, record.reason) == (
        "stopped",
        "the Program ran longer than its timeout of 0.5 seconds.",
    )


async def test_output_over_ten_thousand_tokens_keeps_head_and_tail_and_saves_the_whole(home, work):
    code = "for i in range(3000):\n    print(f'line {i:05d} ' + 'x' * 10)"
    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)
        res = await run(root, code)
        record = rt.store.programs(root.id)[0]
    assert res.text.startswith(  # the first line still says how the script ended
        "Script completed\nWall time "
    )
    assert "\nOutput:\nWarning: truncated output (original token count: " in res.text
    path = re.search(r"\[Full output: (.+) \(read with offset/limit\)\]\Z", res.text).group(1)
    assert path.startswith(str(home / "outputs" / root.id))
    full = Path(path).read_text(encoding="utf-8")
    assert full.startswith("Script completed\n")
    assert "line 01500 " in full and "line 01500 " not in res.text
    assert "line 00000 " in res.text and "line 02999 " in res.text
    assert record.result == res.text


# ---- store() and load() -------------------------------------------------------------


async def test_stored_values_are_kept_only_when_the_program_completes(home, work):
    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)
        first = await run(root, "store('n', 1)\nstore('kept', {'a': [1]})\nreturn load('n')")
        failed = await run(root, "store('n', 2)\nraise ValueError('no')")
        later = await run(root, "return [load('n'), load('kept'), load('none')]")
        values = rt.store.program_values(root.id)
    assert wall(first.text).endswith("Output:\n1")  # its own pending value
    assert failed.is_error
    assert wall(later.text).endswith('Output:\n[1, {"a": [1]}, null]')
    assert values == {"kept": '{"a": [1]}', "n": "1"}


# ---- background, wait, list, stop --------------------------------------------------


async def test_a_background_program_starts_and_wait_returns_its_result_alone(home, work):
    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)
        started = await run(root, "return 'bg done'", background=True)
        pid = started.details["id"]
        assert started.text == f"Program {shorts(rt, root)[pid]} started."
        waited = await program(root, action="wait", target=pid[:8], timeout=30)
        again = await program(root, action="wait")
        record = rt.store.get_program(pid)
    assert wall(waited.text) == "Script completed\nWall time 0.0 seconds\nOutput:\nbg done"
    assert again.text == "No results."
    assert record.returned and record.state == "completed"


async def test_wait_returns_blocks_and_names_the_programs_still_running(home, work):
    async with runtime(home, wait_clock=ElapsedClock()) as rt:  # its timeout passes at once
        root = await rt.open_root(cwd=work)
        done = (await run(root, "return 1", background=True)).details["id"]
        await until(lambda: rt.store.get_program(done).state == "completed")
        failing = (await run(root, "raise ValueError('x')", background=True)).details["id"]
        await until(lambda: rt.store.get_program(failing).state == "failed")
        busy = (await run(root, "while True:\n    pass", background=True)).details["id"]
        waited = await program(root, action="wait", timeout=10)
        running = rt.store.get_program(busy).state
        short = shorts(rt, root)
        await program(root, action="stop", target=busy)
    blocks = wall(waited.text).split("\n\n")
    assert blocks[0] == (
        f'<program-result id="{short[done]}" status="completed">\n'
        "Script completed\nWall time 0.0 seconds\nOutput:\n1\n</program-result>"
    )
    assert blocks[1].startswith(f'<program-result id="{short[failing]}" status="failed">\n')
    assert waited.text.endswith(f"</program-result>\n\nStill running: {short[busy]}")
    assert running == "running"


async def test_list_shows_background_programs_newest_first_with_more_results(home, work):
    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)
        assert (await program(root, action="list")).text == "No Programs."
        await run(root, "return 0")  # foreground: not listed
        ids = [(await run(root, f"return {n}", background=True)).details["id"] for n in range(3)]
        for i in ids:
            await until(lambda i=i: rt.store.get_program(i).state == "completed")
        page = await program(root, action="list", limit=2)
        rest = await program(root, action="list", limit=2, offset=2)
        short = shorts(rt, root)
        await program(root, action="wait")
    assert page.text == (
        f"{short[ids[2]]}  completed\n{short[ids[1]]}  completed\n"
        "[1 more results. Use offset=2 to continue.]"
    )
    assert rest.text == f"{short[ids[0]]}  completed"


async def test_stop_ends_a_busy_loop_and_says_so_once(home, work):
    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)
        pid = (await run(root, "while True:\n    pass", background=True)).details["id"]
        short = shorts(rt, root)[pid]
        stopped = await program(root, action="stop", target=short)
        again = await program(root, action="stop", target=short)
        record = rt.store.get_program(pid)
        waited = await program(root, action="wait", target=short)
    assert stopped.text == f"Program {short} stopped."
    assert again.text == f"Program {short} has already ended."
    assert (record.state, record.reason) == ("stopped", "the Program was stopped by its caller.")
    assert wall(waited.text) == (
        f'<program-result id="{short}" status="stopped">\n'
        "Script failed\nWall time 0.0 seconds\nOutput:\n\nScript error:\n"
        "Script aborted: the Program was stopped by its caller.\n\nNo tool calls were made.\n"
        "</program-result>"
    )


async def test_targets_that_match_no_program_or_several_are_errors(home, work):
    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)
        ids = [(await run(root, f"return {n}", background=True)).details["id"] for n in range(2)]
        missing = await program(root, action="stop", target="ffffffff")
        several = await program(root, action="wait", target=ids[0][:2])  # the same century
        short = shorts(rt, root)
        await program(root, action="wait")
    assert missing.is_error
    assert missing.text == 'No Program matches "ffffffff". Use list to find Programs.'
    assert several.is_error
    assert several.text == (
        f'"{ids[0][:2]}" matches several Programs: {short[ids[0]]}, {short[ids[1]]}. '
        "Retry with a longer ID prefix."
    )


async def test_an_unwaited_background_program_notifies_its_caller(home, work):
    script = Script()
    root_inputs = []

    def root_turn(call):
        root_inputs.append(user_texts(call)[-1])
        return "noted"

    script.on(None, root_turn)
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        pid = (await run(root, "return 1", background=True)).details["id"]
        await until(lambda: root_inputs)
        short = shorts(rt, root)[pid]
    assert root_inputs == [f"Program {short} completed."]


async def test_a_program_waited_for_or_stopped_sends_no_notification(home, work):
    script = Script()
    calls = []
    script.on(None, lambda call: calls.append(call) or "x")
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        done = (await run(root, "return 1", background=True)).details["id"]
        await program(root, action="wait", target=done)
        busy = (await run(root, "while True:\n    pass", background=True)).details["id"]
        await program(root, action="stop", target=busy)
        await settled()
    assert calls == []


async def test_invalid_calls_are_refused_with_the_tools_texts(home, work):
    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)
        res = await program(root, action="run")
        wait = await program(root, action="wait", timeout=5)
    assert (res.is_error, res.text) == (True, "Invalid program call: run needs `code`.")
    assert wait.text == "Invalid program call: `timeout` for wait must be from 10 to 3600 seconds."


async def test_a_long_wait_is_truncated_and_omitted_results_stay_unreturned(home, work):
    code = "return 'r' * 30000"  # each result 30 KB: two of them pass the 50 KB limit
    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)
        ids = [(await run(root, code, background=True)).details["id"] for _ in range(3)]
        for i in ids:
            await until(lambda i=i: rt.store.get_program(i).state == "completed")
        short = shorts(rt, root)
        first = await program(root, action="wait")
        returned = [rt.store.get_program(i).returned for i in ids]
        second = await program(root, action="wait")
    assert first.text.endswith(f"[Results omitted: {short[ids[2]]}. Use wait with fewer targets.]")
    assert f'<program-result id="{short[ids[1]]}" status="completed">' in first.text
    assert "</program-result>\n\n[Results omitted" in first.text
    path = re.search(r"Full output: (\S+)\]", first.text).group(1)
    assert Path(path).read_text(encoding="utf-8").count("<program-result") == 3
    assert returned == [True, True, False]
    assert wall(second.text) == "Script completed\nWall time 0.0 seconds\nOutput:\n" + "r" * 30000


async def test_the_modules_the_description_names_import_and_files_and_processes_do_not(home, work):
    modules = "math, time, datetime, collections, itertools, functools, random, typing"
    code = f"import {modules}, dataclasses\nreturn json.dumps(re.findall('a', 'aa'))"
    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)
        imported = await run(root, code)
        opened = await run(root, "open('/etc/passwd').read()")
        spawned = await run(root, "import subprocess")
    assert wall(imported.text).endswith('Output:\n["a", "a"]')
    assert "PermissionError: Permission denied: '/etc/passwd'" in opened.text
    assert "ModuleNotFoundError: No module named 'subprocess'" in spawned.text


async def test_aborting_the_callers_turn_stops_its_foreground_program(home, work):
    from piagents.testing import Reply, ToolCall

    script = Script()
    busy = {"action": "run", "code": "while True:\n    pass"}
    script.on(None, lambda call: Reply(tool_calls=[ToolCall("program", busy)]))
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        turn = asyncio.ensure_future(root.prompt("loop"))
        await until(lambda: rt.programs.live, "the Program runs")
        await root.abort()
        record = rt.store.programs(root.id)[0]
        await asyncio.gather(turn, return_exceptions=True)
    assert (record.state, record.reason) == ("stopped", "its caller's turn was aborted.")
    assert "Script aborted: its caller's turn was aborted." in record.result


async def test_a_stored_value_over_the_size_limit_fails_the_program_naming_it(home, work):
    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)
        res = await run(root, "store('big', 'x' * 1000001)")
        bad_key = await run(root, "store('', 1)")
        values = rt.store.program_values(root.id)
    assert (
        "ValueError: store(): the value of 'big' is 1000003 characters of JSON, "
        "over the limit of 1000000"
    ) in res.text
    assert "ValueError: store(): the key must be a string of 1 to 200 characters" in bad_key.text
    assert values == {}


async def test_bash_output_past_its_limit_is_flagged_with_its_full_output_file(home, work):
    many = "seq 1 5000"
    code = (
        f"ok = await tools.bash(command={many!r})\n"
        f"bad = await tools.bash(command={many + '; exit 1'!r})\n"
        "return [[r['truncated'], r['exit_code'], r['full_output_path']] for r in (ok, bad)]"
    )
    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)
        res = await run(root, code)
    value = json.loads(res.text.split("Output:\n", 1)[1])
    assert [v[:2] for v in value] == [[True, 0], [True, 1]]
    for _, _, path in value:
        assert Path(path).read_text().splitlines()[-1] == "5000"
