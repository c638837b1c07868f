"""Managed agents' generations placed on the worker pool (placement `workers`).

A lead whose `spawnPlacement` is `workers` records the generation (`starting`),
leaves its assignment in the managed session's inbox and its runtime options in the
store, and sends a NOTIFY on the placement channel. Every `pi-agents worker` with
room that hears it (or sweeps) starts the generation's own worker process on its
machine, `pi-agents worker --generation G --store URL`, the process placement
`process` starts on the lead's machine: it takes the managed session's lease, records
itself in the generation (pid, host, token: the startup evidence the lead waits
for), runs the agent and keeps its evidence in the store. Two workers that start one
generation at once start two processes; the session's lease lets one of them run it,
and the other exits at once.

Its liveness is its heartbeat in the store (recovery's `lost` and `unknown` rules read
it for a process on another machine), and the lead controls it through the inbox as it
controls a `process` worker: `close` asks it to end and waits for it to be gone; it
cannot signal a process on another machine.

A process takes about half a second to import what a generation needs, so a worker
keeps one ready (`pi-agents worker --standby`): imported, waiting for a generation's
id on its stdin. A generation goes to it when it is there and alive (and a new one
is started for the next), else to a process started afresh. A standby whose worker
goes away sees its stdin end and exits.
"""

from __future__ import annotations

import contextlib
import logging
import subprocess
import sys
from pathlib import Path

from piagents.store.base import Store
from piagents.store.records import GenerationRecord
from piagents.supervision import placement

log = logging.getLogger("piagents.worker")


def waiting(store: Store) -> list[GenerationRecord]:
    """Generations of the store waiting for a pool worker, oldest first: starting, and
    their session not held yet (a generation's process takes that lease first)."""
    return [
        g
        for g in store.generations(live=True)
        if g.placement == placement.POOL
        and g.state == "starting"
        and store.lease_of(g.session_id) is None
    ]


STANDBY_LOG = "standby.log"  # in the home's runs/: what a standby says before its work


class GenerationProcesses:
    """The generation processes this worker started, each as `process` starts one,
    and the standby process ready for the next."""

    def __init__(self, home: Path, store_url: str, *, standby: bool = True) -> None:
        self.home = home
        self.store_url = store_url
        self.running: dict[str, subprocess.Popen[bytes]] = {}
        self.keeps_standby = standby
        self.standby: subprocess.Popen[bytes] | None = None

    def _command(self, *which: str) -> list[str]:
        return [sys.executable, "-m", "piagents.cli", "worker", "--home", str(self.home),
                *which, "--store", self.store_url]  # fmt: skip

    def prepare(self) -> None:
        """Have a standby ready (unless there is one, or this worker keeps none)."""
        if not self.keeps_standby or (self.standby is not None and self.standby.poll() is None):
            return
        runs = self.home / "runs"
        runs.mkdir(parents=True, exist_ok=True)
        with open(runs / STANDBY_LOG, "ab") as out:
            # A session of its own, as every generation's process has (see `start`).
            self.standby = subprocess.Popen(
                self._command("--standby"),
                stdin=subprocess.PIPE,
                stdout=out,
                stderr=out,
                start_new_session=True,
            )

    def _hand_over(self, generation_id: str) -> subprocess.Popen[bytes] | None:
        """The standby, told to run this generation; None if there is none alive."""
        standby, self.standby = self.standby, None
        if standby is None or standby.poll() is not None or standby.stdin is None:
            return None
        try:
            standby.stdin.write(f"{generation_id}\n".encode())
            standby.stdin.close()
        except OSError:  # it died meanwhile
            standby.kill()
            return None
        return standby

    def close(self) -> None:
        """Let the standby go (it exits when its stdin ends); running generations stay."""
        standby, self.standby = self.standby, None
        if standby is None:
            return
        if standby.stdin is not None:
            with contextlib.suppress(OSError):
                standby.stdin.close()
        if standby.poll() is None:  # still importing, say: it has no work to lose
            standby.terminate()
        try:
            standby.wait(5)
        except subprocess.TimeoutExpired:
            standby.kill()
            standby.wait(5)

    def reap(self) -> None:
        """Forget the processes that have exited."""
        for gid, process in list(self.running.items()):
            if process.poll() is not None:
                del self.running[gid]

    def start(self, g: GenerationRecord) -> None:
        if g.id in self.running:
            return
        folder = placement.run_dir(self.home, g.id)
        folder.mkdir(parents=True, exist_ok=True)
        process = self._hand_over(g.id)
        how = "its standby process"
        if process is None:
            how = "a new process"
            with open(folder / placement.LOG_FILE, "ab") as out:
                # A session of its own: it outlives this worker (it holds its own lease
                # and heartbeat), as a `process` worker outlives its lead.
                process = subprocess.Popen(
                    self._command("--generation", g.id),
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=out,
                    start_new_session=True,
                )
        self.running[g.id] = process
        log.info("started generation %s (%s) in %s, %d", g.id, g.label, how, process.pid)
        self.prepare()  # for the next one

    def sweep(self, store: Store, room: int) -> int:
        """Start up to `room` waiting generations; how many were started."""
        self.reap()
        started = 0
        for g in waiting(store):
            if started >= room:
                break
            if g.id not in self.running:
                self.start(g)
                started += 1
        return started
