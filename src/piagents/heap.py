"""Keeping Python's cycle collector off long-lived Agents (process-wide; chosen).

A loaded Agent is about 110 objects the cycle collector tracks (its loop, session,
tasks, hooks), and they live as long as the Agent. CPython rescans its whole heap
each time the oldest generation has grown by a quarter, so a burst of spawns pays
for every Agent loaded before it again and again: with 10,000 Agents loaded, the
full passes were 40% of the process's CPU (bench/RESULTS.md). `LongLivedAgents`
freezes the heap (`gc.freeze()`: what exists then is never scanned again) each time
the number of loaded Agents has grown by a quarter, and unfreezes it once a fifth of
the Agents loaded at the last freeze have gone offline, so that what they leave
behind is collected; `release()` unfreezes for good.

While the heap is frozen it also lets the youngest generation grow to `YOUNG`
objects before a pass (CPython's default is 700): loading one Agent allocates
hundreds of objects that live on, and at 700 every few spawns paid a young pass and
every tenth one a middle pass over the survivors (a tenth of a burst of 1,000
spawns, bench/RESULTS.md). A young pass also walks every stream in flight (each
Agent's generators and futures are young again at every delta): at 10,000, the
passes after a freeze in a burst of 1,000 streaming spawns cost 1.5-3 ms each and
collected nothing. The middle generation is passed over as often as before in
objects (`MIDDLE_OBJECTS` at most between its passes), so no pass walks more than
it did. Unfreezing gives the thresholds back as they were.

It is process-wide: a freeze also spares the embedder's own objects, and unfreezing
undoes a `gc.freeze()` the embedder made itself (before forking, say). So the
`pi-agents` command chooses it for its processes, and an embedder chooses it with
`piagents.settle_long_lived(runtime)`.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import TYPE_CHECKING

from piagents.events.records import AgentLoaded, AgentUnloaded, RuntimeEvent

if TYPE_CHECKING:
    from piagents.runtime import Runtime

GROWTH = 1.25  # loaded Agents grown by this factor since the last freeze: freeze again
SHRINK = 0.8  # loaded Agents down to this share of the last freeze: unfreeze
MINIMUM = 256  # fewer loaded Agents than this: the collector's passes are cheap
YOUNG = 50_000  # objects allocated before a young pass, while frozen
MIDDLE_OBJECTS = 100_000  # young objects passed into the middle generation between its passes


class LongLivedAgents:
    """Counts loaded Agents from the runtime's events and freezes or unfreezes the heap
    as they grow or go offline (see the module docstring)."""

    def __init__(
        self,
        *,
        minimum: int = MINIMUM,
        freeze: Callable[[], None] = gc.freeze,
        unfreeze: Callable[[], None] = gc.unfreeze,
        thresholds: Callable[[], tuple[int, int, int]] = gc.get_threshold,
        set_thresholds: Callable[[int, int, int], None] = gc.set_threshold,
    ) -> None:
        self._minimum = minimum
        self._freeze = freeze
        self._unfreeze = unfreeze
        self._thresholds = thresholds
        self._set_thresholds = set_thresholds
        self._given: tuple[int, int, int] | None = None  # the thresholds before the first freeze
        self.loaded = 0
        self.frozen_at = 0  # Agents loaded at the last freeze; 0: nothing frozen
        self.freezes = 0

    def __call__(self, event: RuntimeEvent) -> None:
        if isinstance(event, AgentLoaded):
            self.loaded += 1
            mark = max(self._minimum, int(self.frozen_at * GROWTH))
            if self.loaded >= mark:
                self._freeze()
                if self._given is None:
                    self._given = young, middle, old = self._thresholds()
                    if young < YOUNG:
                        middle = min(middle, max(1, MIDDLE_OBJECTS // YOUNG))
                        self._set_thresholds(YOUNG, middle, old)
                self.frozen_at = self.loaded
                self.freezes += 1
        elif isinstance(event, AgentUnloaded):
            self.loaded = max(0, self.loaded - 1)
            if self.frozen_at and self.loaded <= self.frozen_at * SHRINK:
                self.release()

    def release(self) -> None:
        """Unfreeze what was frozen: the collector looks at all of it again, as often
        as before the first freeze."""
        if self.frozen_at:
            self._unfreeze()
            self.frozen_at = 0
        if self._given is not None:
            self._set_thresholds(*self._given)
            self._given = None


def settle_long_lived(runtime: Runtime, *, minimum: int = MINIMUM) -> Callable[[], None]:
    """Keep the collector off `runtime`'s long-lived Agents once `minimum` are loaded
    (see the module docstring); returns what stops it and unfreezes the heap."""
    policy = LongLivedAgents(minimum=minimum)
    policy.loaded = len(runtime.agents)
    unsubscribe = runtime.event_hub.subscribe(policy, (AgentLoaded, AgentUnloaded))

    def stop() -> None:
        unsubscribe()
        policy.release()

    return stop
