"""`pi-agents worker --store postgresql://… [--capacity N]`: processes on any machine
that run the roots of one PostgreSQL store, placed on them through DBOS.

Two units are placed on workers: a root with its whole tree (owned Agents run in
their owner's process), placed when an input waits for it and no live holder has
it, until its tree is idle; and a managed agent's generation of a lead whose
placement is `workers`, run in a process of its own that the worker starts
(`generations`). `Worker` is the worker's side, `Placements` its DBOS binding
(`placements`), `placement_ids` the pure naming of placements; see docs/workers.md
for the design and its figures.
"""

from piagents.workers.worker import Worker

__all__ = ["Worker"]
