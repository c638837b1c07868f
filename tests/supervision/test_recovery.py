"""Whether a generation's runtime on another machine still runs: its heartbeat in the
store's registry says so (a pid proves nothing there)."""

from __future__ import annotations

from pathlib import Path

from piagents.store.base import LeaseHolder, Registration
from piagents.store.sqlite import SQLiteStore
from piagents.supervision.placement import presence_of
from support import eventually


def test_a_holder_on_another_machine_is_alive_while_its_heartbeat_is_and_gone_after(
    tmp_path: Path,
) -> None:
    holder = LeaseHolder(4_000_020, "another-machine", "e" * 32, "1")
    fresh = SQLiteStore(tmp_path / "store.db", lease_lapse=600)
    lapsing = SQLiteStore(tmp_path / "store.db", lease_lapse=0.3)
    try:
        fresh.register(Registration(holder, kind="worker", capacity=2))
        assert presence_of(fresh, holder) == "alive"
        eventually(
            lambda: presence_of(lapsing, holder) == "gone",
            "its heartbeat to lapse",
        )
        unlisted = LeaseHolder(4_000_021, "another-machine", "d" * 32, "1")
        assert presence_of(fresh, unlisted) == "unknown"
    finally:
        fresh.close()
        lapsing.close()
