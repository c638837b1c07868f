"""`pi-agents worker` processes for tests and benchmarks: started on one store, each
with a home of its own, found in the store's registry, killed or stopped."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from piagents.store.base import Store


@dataclass
class WorkerProcess:
    """One worker: its process, and its token once it registered."""

    process: subprocess.Popen[bytes]
    home: Path
    token: str = ""
    log: Path = field(default_factory=Path)

    @property
    def pid(self) -> int:
        return self.process.pid

    def kill(self) -> None:
        """kill -9: no clean-up of any kind."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def pause(self) -> None:
        """SIGSTOP: alive but silent, as a worker cut off from the network is."""
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.process.send_signal(signal.SIGCONT)

    def stop(self, timeout: float = 20.0) -> int:
        self.resume()  # a paused worker cannot handle its SIGTERM
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                return self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
        return self.process.wait(10)


def start_workers(
    store_url: str,
    homes: Sequence[Path],
    *,
    capacity: int = 4,
    poll: float = 0.5,
    pythonpath: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    settings: Mapping[str, object] | None = None,
) -> list[WorkerProcess]:
    """Start a worker per home (their logs in `<home>/worker.log`), each home's
    `settings.json` made of `settings` when given."""
    extra = {**os.environ, **(env or {})}
    if pythonpath:
        extra["PYTHONPATH"] = os.pathsep.join(
            [*pythonpath, *filter(None, [extra.get("PYTHONPATH")])]
        )
    workers = []
    for home in homes:
        home.mkdir(parents=True, exist_ok=True)
        if settings is not None:
            (home / "settings.json").write_text(json.dumps(settings))
        log = home / "worker.log"
        with open(log, "ab") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "piagents.cli", "worker", "--store", store_url,
                 "--capacity", str(capacity), "--poll", str(poll), "--home", str(home)],
                stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=extra,
                start_new_session=True,
            )  # fmt: skip
        workers.append(WorkerProcess(process, home, log=log))
    return workers


async def registered(store: Store, workers: Sequence[WorkerProcess], timeout: float = 60.0) -> None:
    """Wait until every worker has registered alive and is listening for placements
    (it says `ready`); fill in their tokens."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        by_pid = {w.pid: w.token for w in store.workers() if w.kind == "worker" and w.alive}
        ready = all(w.pid in by_pid and b"ready" in w.log.read_bytes() for w in workers)
        if ready:
            for w in workers:
                w.token = by_pid[w.pid]
            return
        for w in workers:
            if w.process.poll() is not None:
                raise RuntimeError(f"worker {w.pid} exited: {w.log.read_text()[-2000:]}")
        if loop.time() > deadline:
            raise TimeoutError(f"workers not registered within {timeout} s")
        await asyncio.sleep(0.05)
