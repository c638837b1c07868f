"""A runtime's presence in its store: registered with its load, its heartbeat renewed
past the lapse, and a root taken over while it was cut off unloaded, never written."""

from __future__ import annotations

import time

import pytest

import piagents
from piagents.ai.messages import UserMessage
from piagents.events.records import TakenOver
from piagents.store.base import LeaseLost, SessionInUse
from piagents.store.records import MessageEntry
from piagents.store.selection import open_store
from piagents.testing import FunctionModel
from support import eventually, until

LAPSE_MS = 300


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest) -> str | None:
    if request.param == "sqlite":
        return None
    return str(request.getfixturevalue("postgres_url"))


def _runtime(home, store_url, answer="ok", **leases):
    settings: dict = {"pi-agents": leases}
    if store_url is not None:
        settings["store"] = store_url
    return piagents.Runtime(home, model=FunctionModel(lambda c: answer), settings=settings)


async def test_a_runtime_registers_with_its_load_and_leaves_the_registry_when_it_closes(
    home, work, store_url
) -> None:
    async with _runtime(home, store_url, leaseRenewMs=20) as rt:
        assert rt.holder is not None
        token = rt.holder.token
        await rt.open_root(cwd=work)
        await rt.open_root(cwd=work)

        def mine():
            return [w for w in rt.store.workers() if w.token == token]

        [me] = await until(lambda: [w for w in mine() if w.load == 2], "a renewal with its load")
        assert (me.kind, me.capacity, me.alive, me.pid) == ("runtime", None, True, rt.holder.pid)
    with _opened(home, store_url) as store:
        assert [w.token for w in store.workers()] == []


class _opened:
    def __init__(self, home, url):
        self.store = open_store(home, url)

    def __enter__(self):
        return self.store

    def __exit__(self, *exc):
        self.store.close()


async def test_the_heartbeat_keeps_a_lease_alive_past_the_lapse_even_with_the_loop_busy(
    home, work, store_url
) -> None:
    async with _runtime(home, store_url, leaseRenewMs=30, leaseLapseMs=LAPSE_MS) as rt:
        root = await rt.open_root(cwd=work)
        lapse = LAPSE_MS / 1000

        def renewed_late() -> bool:  # its latest heartbeat came long after it opened
            [me] = [w for w in rt.store.workers() if w.token == rt.holder.token]
            return time.time() - me.heartbeat_age - me.opened > 3 * lapse

        # Polled without yielding to the event loop: the heartbeat needs none.
        eventually(renewed_late, "renewals past three lapses, the event loop blocked")
        with _opened(home, store_url) as other:
            assert other.lease_of(root.id) == rt.holder


async def test_a_root_taken_over_while_its_runtime_was_cut_off_is_unloaded_there(
    home, tmp_path, work, store_url
) -> None:
    # `cut` renews no heartbeat (as if cut off from the store) until the test says so.
    cut_home, other_home = home, tmp_path / "other-home"
    if store_url is None:
        other_home = home  # one SQLite store: one home
    async with (
        _runtime(cut_home, store_url, leaseRenewMs=600_000, leaseLapseMs=LAPSE_MS) as cut,
        _runtime(other_home, store_url, "taken", leaseRenewMs=30, leaseLapseMs=LAPSE_MS) as other,
    ):
        events = []
        cut.subscribe(events.append)
        root = await cut.open_root(cwd=work)
        await root.prompt("first")

        async def take_over():
            try:
                return await other.open_root(session=root.id)
            except SessionInUse:
                return None

        taken = await until(take_over, "the cut-off runtime's lease to lapse")
        assert other.store.lease_of(root.id) == other.holder
        # Back in touch: its next heartbeat finds the lease gone, and it lets go of the root.
        cut.presence.beat()
        await until(lambda: root.id not in cut.agents, "the root to be unloaded")
        assert [e for e in events if isinstance(e, TakenOver)] == [TakenOver(root.id)]
        with pytest.raises(LeaseLost):
            cut.store.append(root.id, [MessageEntry(UserMessage.of("late"))])
        assert other.store.lease_of(root.id) == other.holder  # its unload released nothing
        assert other.store.states([root.id])[root.id] != "offline"
        await taken.prompt("second")
        texts = [e.message.text for e in other.store.entries(root.id) if hasattr(e, "message")]
        assert texts == ["first", "ok", "second", "taken"]


async def test_a_runtime_that_could_not_register_opens_and_its_next_heartbeat_registers_it(
    home, work
) -> None:
    from piagents.store.base import StoreBusy
    from piagents.store.sqlite import SQLiteStore

    class BusyAtFirst(SQLiteStore):
        def register(self, registration):
            raise StoreBusy(f"{self.location}: busy")

    store = BusyAtFirst(home / "store.db")
    async with piagents.Runtime(home, model=FunctionModel(lambda c: "ok"), store=store) as rt:
        assert rt.store.workers() == []
        rt.presence.beat()
        assert [(w.token, w.load) for w in rt.store.workers()] == [(rt.holder.token, 0)]
        await rt.open_root(cwd=work)
        rt.presence.beat()
        assert [(w.token, w.load) for w in rt.store.workers()] == [(rt.holder.token, 1)]


def test_front_ends_are_told_which_process_runs_a_session_held_elsewhere(tmp_path) -> None:
    from piagents.presence import held_elsewhere
    from piagents.store.base import LeaseHolder, Registration
    from piagents.store.records import SessionRecord
    from piagents.store.sqlite import SQLiteStore

    store = SQLiteStore(tmp_path / "store.db", lease_lapse=600)
    worker = LeaseHolder(4_000_010, "box2", "1a2b3c4d" + "0" * 24, "1")
    other = LeaseHolder(4_000_011, "box3", "ffff" + "0" * 28, "1")
    for sid in ("placed", "managed", "offline"):
        store.create_session(SessionRecord(id=sid, cwd="/w", created=1, updated=1))
    store.register(Registration(worker, kind="worker", capacity=4))
    store.register(Registration(other))
    store.acquire_lease("placed", worker)
    store.acquire_lease("managed", other)
    try:
        assert held_elsewhere(store, ["placed", "managed", "offline"]) == {
            "placed": "worker 1a2b3c4d on box2",
            "managed": "process 4000011 on box3",
        }
    finally:
        store.close()
