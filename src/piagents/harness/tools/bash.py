"""The `bash` tool: run a command in its own process group and keep the end of its output.

The command runs as `bash -c` in a new session, so a timeout or a cancellation
(how an abort reaches a tool) can stop it and everything it started: SIGTERM
to the group, then SIGKILL after a short grace. Output streams into a bounded
tail; once it outgrows that, the whole of it goes to a file in the output
directory, which the truncation notice names.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import dataclasses
import os
import re
import secrets
import signal
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from piagents.harness.tools.base import ToolContext, ToolError, ToolResult
from piagents.harness.tools.foreground import foreground
from piagents.harness.tools.truncation import (
    MAX_BYTES,
    MAX_LINES,
    Truncation,
    format_size,
    truncate_tail,
)

WINDOW_BYTES = 2 * MAX_BYTES  # the tail kept in memory; more than this spills to the file
READ_CHUNK = 64 * 1024
DRAIN_GRACE_S = 0.2  # after the shell exits, background jobs may still hold the pipe open
KILL_GRACE_S = 0.5  # between SIGTERM and SIGKILL to the process group

DESCRIPTION = (
    "Execute a bash command in the current working directory. Returns stdout and stderr. "
    f"Output is truncated to the last {MAX_LINES} lines or {MAX_BYTES // 1024}KB (whichever "
    "is hit first). If truncated, the full output is saved to a file. Optionally provide a "
    "timeout in seconds."
)
PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "minLength": 1, "description": "Bash command to execute"},
        "timeout": {
            "type": "number",
            "exclusiveMinimum": 0,
            "description": "Timeout in seconds (optional, no default timeout)",
        },
    },
    "required": ["command"],
    "additionalProperties": False,
}


def truncated_notice(t: Truncation, full_output: str) -> str:
    if t.line_cut:
        return f"[Showing last {format_size(t.output_bytes)} of line {t.last_line}. {full_output}]"
    span = f"lines {t.first_line}-{t.last_line} of {t.total_lines}"
    if t.truncated_by == "lines":
        return f"[Showing {span}. {full_output}]"
    return f"[Showing last {format_size(MAX_BYTES)} of output ({span}). {full_output}]"


def exit_code_status(code: int) -> str:
    if code < 0:
        return f"Command was killed by signal {-code}"
    return f"Command exited with code {code}"


def timed_out_status(timeout: float) -> str:
    seconds = int(timeout) if float(timeout).is_integer() else timeout
    return f"Command timed out after {seconds} seconds"


def _with_status(text: str, status: str) -> str:
    return f"{text}\n\n{status}" if text else status


class OutputTail:
    """A command's output: its last WINDOW_BYTES in memory, all of it in a file once larger."""

    def __init__(self, output_dir: Path, call_id: str) -> None:
        self._dir = output_dir
        self._stem = re.sub(r"[^A-Za-z0-9_.-]", "_", call_id) or secrets.token_hex(6)
        self._tail = bytearray()
        self._file: IO[bytes] | None = None
        self._save_error: str | None = None
        self.path: Path | None = None
        self.total_bytes = 0
        self._newlines = 0
        self._ends_with_newline = False

    def feed(self, chunk: bytes) -> None:
        self.total_bytes += len(chunk)
        self._newlines += chunk.count(b"\n")
        self._ends_with_newline = chunk.endswith(b"\n")
        self._tail += chunk
        if self._file is not None:
            self._write(chunk)
        elif len(self._tail) > WINDOW_BYTES and self._save_error is None:
            self._open()
            self._write(bytes(self._tail))
        if len(self._tail) > WINDOW_BYTES:
            del self._tail[:-WINDOW_BYTES]

    def _open(self) -> None:
        try:
            self._dir.mkdir(parents=True, exist_ok=True)
            path = self._dir / f"bash-{self._stem}.log"
            try:
                self._file = path.open("xb")
            except FileExistsError:
                path = self._dir / f"bash-{self._stem}-{secrets.token_hex(4)}.log"
                self._file = path.open("xb")
            self.path = path
        except OSError as exc:
            self._save_error = exc.strerror or str(exc)

    def _write(self, data: bytes) -> None:
        """Append to the full-output file; a failing disk ends saving, not the command."""
        if self._file is None:
            return
        try:
            self._file.write(data)
        except OSError as exc:
            self._save_error = exc.strerror or str(exc)
            self.close()
            self._file = None
            self.path = None

    def close(self) -> None:
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()

    @property
    def total_lines(self) -> int:
        partial_last = self.total_bytes > 0 and not self._ends_with_newline
        return self._newlines + (1 if partial_last else 0)

    def truncation(self) -> Truncation:
        """The kept end of the output, with totals for all of it."""
        data = bytes(self._tail)
        windowed = self.total_bytes > len(data)
        if windowed:  # the window starts mid-line: drop that line unless it is the only one
            newline = data.find(b"\n", 0, len(data) - 1)
            data = data[newline + 1 :] if newline != -1 else data.lstrip(bytes(range(0x80, 0xC0)))
        t = truncate_tail(data.decode("utf-8", errors="replace"))
        if not windowed:
            return t
        total = self.total_lines
        return dataclasses.replace(
            t,
            truncated=True,
            truncated_by=t.truncated_by or "bytes",
            total_lines=total,
            total_bytes=self.total_bytes,
            first_line=total - t.output_lines + 1,
            last_line=total,
        )

    def render(self) -> tuple[str, dict[str, Any] | None]:
        """The text to show, with a notice naming the full output file when truncated."""
        t = self.truncation()
        if not t.truncated:
            return t.text.removesuffix("\n"), None
        if self._file is None and self._save_error is None:
            self._open()
            self._write(bytes(self._tail))
        if self._file is not None and self.path is not None:
            self._file.flush()
            full_output = f"Full output: {self.path}"
        else:
            full_output = f"Full output could not be saved: {self._save_error}"
        details = {
            "truncation": t.to_json(),
            "fullOutputPath": str(self.path) if self.path else None,
        }
        return f"{t.text}\n\n{truncated_notice(t, full_output)}", details


