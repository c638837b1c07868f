"""Where a managed agent's worker process runs: its own process group, or a tmux pane.

The lead's runtime starts `pi-agents worker --home H --generation G` and learns
everything else (pid, start time, lease token, pane) from the generation the
worker records in the store. The lead's runtime options (its store among them) go
to `<home>/runs/<generation>/runtime.json`, which the worker reads first, and the
worker's log beside it. Its live evidence (output tail, foreground processes,
context use: what `inspect` reads) is kept in the store, as the generation's
`evidence` document, so any runtime of the store can read it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from piagents.atomic_file import write_atomically
from piagents.store import lease
from piagents.store.base import PLACEMENT, LeaseHolder, Store, StoreError
from piagents.store.records import GenerationRecord
from piagents.supervision import error_texts
from piagents.supervision.output_tail import OutputTail

TMUX_SESSION = "pi-agents"
LOG_FILE = "worker.log"
OPTIONS_FILE = "runtime.json"  # the lead's runtime options a worker runs with
PANE_LINES = 80
REMOTE = ("process", "tmux", "workers")
POOL = "workers"  # a process started by a `pi-agents worker` of the store, anywhere
# Variables of the caller's terminal that must not leak into a tmux pane.
_NOT_FOR_PANES = ("TMUX", "TMUX_PANE", "TERM", "COLUMNS", "LINES")


class PlacementError(Exception):
    """A worker could not be started."""


@dataclass(slots=True)
class Spawned:
    """A worker just started: its process id and, for tmux, its pane."""

    pid: int
    pane: str | None = None
    process: subprocess.Popen[bytes] | None = None
    started: str = ""  # its start time, read at once

    def __post_init__(self) -> None:
        self.started = self.started or lease.process_start_time(self.pid)

    def exited(self) -> bool:
        if self.process is not None:
            return self.process.poll() is not None
        return lease.presence(holder_of(self.pid)) == "gone"


def run_dir(home: Path, generation_id: str) -> Path:
    return home / "runs" / generation_id


def worker_command(home: Path, generation_id: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "piagents.cli",
        "worker",
        "--home",
        str(home),
        "--generation",
        generation_id,
    ]


def holder_of(pid: int, token: str = "") -> LeaseHolder:
    import socket

    return LeaseHolder(pid, socket.gethostname(), token, lease.process_start_time(pid))


async def spawn(
    home: Path, generation_id: str, placement: str, options: dict[str, Any] | None = None
) -> Spawned:
    """Start a worker for the generation; `options` are the lead's runtime options
    (`Runtime.worker_options`), written where the worker reads them first."""
    folder = run_dir(home, generation_id)
    folder.mkdir(parents=True, exist_ok=True)
    write_atomically(folder / OPTIONS_FILE, json.dumps(options or {}), durable=False)
    command = worker_command(home, generation_id)
    if placement == "tmux":
        return await _spawn_in_tmux(command, folder)
    # Not an asyncio subprocess: its transport kills the child when it is collected, and
    # a worker outlives the lead's event loop (and the lead itself).
    with open(folder / LOG_FILE, "ab") as log:
        process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True
        )
    return Spawned(process.pid, None, process)


def offer(store: Store, generation_id: str, options: dict[str, Any] | None = None) -> None:
    """Leave the generation to the store's `pi-agents worker`s (placement `workers`):
    the lead's runtime options go in the store, and the workers are told to look."""
    try:
        store.put_generation_document(generation_id, "options", json.dumps(options or {}))
    except StoreError as exc:
        raise PlacementError(str(exc)) from exc
    store.notify(PLACEMENT)


