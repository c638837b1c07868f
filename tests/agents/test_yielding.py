"""An owned Agent's slot is given up for a wait's duration and taken again before it
goes on; a root holds no slot and gives up nothing."""

from agent_support import runtime, spawn

from piagents.agents.tree import Waiter
from piagents.agents.yielding import slot_given_up
from support import Gate, until


async def test_an_owned_agent_gives_up_its_slot_inside_and_holds_one_again_after(
    home, work, script
):
    gate = Gate()
    script.on("a", gate.handler)
    script.on("b", gate.handler)
    async with runtime(home, script, maxConcurrent=1) as rt:
        root = await rt.open_root(cwd=work)
        await spawn(root, "a")
        await until(lambda: gate.started == ["a"])
        a = next(x for x in rt.agents.values() if x.name == "a")
        slots = rt.coordinator.tree(root.id).slots
        holds_before = slots.holds(a.id)
        async with slot_given_up(rt.coordinator, a.session.record, Waiter(a.id, frozenset())):
            held_inside = slots.holds(a.id)
            await spawn(root, "b")  # the freed slot lets b start
            await until(lambda: gate.started == ["a", "b"])
            gate.release("b")
        holds_after = slots.holds(a.id)
        gate.release("a")
    assert (holds_before, held_inside, holds_after) == (True, False, True)


async def test_a_root_gives_up_nothing(home, work, script):
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        marks_before = rt.coordinator.marks.get(root.id)
        async with slot_given_up(rt.coordinator, root.session.record, Waiter(root.id, frozenset())):
            gave_up = rt.coordinator.marks[root.id].gave_up_slot
        waiters_after = rt.coordinator.marks[root.id].waiters
    assert marks_before is None or not marks_before.waiters
    assert (gave_up, waiters_after) == (False, [])
