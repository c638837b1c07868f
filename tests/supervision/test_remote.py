"""Starting a managed agent's worker (`supervision.remote`): the lead waits for the
worker's own record of itself, woken by the worker's poke (a drain here, which tells
the coordinator's listeners), not only by its poll."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

import msgspec
import pytest

from piagents.store.records import GenerationRecord
from piagents.store.sqlite import SQLiteStore
from piagents.supervision import remote
from support import until


async def test_the_wait_for_the_workers_record_ends_on_a_poke(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(remote, "_POLL_S", 3600.0)  # only a poke can end the wait in time
    store = SQLiteStore(tmp_path / "store.db")
    recorded = GenerationRecord(
        id="g1", label="scout-1", definition="scout", root_id="lead", owner_id="lead",
        session_id="s-g1", cwd="/", task="t", placement="workers",
    )  # fmt: skip
    store.add_generation(recorded)
    listeners: list[object] = []
    coordinator = SimpleNamespace(listeners=listeners)
    sup = SimpleNamespace(ports=SimpleNamespace(store=lambda: store, coordinator=coordinator))
    try:
        waiting = asyncio.create_task(remote._wait_started(sup, recorded, None, 30.0))  # type: ignore[arg-type]
        await until(lambda: listeners, "the wait to listen")
        # The worker records itself, then pokes the lead: its drain tells the listeners.
        started = msgspec.structs.replace(recorded, token="the worker's", pid=4242)
        assert store.update_generation(started, expect_state="starting")
        for listener in list(listeners):
            listener()  # type: ignore[operator]
        g = await asyncio.wait_for(waiting, 10)
        assert (g.token, g.pid) == ("the worker's", 4242)
        assert listeners == []  # it stopped listening
    finally:
        store.close()
