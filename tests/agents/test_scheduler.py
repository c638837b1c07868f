"""SlotScheduler (spec §4): slots, FIFO grants, resuming first, and cancellation."""

import asyncio

import pytest

from piagents.agents.scheduler import SlotScheduler
from support import settled


async def settle():
    """Let tasks that were just granted a slot (or cancelled) run as far as they can."""
    await settled()


def start_acquire(slots, agent_id, *, resuming=False):
    return asyncio.create_task(slots.acquire(agent_id, resuming=resuming))


async def test_reserve_takes_free_slots_up_to_the_capacity():
    slots = SlotScheduler(2)
    assert slots.reserve("a")
    assert slots.reserve("b")
    assert not slots.reserve("c")
    assert slots.holders == {"a", "b"}
    assert slots.free == 0


async def test_an_agent_holding_a_slot_does_not_take_a_second_one():
    slots = SlotScheduler(2)
    assert slots.reserve("a")
    assert slots.reserve("a")
    assert slots.free == 1


async def test_acquire_waits_for_a_released_slot():
    slots = SlotScheduler(1)
    slots.reserve("a")
    waiter = start_acquire(slots, "b")
    await settle()
    assert not waiter.done()
    assert slots.waiting("b")
    slots.release("a")
    await asyncio.wait_for(waiter, 1)
    assert slots.holders == {"b"}
    assert not slots.waiting("b")


async def test_slots_are_granted_in_fifo_order():
    slots = SlotScheduler(1)
    slots.reserve("a")
    waiters = {name: start_acquire(slots, name) for name in ("b", "c", "d")}
    await settle()
    order = []
    for holder in ("a", "b", "c"):
        slots.release(holder)
        await settle()
        granted = [name for name, task in waiters.items() if task.done() and name not in order]
        order.extend(granted)
    assert order == ["b", "c", "d"]
    assert slots.holders == {"d"}


async def test_agents_resuming_after_wait_are_granted_before_agents_starting():
    slots = SlotScheduler(1)
    slots.reserve("a")
    starting = start_acquire(slots, "new")
    await settle()
    resuming = start_acquire(slots, "back", resuming=True)
    await settle()
    slots.release("a")
    await settle()
    assert resuming.done()
    assert not starting.done()
    assert slots.holders == {"back"}
    slots.release("back")
    await asyncio.wait_for(starting, 1)
    assert slots.holders == {"new"}


async def test_resuming_agents_are_granted_in_fifo_order_among_themselves():
    slots = SlotScheduler(1)
    slots.reserve("a")
    first = start_acquire(slots, "r1", resuming=True)
    await settle()
    second = start_acquire(slots, "r2", resuming=True)
    await settle()
    slots.release("a")
    await settle()
    assert first.done()
    assert not second.done()
    slots.release("r1")
    await asyncio.wait_for(second, 1)


async def test_reserve_does_not_jump_ahead_of_queued_acquirers():
    slots = SlotScheduler(1)
    slots.reserve("a")
    queued = start_acquire(slots, "b")
    await settle()
    slots.capacity = 2  # a slot is free, but b queues ahead of c
    assert slots.free == 1
    assert slots.has_waiters()
    assert not slots.reserve("c")
    slots.release("a")
    await asyncio.wait_for(queued, 1)
    assert "c" not in slots.holders
    assert "b" in slots.holders


async def test_reserve_fails_while_others_queue_for_the_only_slot():
    slots = SlotScheduler(1)
    slots.reserve("a")
    queued = start_acquire(slots, "b")
    await settle()
    assert not slots.reserve("c")
    slots.release("a")
    await asyncio.wait_for(queued, 1)
    assert not slots.reserve("c")
    assert slots.holders == {"b"}


async def test_a_cancelled_waiting_acquire_leaves_no_waiter_and_no_slot():
    slots = SlotScheduler(1)
    slots.reserve("a")
    waiter = start_acquire(slots, "b")
    await settle()
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert not slots.waiting("b")
    assert not slots.has_waiters()
    slots.release("a")
    assert slots.holders == set()
    assert slots.free == 1


async def test_a_slot_granted_just_as_its_waiter_is_cancelled_is_given_back():
    slots = SlotScheduler(1)
    slots.reserve("a")
    racer = start_acquire(slots, "b")
    await settle()
    slots.release("a")  # grants b's future...
    assert slots.holders == {"b"}
    racer.cancel()  # ...but b is cancelled before it can resume
    with pytest.raises(asyncio.CancelledError):
        await racer
    assert slots.holders == set()
    assert slots.free == 1
    assert not slots.has_waiters()


async def test_a_slot_given_back_by_a_cancelled_waiter_goes_to_the_next_one():
    slots = SlotScheduler(1)
    slots.reserve("a")
    racer = start_acquire(slots, "b")
    await settle()
    next_in_line = start_acquire(slots, "c")
    await settle()
    slots.release("a")
    racer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await racer
    await asyncio.wait_for(next_in_line, 1)
    assert slots.holders == {"c"}


async def test_releasing_a_slot_that_is_not_held_changes_nothing():
    changes = []
    slots = SlotScheduler(1, on_change=lambda: changes.append(1))
    slots.reserve("a")
    before = len(changes)
    slots.release("nobody")
    assert slots.holders == {"a"}
    assert len(changes) == before


async def test_every_change_of_holders_or_queues_is_reported():
    changes = []
    slots = SlotScheduler(1, on_change=lambda: changes.append(1))
    slots.reserve("a")
    assert len(changes) == 1
    waiter = start_acquire(slots, "b")
    await settle()
    assert len(changes) == 2
    slots.release("a")
    await asyncio.wait_for(waiter, 1)
    assert len(changes) == 3


async def test_capacity_is_never_exceeded_under_contention():
    slots = SlotScheduler(3)
    running = 0
    peak = 0

    async def turn(agent_id):
        nonlocal running, peak
        await slots.acquire(agent_id)
        try:
            running += 1
            peak = max(peak, running)
            await asyncio.sleep(0.001)  # hold the slot a moment, so the turns overlap
        finally:
            running -= 1
            slots.release(agent_id)

    async with asyncio.TaskGroup() as group:
        for i in range(20):
            group.create_task(turn(f"agent-{i}"))
    assert peak == 3
    assert slots.holders == set()
    assert not slots.has_waiters()