# Process groups of commands not yet stopped or reaped. One whose turn was abandoned
# (it ignored SIGTERM past the abort timeout) is killed when this process exits, so
# no command outlives pi-agents.
_live_groups: set[int] = set()


@atexit.register
def _kill_live_groups() -> None:
    for pgid in list(_live_groups):
        _signal_group(pgid, signal.SIGKILL)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


async def stop_group(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM the process group, SIGKILL it after a short grace, and reap the shell."""
    loop = asyncio.get_running_loop()
    _signal_group(proc.pid, signal.SIGTERM)
    try:
        deadline = loop.time() + KILL_GRACE_S
        while _group_alive(proc.pid) and loop.time() < deadline:
            await asyncio.sleep(0.02)
    finally:
        _signal_group(proc.pid, signal.SIGKILL)
        _live_groups.discard(proc.pid)
    await proc.wait()


async def _pump(reader: asyncio.StreamReader, output: OutputTail) -> None:
    while chunk := await reader.read(READ_CHUNK):
        output.feed(chunk)


async def run_command(
    command: str, cwd: Path, timeout: float | None, output: OutputTail, agent_id: str = ""
) -> int:
    """Run `command` to completion and return its exit code; TimeoutError past `timeout`.

    While it runs it is listed among `agent_id`'s foreground processes."""
    read_fd, write_fd = os.pipe()
    pipe = os.fdopen(read_fd, "rb", buffering=0)
    try:
        try:
            proc = await asyncio.create_subprocess_exec(
                "bash",
                "-c",
                command,
                cwd=cwd,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=write_fd,
                stderr=write_fd,
                start_new_session=True,
            )
        finally:
            os.close(write_fd)  # the child holds its own copy
    except BaseException:
        pipe.close()
        raise
    _live_groups.add(proc.pid)
    pump: asyncio.Task[None] | None = None
    transport: asyncio.BaseTransport | None = None
    try:
        reader = asyncio.StreamReader()
        transport, _ = await asyncio.get_running_loop().connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), pipe
        )
        pump = asyncio.create_task(_pump(reader, output))
        with foreground.running(agent_id, proc.pid, command):
            async with asyncio.timeout(timeout):
                code = await proc.wait()
        await asyncio.wait({pump}, timeout=DRAIN_GRACE_S)
        return code
    except TimeoutError:
        await stop_group(proc)
        if pump is not None:
            await asyncio.wait({pump}, timeout=DRAIN_GRACE_S)
        raise
    except BaseException:  # cancelled: stop everything the command started
        await stop_group(proc)
        raise
    finally:
        if proc.returncode is not None:
            _live_groups.discard(proc.pid)
        if pump is not None:
            pump.cancel()
            await asyncio.wait({pump})
        if transport is not None:
            transport.close()
        else:
            pipe.close()


class BashTool:
    name = "bash"
    description = DESCRIPTION
    parameters: dict[str, Any] = PARAMETERS
    prompt_snippet = "Execute bash commands (ls, grep, find, etc.)"
    prompt_guidelines: Sequence[str] = ()

    def __init__(self, default_timeout: float | None = None) -> None:
        self.default_timeout = default_timeout  # seconds, for calls that give none

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if not ctx.cwd.is_dir():
            raise ToolError(f"Working directory does not exist: {ctx.cwd}")
        timeout = args.get("timeout", self.default_timeout)
        output = OutputTail(ctx.output_dir, ctx.call_id)
        try:
            try:
                code = await run_command(args["command"], ctx.cwd, timeout, output, ctx.agent_id)
            except TimeoutError:
                text, _ = output.render()
                raise ToolError(_with_status(text, timed_out_status(timeout or 0))) from None
            text, details = output.render()
        finally:
            output.close()
        if code != 0:
            raise ToolError(_with_status(text or "(no output)", exit_code_status(code)))
        return ToolResult(text or "(no output)", details)
