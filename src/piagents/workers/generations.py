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
"""

from __future__ import annotations

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


class GenerationProcesses:
    """The generation processes this worker started, each as `process` starts one."""

    def __init__(self, home: Path, store_url: str) -> None:
        self.home = home
        self.store_url = store_url
        self.running: dict[str, subprocess.Popen[bytes]] = {}

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
        command = [
            sys.executable,
            "-m",
            "piagents.cli",
            "worker",
            "--home",
            str(self.home),
            "--generation",
            g.id,
            "--store",
            self.store_url,
        ]
        with open(folder / placement.LOG_FILE, "ab") as out:
            # A session of its own: it outlives this worker (it holds its own lease
            # and heartbeat), as a `process` worker outlives its lead.
            self.running[g.id] = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True
            )
        log.info("started generation %s (%s) in process %d", g.id, g.label, self.running[g.id].pid)

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
