import asyncio
import os
import time
from pathlib import Path

import pytest

from piagents.harness.tools.base import ToolContext, ToolError, validation_error
from piagents.harness.tools.bash import BashTool
from support import eventually, until

# Two background children whose pids land in files, then a wait on both.
TWO_SLEEPS = "sleep 100 & echo $! > a.pid; sleep 100 & echo $! > b.pid; echo started; wait"


async def bash(ctx: ToolContext, command: str, **args: object) -> str:
    return (await BashTool().execute({"command": command, **args}, ctx)).text


def alive(pid: int) -> bool:
    """Whether a process runs; a zombie waiting for its reaper counts as dead."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def pids(workdir: Path) -> list[int]:
    return [int((workdir / name).read_text()) for name in ("a.pid", "b.pid")]


def pid_files_written(workdir: Path) -> bool:
    files = [workdir / "a.pid", workdir / "b.pid"]
    return all(f.exists() and f.read_text().strip() for f in files)


async def test_bash_returns_stdout_and_stderr_merged(ctx: ToolContext) -> None:
    assert await bash(ctx, "echo out; echo err >&2; echo out2") == "out\nerr\nout2"


async def test_bash_runs_in_the_contexts_working_directory(ctx: ToolContext, workdir: Path) -> None:
    assert await bash(ctx, "pwd") == str(workdir)


async def test_bash_reads_stdin_from_dev_null(ctx: ToolContext) -> None:
    assert await bash(ctx, "cat; echo done", timeout=10) == "done"


async def test_a_command_without_output_says_so(ctx: ToolContext) -> None:
    assert await bash(ctx, "true") == "(no output)"


async def test_a_non_zero_exit_is_an_error_with_the_output_and_the_code(ctx: ToolContext) -> None:
    with pytest.raises(ToolError) as caught:
        await bash(ctx, "echo partial; exit 3")
    assert str(caught.value) == "partial\n\nCommand exited with code 3"


async def test_a_silent_failure_still_reports_its_code(ctx: ToolContext) -> None:
    with pytest.raises(ToolError) as caught:
        await bash(ctx, "exit 1")
    assert str(caught.value) == "(no output)\n\nCommand exited with code 1"


async def test_long_output_keeps_its_last_2000_lines_and_saves_the_rest_to_a_file(
    ctx: ToolContext, tmp_path: Path
) -> None:
    result = await BashTool().execute({"command": "seq 1 3000"}, ctx)
    full = tmp_path / "outputs" / "bash-call_1.log"
    assert result.text.startswith("1001\n1002\n")
    assert result.text.endswith(f"\n3000\n\n[Showing lines 1001-3000 of 3000. Full output: {full}]")
    assert full.read_text() == "".join(f"{i}\n" for i in range(1, 3001))
    assert result.details["fullOutputPath"] == str(full)
    assert result.details["truncation"]["truncatedBy"] == "lines"


async def test_wide_output_keeps_its_last_50_kib_on_a_line_boundary(
    ctx: ToolContext, tmp_path: Path
) -> None:
    result = await BashTool().execute({"command": "seq -f '%0100g' 1 1000"}, ctx)
    full = result.details["fullOutputPath"]
    # 506 lines of 100 bytes plus 505 newlines fit in 51200 bytes.
    assert result.text.startswith(f"{495:0100d}\n")
    assert result.text.endswith(
        f"{1000:0100d}\n\n[Showing last 50.0KB of output (lines 495-1000 of 1000). "
        f"Full output: {full}]"
    )
    assert Path(full).parent == tmp_path / "outputs"
    assert Path(full).stat().st_size == 101 * 1000


async def test_output_far_beyond_the_limit_streams_to_the_file_and_counts_every_line(
    ctx: ToolContext,
) -> None:
    result = await BashTool().execute({"command": "seq 1 400000"}, ctx)
    full = Path(result.details["fullOutputPath"])
    notice = f"[Showing lines 398001-400000 of 400000. Full output: {full}]"
    assert result.text.endswith(f"\n400000\n\n{notice}")
    assert full.read_text().splitlines() == [str(i) for i in range(1, 400001)]


async def test_a_single_huge_line_keeps_its_end(ctx: ToolContext) -> None:
    result = await BashTool().execute({"command": "head -c 300000 /dev/zero | tr '\\0' x"}, ctx)
    shown, notice = result.text.split("\n\n")
    assert shown == "x" * 51200
    assert notice.startswith("[Showing last 50.0KB of line 1. Full output: ")


async def test_each_truncated_run_gets_its_own_output_file(ctx: ToolContext) -> None:
    first = await BashTool().execute({"command": "seq 1 3000"}, ctx)
    second = await BashTool().execute({"command": "seq 1 3000"}, ctx)
    assert first.details["fullOutputPath"] != second.details["fullOutputPath"]
    assert Path(first.details["fullOutputPath"]).exists()
    assert Path(second.details["fullOutputPath"]).exists()


async def test_a_timeout_kills_the_whole_process_group_and_keeps_the_output(
    ctx: ToolContext, workdir: Path
) -> None:
    with pytest.raises(ToolError) as caught:
        await bash(ctx, TWO_SLEEPS, timeout=1)
    assert str(caught.value) == "started\n\nCommand timed out after 1 seconds"
    await until(lambda: not any(alive(pid) for pid in pids(workdir)), what="the sleeps to die")


async def test_cancellation_kills_the_whole_process_group_quickly(
    ctx: ToolContext, workdir: Path
) -> None:
    task = asyncio.create_task(bash(ctx, TWO_SLEEPS))
    await until(lambda: pid_files_written(workdir), what="the pid files")
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - started < 2.0
    # quickly: the bound is the behaviour under test
    await until(lambda: not any(alive(pid) for pid in pids(workdir)), what="the kill", timeout=1.0)


async def test_children_that_ignore_sigterm_are_killed_after_the_grace(
    ctx: ToolContext, workdir: Path
) -> None:
    command = "trap '' TERM; " + TWO_SLEEPS
    task = asyncio.create_task(bash(ctx, command))
    await until(lambda: pid_files_written(workdir), what="the pid files")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # within the grace and a little: the bound is the behaviour under test
    await until(lambda: not any(alive(pid) for pid in pids(workdir)), what="the kill", timeout=2.0)


async def test_a_background_job_holding_the_output_does_not_block_the_result(
    ctx: ToolContext, workdir: Path
) -> None:
    started = time.monotonic()
    text = await bash(ctx, "sleep 30 & echo $! > bg.pid; echo done")
    try:
        assert text == "done"
        assert time.monotonic() - started < 5
    finally:
        os.kill(int((workdir / "bg.pid").read_text()), 9)


async def test_a_missing_working_directory_is_a_clear_error(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path / "gone", output_dir=tmp_path / "out")
    with pytest.raises(ToolError, match="Working directory does not exist"):
        await bash(ctx, "true")


async def test_a_default_timeout_applies_when_the_call_gives_none(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match=r"Command timed out after 0\.5 seconds"):
        await BashTool(default_timeout=0.5).execute({"command": "sleep 10"}, ctx)


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({}, "command"),
        ({"command": "ls", "timeout": "soon"}, "timeout"),
        ({"command": "ls", "timeout": 0}, "timeout"),
        ({"command": ["ls"]}, "command"),
    ],
)
def test_the_bash_schema_rejects_a_malformed_call_naming_the_field(
    args: dict[str, object], field: str
) -> None:
    message = validation_error(BashTool(), args)
    assert message is not None and field in message


ABANDONED_COMMAND = """
import asyncio, sys
from pathlib import Path
from piagents.harness.abandoned import let_go
from piagents.harness.tools.base import ToolContext
from piagents.harness.tools.bash import BashTool

work = Path(sys.argv[1])
command = "echo $$ > pid; trap '' TERM; exec sleep 600"

async def main():
    ctx = ToolContext(cwd=work, output_dir=work / "outputs")
    task = asyncio.create_task(BashTool().execute({"command": command}, ctx))
    while not (work / "pid").exists() or not (work / "pid").read_text().strip():
        await asyncio.sleep(0.01)  # polling for the command's pid file
    let_go(task)  # as an abandoned turn is: the program ends while the command runs

asyncio.run(main())
"""


def test_a_command_still_running_when_the_process_exits_is_killed(workdir: Path) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", ABANDONED_COMMAND, str(workdir)],
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    pid = int((workdir / "pid").read_text())
    try:
        eventually(lambda: not alive(pid), what="the abandoned command to be killed")
    finally:
        if alive(pid):
            os.kill(pid, 9)