async def _tmux(*args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        "tmux",
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate()
    return process.returncode or 0, out.decode(errors="replace"), err.decode(errors="replace")


async def _spawn_in_tmux(command: list[str], folder: Path) -> Spawned:
    try:
        code, _, _ = await _tmux("has-session", "-t", TMUX_SESSION)
        if code != 0:
            code, _, err = await _tmux("new-session", "-d", "-s", TMUX_SESSION)
            if code != 0:
                raise PlacementError(error_texts.tmux_session_failed(TMUX_SESSION, err))
    except FileNotFoundError as exc:
        raise PlacementError(error_texts.TMUX_MISSING) from exc
    env: list[str] = []
    for key, value in os.environ.items():
        if key not in _NOT_FOR_PANES:
            env += ["-e", f"{key}={value}"]
    # stderr also goes to the run's log: a worker that fails to start leaves its reason.
    shell = " ".join(_quote(a) for a in command) + f" 2>>{_quote(str(folder / LOG_FILE))}"
    code, out, err = await _tmux(
        "new-window",
        "-d",
        "-t",
        f"{TMUX_SESSION}:",
        "-P",
        "-F",
        "#{pane_id} #{pane_pid}",
        *env,
        "exec " + shell,
    )
    if code != 0:
        raise PlacementError(error_texts.tmux_window_failed(err.strip()))
    pane, _, pid = out.strip().partition(" ")
    return Spawned(int(pid), pane)


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


def kill_group(pid: int, sig: int = signal.SIGKILL) -> None:
    """Signal a worker and the commands it started (its process group, which it leads)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if os.getpgid(pid) == pid and pid != os.getpgrp():
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)


def evidence_holder(g: GenerationRecord) -> LeaseHolder | None:
    if g.pid is None:
        return None
    return LeaseHolder(g.pid, g.host or "", g.token or "", g.started or "")


def on_this_machine(g: GenerationRecord) -> bool:
    """The generation's worker process runs here (its pid can be signalled)."""
    import socket

    return g.pid is not None and g.host == socket.gethostname()


def presence_of(store: Store, holder: LeaseHolder) -> str:
    """`alive`, `gone` or `unknown`: a process of this machine by its pid, one of
    another machine (or whose start cannot be read) by its heartbeat in the store's
    registry, `gone` once it lapsed; `unknown` when the registry does not list it."""
    found = lease.presence(holder)
    if found != "unknown":
        return found
    for w in store.workers():
        if w.token == holder.token:
            return "alive" if w.alive else "gone"
    return "unknown"


async def wait_gone(store: Store, g: GenerationRecord, timeout: float) -> bool:
    """Wait until the generation's process is no longer known alive; False on timeout."""
    holder = evidence_holder(g)
    if holder is None:
        return True
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while presence_of(store, holder) == "alive":
        if loop.time() >= deadline:
            return False
        await asyncio.sleep(0.05)
    return True


# ---- the lead's runtime options ---------------------------------------------------------


class OptionsError(Exception):
    """The worker's options file cannot be used."""


_OPTION_TYPES: dict[str, type] = {
    "settings": dict,
    "tools": list,
    "systemPrompt": str,
    "appendSystemPrompt": str,
    "thinking": str,
}


def read_options(home: Path, generation_id: str) -> dict[str, Any]:
    """The options a worker runs with: `{}` when the lead wrote none (an older lead)."""
    path = run_dir(home, generation_id) / OPTIONS_FILE
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise OptionsError(f"{path}: cannot be read: {exc}") from exc
    return checked_options(text, str(path))


def read_offered_options(store: Store, generation_id: str) -> dict[str, Any]:
    """The options a lead left in the store with its generation (placement `workers`)."""
    document = store.generation_document(generation_id, "options")
    if document is None:
        return {}
    return checked_options(document[0], f"the options of generation {generation_id}")


def checked_options(text: str, where: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise OptionsError(f"{where}: cannot be read: {exc}") from exc
    if not isinstance(data, dict):
        raise OptionsError(f"{where}: expected a JSON object")
    for key, value in data.items():
        wanted = _OPTION_TYPES.get(key)
        if wanted is None:
            raise OptionsError(f"{where}: unknown option {key!r}")
        if not isinstance(value, wanted) or (
            isinstance(value, list) and not all(isinstance(v, str) for v in value)
        ):
            raise OptionsError(f"{where}: option {key!r} has the wrong type")
    return data


# ---- inspect evidence ---------------------------------------------------------------


def write_evidence(store: Store, generation_id: str, evidence: dict[str, Any]) -> None:
    """Replace the generation's live evidence in one step (readers never see a part)."""
    store.put_generation_document(generation_id, "evidence", json.dumps(evidence))


def read_evidence(store: Store, generation_id: str) -> tuple[dict[str, Any], int | None]:
    """The evidence the worker last wrote and when (ms); `({}, None)` when it wrote
    none, and `({}, when)` when what it wrote cannot be read."""
    try:
        document = store.generation_document(generation_id, "evidence")
    except StoreError:
        return {}, None
    if document is None:
        return {}, None
    body, written = document
    try:
        data = json.loads(body)
    except ValueError:
        return {}, written
    return (data if isinstance(data, dict) else {}), written


def capture_pane(pane: str) -> tuple[str, bool] | None:
    """The pane's last 80 lines as a terminal shows them, capped at 16 KiB."""
    try:
        done = subprocess.run(
            ["tmux", "capture-pane", "-p", "-J", "-S", f"-{PANE_LINES}", "-t", pane],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=5,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    tail = OutputTail()
    tail.feed(done.stdout.decode(errors="replace"))
    return tail.snapshot()
