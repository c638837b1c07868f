"""Keeping the cycle collector off long-lived Agents: the heap is frozen each time the
loaded Agents have grown by a quarter and unfrozen once a fifth of those frozen have
gone offline, so what they leave behind is collected."""

from __future__ import annotations

import gc
import weakref

import piagents
from piagents.events.records import AgentLoaded, AgentUnloaded
from piagents.heap import MIDDLE_OBJECTS, YOUNG, LongLivedAgents
from piagents.testing import FunctionModel


class Calls:
    def __init__(self) -> None:
        self.seen: list[str] = []
        self.thresholds = (700, 10, 10)

    def set_thresholds(self, *values: int) -> None:
        self.thresholds = (values[0], values[1], values[2])

    def freeze(self) -> None:
        self.seen.append("freeze")

    def unfreeze(self) -> None:
        self.seen.append("unfreeze")


def policy(minimum: int = 4) -> tuple[LongLivedAgents, Calls]:
    calls = Calls()
    p = LongLivedAgents(
        minimum=minimum,
        freeze=calls.freeze,
        unfreeze=calls.unfreeze,
        thresholds=lambda: calls.thresholds,
        set_thresholds=calls.set_thresholds,
    )
    return p, calls


def load(p: LongLivedAgents, n: int) -> None:
    for i in range(n):
        p(AgentLoaded(f"a{i}", "root", None, None))


def unload(p: LongLivedAgents, n: int) -> None:
    for i in range(n):
        p(AgentUnloaded(f"a{i}", "root"))


def test_the_heap_is_frozen_at_the_minimum_and_at_each_growth_by_a_quarter() -> None:
    p, calls = policy(minimum=8)
    load(p, 7)
    assert calls.seen == []  # few Agents: the collector's passes are cheap
    load(p, 1)
    assert calls.seen == ["freeze"] and p.frozen_at == 8
    load(p, 1)
    assert calls.seen == ["freeze"]  # 9 < 8 x 1.25
    load(p, 1)
    assert calls.seen == ["freeze", "freeze"] and p.frozen_at == 10
    load(p, 90)
    assert p.freezes == len(calls.seen) and p.frozen_at >= 80


def test_agents_gone_offline_unfreeze_the_heap_so_their_cycles_are_collected() -> None:
    p, calls = policy(minimum=10)
    load(p, 10)
    unload(p, 1)
    assert calls.seen == ["freeze"]  # one of ten gone: not yet
    unload(p, 1)
    assert calls.seen == ["freeze", "unfreeze"] and p.frozen_at == 0
    unload(p, 8)
    assert calls.seen == ["freeze", "unfreeze"]  # nothing frozen to give back
    load(p, 10)
    assert calls.seen[-1] == "freeze"
    p.release()
    p.release()
    assert calls.seen == ["freeze", "unfreeze", "freeze", "unfreeze"]


def test_while_frozen_the_young_generation_grows_larger_and_unfreezing_restores_it() -> None:
    p, calls = policy(minimum=4)
    load(p, 3)
    assert calls.thresholds == (700, 10, 10)
    load(p, 1)
    # The middle generation is passed over no less often in objects: the oldest is kept.
    assert calls.thresholds == (YOUNG, MIDDLE_OBJECTS // YOUNG, 10)
    assert YOUNG * calls.thresholds[1] <= 10_000 * 10
    load(p, 10)  # later freezes do not take the raised one for the one given
    unload(p, 14)
    assert "unfreeze" in calls.seen and calls.thresholds == (700, 10, 10)


def test_a_young_threshold_already_larger_is_left_as_it_is() -> None:
    p, calls = policy(minimum=2)
    calls.thresholds = (80_000, 20, 5)
    load(p, 2)
    assert calls.thresholds == (80_000, 20, 5)
    p.release()
    assert calls.thresholds == (80_000, 20, 5)


async def test_a_runtimes_agents_freeze_the_heap_and_closing_it_lets_them_be_collected(
    home, work
) -> None:
    rt = piagents.Runtime(home=home, model=FunctionModel(lambda call: "done"))
    given = gc.get_threshold()
    stop = piagents.settle_long_lived(rt, minimum=3)
    try:
        async with rt:
            root = await rt.open_root(cwd=work)
            for name in ("a", "b"):
                res = await root.call_tool(
                    "agent", {"action": "spawn", "name": name, "message": "go"}
                )
                assert not res.is_error, res.text
            await root.call_tool("agent", {"action": "wait", "timeout": 10})
            assert gc.get_freeze_count() > 0  # root and two Agents: frozen
            assert gc.get_threshold()[0] == max(YOUNG, given[0])
            gone = [weakref.ref(a) for a in rt.agents.values()]
            del root  # the test's own reference
        # Closing took them offline: the heap was unfrozen and their cycles collected.
        assert gc.get_freeze_count() == 0
        assert gc.get_threshold() == given
        gc.collect()
        assert [r for r in gone if r() is not None] == []
    finally:
        stop()
        gc.unfreeze()
