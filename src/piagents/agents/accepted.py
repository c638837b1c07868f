"""What accepting a message for an Agent gives back: one typed outcome for every route."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Literal

from piagents.harness.events import RunOutcome
from piagents.store.records import InputRecord

Route = Literal["delivered", "woken", "poked", "serve", "placed", "stored"]
"""How an accepted message reaches its recipient:

- `delivered`: handed to the loop of an Agent loaded in this process;
- `woken`: its Agent was loaded here for it, then it was handed over;
- `poked`: left in the store, and the process holding the Agent (another runtime
  on this home, or a managed agent's worker) was told to look;
- `serve`: left in the store for an offline root, and a background
  `pi-agents serve` process was started to take it;
- `placed`: left in the store for an offline root, and the `pi-agents worker`s of
  the store were told (one of them takes its tree);
- `stored`: left in the store, where the Agent's holder takes it when it next looks.
"""


@dataclass(frozen=True, slots=True)
class Accepted:
    """A message accepted for an Agent: committed to the store as `record`.

    `queued` says the recipient waits for a free slot; `future` (only for the routes
    `delivered` and `woken`) resolves with the outcome of the run that takes it."""

    record: InputRecord
    queued: bool
    future: asyncio.Future[RunOutcome] | None = None
    route: Route = "delivered"
