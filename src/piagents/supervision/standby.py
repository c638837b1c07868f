"""What a pool worker's standby process (`pi-agents worker --standby`) does before it
has work: everything a generation's process would otherwise do after it was handed
one, in stages, the most needed first.

A process started for a generation spends about half a second importing, then tens of
milliseconds more connecting to the store and laying out its connection, importing
what its first turn uses (the built-in tools, the model registry's local entry), and
importing its provider's SDK (0.3-0.5 s for `openai`, 0.9-1.6 s for `anthropic`
here). A standby does each of those while it waits. Between two stages it looks
whether its worker has handed it a generation: when one is there it stops preparing,
and what is left is done after, as a process started afresh does it, so a standby
still starting when work comes costs no more than that process.

The providers' SDKs come last, on a thread of their own: one of them takes longer to
import than the generation's whole start, so the standby is ready (and reads its
stdin) without waiting for them. A generation handed over while one is importing
shares the interpreter with that import until it ends; no other SDK is begun after.

A store that cannot be opened yet (the server restarting, say) is not an error here:
the generation's process opens its own after the handover, with the errors it reports.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import select
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

from piagents.store.base import StoreError

if TYPE_CHECKING:
    from piagents.store.postgres import PostgresStore

log = logging.getLogger("piagents.worker")

# The provider adapters a generation's model may use, each with the SDK it imports,
# in the order they are imported ahead (the cheaper first). One not installed is left.
PROVIDER_MODULES: tuple[str, ...] = (
    "piagents.ai.openai_completions",
    "piagents.ai.openai_responses",
    "piagents.ai.anthropic_messages",
)


@dataclass
class Prepared:
    """What a standby made ready: the store opened (None: not reached, or not
    openable yet), and the stages done, by name, in order; the thread importing the
    providers' SDKs, and what tells it to begin no more."""

    store: PostgresStore | None = None
    done: tuple[str, ...] = ()
    providers: threading.Thread | None = None
    stop: threading.Event = field(default_factory=threading.Event)

    def work_came(self) -> None:
        """Begin no more preparing: the generation's own work comes first."""
        self.stop.set()

    def finish(self) -> None:
        """Wait for the SDK being imported (before the process exits)."""
        self.stop.set()
        if self.providers is not None:
            self.providers.join()

    def take_store(self) -> PostgresStore | None:
        """The opened store, now the generation's: this standby no longer closes it."""
        store, self.store = self.store, None
        return store

    def close(self) -> None:
        if self.store is not None:
            with contextlib.suppress(StoreError):
                self.store.close()
            self.store = None


def work_arrived(stream: IO[str]) -> bool:
    """Whether the worker has written to the standby's stdin (a generation's id, or
    its end: nothing will come), without reading it."""
    try:
        ready, _, _ = select.select([stream], [], [], 0)
    except (OSError, ValueError):  # not a selectable stream: do not wait on it
        return True
    return bool(ready)


def _open_store(prepared: Prepared, store_url: str) -> bool:
    from piagents.store.postgres import PostgresStore

    try:
        prepared.store = PostgresStore(store_url)
    except StoreError as exc:
        log.warning("standby: the store is not open yet (%s); it opens after the handover", exc)
        return False
    return True


def _start_writes(prepared: Prepared) -> bool:
    if prepared.store is None:
        return False
    try:
        prepared.store.prepare_writes()
    except StoreError as exc:  # its first write connects, as without a standby
        log.warning("standby: no write connection yet (%s)", exc)
        return False
    return True


def _first_turn(home: Path) -> bool:
    """What a generation's runtime and first turn import on first use, and the agent
    definitions of the home and the bundled ones, parsed (`discovery` keeps what it
    parsed, by the text's digest: a definition edited meanwhile is parsed again)."""
    import concurrent.futures.thread  # noqa: F401  (asyncio's executor: `to_thread`)

    import piagents.ai.local  # noqa: F401  (the model registry asks whether it is installed)
    from piagents.harness.tools import shared_builtin_tools
    from piagents.supervision import discovery

    shared_builtin_tools()
    discovery.survey(home, None, trusted=False)
    return True


def _import_providers(stop: threading.Event) -> None:
    for module in PROVIDER_MODULES:
        if stop.is_set():
            return
        with contextlib.suppress(ImportError):  # its SDK is not installed here
            importlib.import_module(module)


def prepare(home: Path, store_url: str | None, arrived: Callable[[], bool]) -> Prepared:
    """Run the stages until they are all done or `arrived()` says work is there; then
    start importing the providers' SDKs. `done` names the stages that made something
    ready (a store that could not be opened is not one of them)."""
    prepared = Prepared()
    stages: list[tuple[str, Callable[[], bool]]] = []
    if store_url is not None:
        stages.append(("store", lambda: _open_store(prepared, store_url)))
        stages.append(("writes", lambda: _start_writes(prepared)))
    stages.append(("first turn", lambda: _first_turn(home)))
    for name, stage in stages:
        if arrived():
            return prepared
        if stage():
            prepared.done += (name,)
    prepared.providers = threading.Thread(
        target=_import_providers, args=(prepared.stop,), name="standby-imports", daemon=True
    )
    prepared.providers.start()
    return prepared
