"""Leases as heartbeats, on both stores: a holder renews all its leases at once; a
lease whose heartbeat lapsed may be taken over; the old holder's writes are then
refused; the registry lists every holder with its heartbeat."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest

from piagents.ai.messages import UserMessage
from piagents.store import lease
from piagents.store.base import (
    LeaseHolder,
    LeaseLost,
    Registration,
    SessionInUse,
    Store,
)
from piagents.store.records import InputRecord, MessageEntry, SessionRecord, new_id
from support import eventually

SHORT = 0.3  # a lapse the test waits out (by its condition, not by sleeping)
LONG = 600.0  # a lapse nothing in a test outlives


@pytest.fixture
def holders() -> Iterator[list[LeaseHolder]]:
    made: list[LeaseHolder] = []
    yield made
    for h in made:
        lease.retire(h)


def _holder(holders: list[LeaseHolder]) -> LeaseHolder:
    holder = lease.new_holder()  # a live runtime of this process
    holders.append(holder)
    return holder


def _session(store: Store, root_id: str | None = None) -> str:
    sid = new_id()
    store.create_session(
        SessionRecord(id=sid, cwd="/w", created=1, updated=1, owner_id=root_id, root_id=root_id)
    )
    return sid


def _entry(text: str) -> MessageEntry:
    return MessageEntry(UserMessage.of(text))


def test_a_renewed_lease_stays_alive_and_a_lapsed_one_counts_as_gone(backend, holders) -> None:
    a = _holder(holders)
    mine = backend.open(lease_lapse=LONG)
    judge = backend.open(lease_lapse=SHORT)
    mine.register(Registration(a))
    sid = _session(mine)
    mine.acquire_lease(sid, a)
    assert mine.renew(Registration(a, load=1)) == frozenset({sid})
    assert mine.lease_of(sid) == a
    eventually(lambda: judge.lease_of(sid) is None, "the heartbeat to lapse")
    assert judge.states([sid]) == {sid: "offline"}
    assert mine.lease_of(sid) == a  # within its (longer) lapse
    (before,) = [w.heartbeat_age for w in mine.workers() if w.token == a.token]
    assert before >= SHORT
    # Renewed before anyone took it: the lease is the holder's still, its heartbeat new.
    assert mine.renew(Registration(a, load=2)) == frozenset({sid})
    (after,) = [(w.heartbeat_age, w.load) for w in mine.workers() if w.token == a.token]
    assert after[0] < before and after[1] == 2


def test_a_lapsed_lease_is_taken_over_and_its_old_holders_writes_are_refused(
    backend, holders
) -> None:
    a, b = _holder(holders), _holder(holders)
    old = backend.open(lease_lapse=LONG)
    old.register(Registration(a))
    sid = _session(old)
    owned = _session(old, root_id=sid)
    old.acquire_lease(sid, a)
    old.append(sid, [_entry("before")])
    old.append(owned, [_entry("owned before")])
    open_input = _open_input(old, sid, owned)
    new = backend.open(lease_lapse=LONG)
    new.register(Registration(b))
    with pytest.raises(SessionInUse):
        new.acquire_lease(sid, b)  # a's heartbeat is fresh
    judge = backend.open(lease_lapse=SHORT)
    judge.register(Registration(b))
    eventually(lambda: judge.lease_of(sid) is None, "a's heartbeat to lapse")
    judge.acquire_lease(sid, b)
    assert new.lease_of(sid) == b

    # The old holder came back: everything it would write to the tree is refused.
    with pytest.raises(LeaseLost, match=f"session {sid} was taken over"):
        old.append(sid, [_entry("after")])
    with pytest.raises(LeaseLost):
        old.append(owned, [_entry("owned after")])
    with pytest.raises(LeaseLost):
        old.set_state(sid, "running")
    with pytest.raises(LeaseLost):  # a message sent from the tree it lost
        old.add_input(
            InputRecord(new_id(), sid, sid, owned, "input", "followUp", "late")  # type: ignore[arg-type]
        )
    with pytest.raises(LeaseLost):  # the input's end is the new holder's to record
        old.end_inputs([open_input], "failed", "the old holder's turn failed")
    assert [i.status for i in new.inputs(recipient_ids=[owned])] == ["outstanding"]
    assert len(new.entries(sid)) == 1
    assert len(new.entries(owned)) == 1
    assert new.states([sid]) == {sid: "idle"}
    # Its renewal says what it still holds (nothing), and its release changes nothing.
    assert old.renew(Registration(a)) == frozenset()
    old.release_lease(sid, a)
    assert new.lease_of(sid) == b
    # The new holder writes as usual.
    judge.append(sid, [_entry("by b")])
    judge.set_state(sid, "running")
    assert new.states([sid]) == {sid: "running"}
    assert [r.status for r in judge.end_inputs([open_input], "completed", "done")] == ["completed"]
    assert old.end_inputs([open_input], "failed", "late") == []  # ended: nothing to refuse


def test_a_holder_that_never_lost_its_lease_writes_after_it_lapsed(backend, holders) -> None:
    a = _holder(holders)
    store = backend.open(lease_lapse=SHORT)
    store.register(Registration(a))
    sid = _session(store)
    store.acquire_lease(sid, a)
    eventually(lambda: store.lease_of(sid) is None, "a's heartbeat to lapse")
    store.append(sid, [_entry("still mine")])  # nobody took it: no fence
    assert len(store.entries(sid)) == 1


def test_a_dead_process_on_this_machine_is_gone_before_its_heartbeat_lapses(
    backend, holders
) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    dead = LeaseHolder(child.pid, socket.gethostname(), "dead", lease.process_start_time(child.pid))
    store = backend.open(lease_lapse=LONG)
    store.register(Registration(dead))
    sid = _session(store)
    store.acquire_lease(sid, dead)
    assert store.lease_of(sid) == dead
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert store.lease_of(sid) is None
    b = _holder(holders)
    store.acquire_lease(sid, b)
    assert store.lease_of(sid) == b


def test_another_machines_lease_lives_by_its_heartbeat_alone(backend, holders) -> None:
    remote = LeaseHolder(4_000_000, "another-machine", "remote", "1")
    fresh = backend.open(lease_lapse=LONG)
    fresh.register(Registration(remote, kind="worker", capacity=4))
    sid = _session(fresh)
    fresh.acquire_lease(sid, remote)
    b = _holder(holders)
    with pytest.raises(SessionInUse, match="on another-machine"):
        fresh.acquire_lease(sid, b)
    lapsing = backend.open(lease_lapse=SHORT)
    eventually(lambda: lapsing.lease_of(sid) is None, "the remote heartbeat to lapse")
    lapsing.acquire_lease(sid, b)
    assert fresh.lease_of(sid) == b


def test_the_registry_lists_holders_with_their_heartbeat_until_they_unregister(
    backend, holders
) -> None:
    a = _holder(holders)
    w = LeaseHolder(4_000_001, "another-machine", "w1", "1")
    store = backend.open(lease_lapse=LONG)
    store.register(Registration(a, load=2))
    store.register(Registration(w, kind="worker", capacity=8))
    listed = {r.token: r for r in store.workers()}
    assert set(listed) == {a.token, "w1"}
    assert (listed[a.token].kind, listed[a.token].capacity, listed[a.token].load) == (
        "runtime",
        None,
        2,
    )
    assert (listed["w1"].kind, listed["w1"].capacity, listed["w1"].host) == (
        "worker",
        8,
        "another-machine",
    )
    assert all(r.alive and 0 <= r.heartbeat_age < LONG for r in listed.values())
    lapsing = backend.open(lease_lapse=SHORT)
    eventually(
        lambda: not any(r.alive for r in lapsing.workers() if r.token == "w1"),
        "the worker's heartbeat to lapse",
    )
    store.renew(Registration(w, kind="worker", capacity=8, load=3))
    assert [r.load for r in store.workers() if r.token == "w1"] == [3]
    store.unregister("w1")
    assert [r.token for r in store.workers()] == [a.token]


def test_a_holder_that_leaves_the_registry_with_a_lease_left_lets_it_lapse_at_once(
    backend, holders
) -> None:
    a, b = _holder(holders), _holder(holders)
    store = backend.open(lease_lapse=LONG)
    store.register(Registration(a))
    kept, released = _session(store), _session(store)
    store.acquire_lease(kept, a)
    store.acquire_lease(released, a)
    store.release_lease(released, a)
    store.unregister(a.token)  # as a runtime closes, its release of `kept` having failed
    assert store.lease_of(kept) is None  # lapsed, though no lapse has passed
    [listed] = [w for w in store.workers() if w.token == a.token]
    assert not listed.alive  # listed while a lease names it, so that lease stays lapsed
    store.acquire_lease(kept, b)
    store.unregister(a.token)
    assert [w.token for w in store.workers()] == [b.token]


def test_holders_long_lapsed_leave_the_registry_unless_a_lease_names_them(
    backend, holders, monkeypatch
) -> None:
    monkeypatch.setattr(lease, "FORGOTTEN_S", SHORT)
    a = _holder(holders)
    store = backend.open(lease_lapse=LONG)
    idle = LeaseHolder(4_000_002, "another-machine", "idle", "1")
    busy = LeaseHolder(4_000_003, "another-machine", "busy", "1")
    store.register(Registration(idle))
    store.register(Registration(busy))
    store.acquire_lease(_session(store), busy)

    def pruned() -> set[str]:
        store.register(Registration(a))  # every registration forgets the long lapsed
        return {w.token for w in store.workers()}

    eventually(lambda: "idle" not in pruned(), "the idle holder to be forgotten")
    assert pruned() == {a.token, "busy"}


def _open_input(store: Store, root_id: str, recipient_id: str, kind: str = "input") -> str:
    from piagents.store.records import InputRecord

    record = InputRecord(
        id=new_id(), root_id=root_id, recipient_id=recipient_id, sender_id=None,
        kind=kind, delivery="followUp", text="x",  # type: ignore[arg-type]
    )  # fmt: skip
    return store.add_input(record).id


def test_roots_with_open_inputs_and_no_live_holder_wait_for_a_worker(backend, holders) -> None:
    a = _holder(holders)
    dead = LeaseHolder(4_000_004, "another-machine", "dead", "1")
    store = backend.open(lease_lapse=LONG)
    store.register(Registration(a))
    free, held, lapsing, idle = (_session(store) for _ in range(4))
    managed = _session(store, root_id=held)
    first = _open_input(store, free, free)
    _open_input(store, free, free)
    _open_input(store, held, held)
    store.acquire_lease(held, a)
    elsewhere = backend.open(lease_lapse=LONG)  # each holder writes through a store of its own
    elsewhere.register(Registration(dead, kind="worker"))
    elsewhere.acquire_lease(lapsing, dead)
    lapsed_input = _open_input(store, lapsing, lapsing)
    ended = _open_input(store, idle, idle)
    store.end_inputs([ended], "completed", "done")
    _open_input(store, idle, idle, kind="control")  # a worker's control: not the root's
    assert [(w.root_id, w.first_input, w.lapsed) for w in store.waiting_roots(10)] == [
        (free, first, None)
    ]
    # Judged by heartbeats alone: once they lapse, `held` waits too (its holder `a` would
    # still be found alive by its process when a worker tried to take its lease).
    lapsed = backend.open(lease_lapse=SHORT)
    eventually(
        lambda: {w.root_id for w in lapsed.waiting_roots(10)} == {free, held, lapsing},
        "the lapsed holders' roots to wait",
    )
    got = {w.root_id: w for w in lapsed.waiting_roots(10)}
    assert (got[lapsing].first_input, got[lapsing].lapsed) == (lapsed_input, "dead")
    assert [w.root_id for w in lapsed.waiting_roots(1)] == [free]  # the longest waiting
    # An open input of a managed agent that a live worker process holds is that worker's.
    store.release_lease(held, a)
    store.end_inputs([i.id for i in store.inputs(recipient_ids=[held])], "completed", "done")
    generation = _holder(holders)
    elsewhere.register(Registration(generation))
    elsewhere.acquire_lease(managed, generation)
    _open_input(store, held, managed)
    assert held not in {w.root_id for w in store.waiting_roots(10)}
    elsewhere.release_lease(managed, generation)
    assert held in {w.root_id for w in store.waiting_roots(10)}
