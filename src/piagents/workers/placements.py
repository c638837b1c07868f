"""The workers' DBOS binding: placements are DBOS workflows on the store's server.

DBOS is one object per process (its class methods), launched once by a worker,
from the worker's event loop, so that its async workflows run on that loop, beside
the worker's runtime (docs/dbos-notes.md, 4). One workflow, `place_root(root_id)`,
holds a root on the worker that runs it until its tree is idle; it records no
step of its own: the store is the record of every turn, DBOS only of where a
root was placed, so a placement recovered after its worker died runs again from
its start, on another worker, and takes the root over from there.

A placement starts in one of three ways (its workflow id names the need and who
started it, `placement_ids.workflow_id`; DBOS runs each id once):

- `start`: a worker with room heard that a root waits and starts it itself (the
  fast path: no queue poll);
- `enqueue`: a root still waits at the next sweep (every worker was full, or
  nobody heard): on the queue `roots`, one partition per root;
- `recover`: a worker whose heartbeat lapsed left placements running: DBOS puts
  them back on their queues (`DBOS._recover_pending_workflows`, idempotent).

`dbos` is imported here only, and only a `pi-agents worker` imports this module.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from piagents.store.base import WaitingRoot
from piagents.workers import placement_ids

log = logging.getLogger("piagents.worker")

Hold = Callable[[str], Awaitable[str]]

# The worker this process runs (DBOS calls workflows by name, in this process).
_hold: Hold | None = None


async def place_root(root_id: str) -> str:
    """The placement workflow: hold `root_id` here until its tree is idle; what
    became of it (`idle`, `held elsewhere`, ...)."""
    if _hold is None:  # a placement recovered into a process that is not a worker
        raise RuntimeError("no pi-agents worker runs in this process")
    return await _hold(root_id)


class Placements:
    """DBOS in this process, for the worker with `executor_id` (its holder token)."""

    def __init__(
        self,
        store_url: str,
        executor_id: str,
        *,
        capacity: int,
        poll_s: float = 0.5,
    ) -> None:
        self.store_url = store_url
        self.executor_id = executor_id
        self.capacity = capacity
        self.poll_s = poll_s
        self._queue: Any = None
        self._workflow: Any = None
        self._recovered: set[str] = set()

    async def launch(self, hold: Hold) -> None:
        """Configure and launch DBOS (blocking: its migrations on a new database, a
        few hundred ms), then declare the queue. Called once, on the worker's loop."""
        global _hold
        from dbos import DBOS, DBOSConfig

        _hold = hold
        config: DBOSConfig = {
            "name": placement_ids.APP_NAME,
            "system_database_url": placement_ids.system_database_url(self.store_url),
            "executor_id": self.executor_id,
            "application_version": placement_ids.APPLICATION_VERSION,
            "log_level": "WARNING",
        }
        DBOS(config=config)
        self._workflow = DBOS.workflow(name="place_root")(place_root)
        DBOS.launch()
        self._queue = await DBOS.register_queue_async(
            placement_ids.QUEUE,
            worker_concurrency=self.capacity,
            partition_concurrency=1,  # a root is placed on one worker at a time
            polling_interval_sec=self.poll_s,
        )

    async def start(self, root: WaitingRoot) -> None:
        """Start the placement of `root` here, now (a no-op when it exists already)."""
        from dbos import DBOS, SetWorkflowID

        with SetWorkflowID(placement_ids.workflow_id(root, self.executor_id)):
            await DBOS.start_workflow_async(self._workflow, root.root_id)

    async def enqueue(self, root: WaitingRoot) -> None:
        """Leave the placement of `root` on the queue, for the first worker with room."""
        from dbos import SetEnqueueOptions, SetWorkflowID

        with (
            SetWorkflowID(placement_ids.workflow_id(root, placement_ids.QUEUED)),
            SetEnqueueOptions(queue_partition_key=root.root_id),
        ):
            await self._queue.enqueue_async(self._workflow, root.root_id)

    def recover(self, dead: Sequence[str]) -> int:
        """Put the placements of workers whose heartbeat lapsed back on their queues
        (once per dead worker in this process; safe on every worker at once)."""
        from dbos import DBOS

        fresh = [d for d in dead if d not in self._recovered]
        if not fresh:
            return 0
        handles = DBOS._recover_pending_workflows(fresh)
        self._recovered.update(fresh)
        if handles:
            log.warning("Recovered %d placement(s) of lapsed worker(s) %s", len(handles), fresh)
        return len(handles)

    def destroy(self) -> None:
        global _hold
        from dbos import DBOS

        DBOS.destroy()
        _hold = None
