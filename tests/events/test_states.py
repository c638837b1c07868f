"""Per-Agent states: only the Agents a change names (and their roots) are asked."""

from piagents.events import AgentStateChanged, EventHub
from piagents.events.states import StateTracker
from piagents.store.records import SessionRecord


def record(id: str, root: str | None = None) -> SessionRecord:
    return SessionRecord(id=id, cwd="/w", model="faux/f", owner_id=root, root_id=root)


class States:
    def __init__(self) -> None:
        self.now: dict[str, str] = {}
        self.asked: list[str] = []

    def __call__(self, agent_id: str) -> str:
        self.asked.append(agent_id)
        return self.now.get(agent_id, "idle")


def tree(n: int) -> tuple[StateTracker, list[AgentStateChanged], States]:
    hub = EventHub()
    seen: list[AgentStateChanged] = []
    hub.subscribe(lambda e: seen.append(e) if isinstance(e, AgentStateChanged) else None)
    tracker = StateTracker(hub)
    tracker.loaded(record("root"))
    for i in range(n):
        tracker.loaded(record(f"a{i}", "root"))
    states = States()
    tracker.flush(states)
    return tracker, seen, states


def test_a_change_asks_only_the_agent_it_names_and_its_root() -> None:
    tracker, seen, states = tree(1000)
    states.asked.clear()
    seen.clear()
    states.now["a7"] = "running"
    states.now["root"] = "running"

    tracker.touch(["a7"])
    tracker.flush(states)

    assert sorted(states.asked) == ["a7", "root"]
    assert [(e.agent_id, e.state, e.previous) for e in seen] == [
        ("a7", "running", "idle"),
        ("root", "running", "idle"),
    ]


def test_a_change_that_names_nobody_asks_the_busy_agents_and_the_roots() -> None:
    tracker, seen, states = tree(1000)
    states.now.update({"a1": "running", "a2": "running", "root": "running"})
    tracker.touch(["a1", "a2"])
    tracker.flush(states)
    states.asked.clear()
    states.now["a1"] = "waiting"

    tracker.touch([])
    tracker.flush(states)

    assert sorted(states.asked) == ["a1", "a2", "root"]
    assert (seen[-1].agent_id, seen[-1].state) == ("a1", "waiting")


def test_an_unchanged_state_is_not_announced_again() -> None:
    tracker, seen, states = tree(3)
    seen.clear()
    tracker.touch(["a0"])
    tracker.flush(states)
    assert seen == []


def test_the_agents_that_may_be_busy_are_those_busy_when_last_told_and_those_changed() -> None:
    tracker, _, states = tree(1000)
    assert list(tracker.maybe_active("root")) == []  # all idle, none changed since
    states.now.update({"a3": "running", "root": "running"})
    tracker.touch(["a3"])
    assert set(tracker.maybe_active("root")) == {"a3", "root"}  # changed, not yet published
    tracker.flush(states)
    assert set(tracker.maybe_active("root")) == {"a3", "root"}  # published busy
    tracker.touch(["a9"])
    assert set(tracker.maybe_active("root")) == {"a3", "a9", "root"}
    states.now.update({"a3": "idle", "root": "idle"})
    tracker.touch(["a3"])
    tracker.flush(states)
    assert list(tracker.maybe_active("root")) == []
    tracker.touch([])  # a change that names nobody: any of them may be busy
    assert len(set(tracker.maybe_active("root"))) == 1001
    assert list(tracker.maybe_active("another root")) == []
