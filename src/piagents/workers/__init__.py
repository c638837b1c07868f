"""`pi-agents worker --store postgresql://… [--capacity N]`: processes on any machine
that run the roots of one PostgreSQL store, placed on them through DBOS.

The unit placed on a worker is a root with its whole tree (owned Agents run in
their owner's process). A root is placed when an input waits for it and no live
holder has it; it stays on its worker until its tree is idle. `Worker` is the
worker's side, `Placements` its DBOS binding (`placements`), `placement_ids` the
pure naming of placements; see docs/workers.md for the design and its figures.
"""

from piagents.workers.worker import Worker

__all__ = ["Worker"]
