"""The runtime's event stream: what a spawn, a wait and an abort announce, in order."""

import asyncio
import json

import piagents
from piagents.events import (
    AgentLoaded,
    AgentLoopEvent,
    AgentStateChanged,
    EventsLost,
    InputAccepted,
    InputEnded,
    ResultDelivered,
    RuntimeEvent,
    event_to_json,
)
from piagents.harness.events import MessageCommitted, RunEnded, RunStarted
from piagents.testing import FunctionModel


class Script:
    """Owned Agents answer once their gate opens (`slow`'s never does); the root at once."""

    def __init__(self) -> None:
        self.gates = {"quick": asyncio.Event(), "slow": asyncio.Event()}

    async def __call__(self, call):  # type: ignore[no-untyped-def]
        gate = self.gates.get(call.agent_name or "")
        if gate is not None:
            await gate.wait()
        return f"{call.agent_name} done"


async def until_event(stream, matches) -> None:  # type: ignore[no-untyped-def]
    """Read `stream` until an event `matches`."""
    async with asyncio.timeout(5):
        async for event in stream:
            if matches(event):
                return


def key(event: RuntimeEvent, names: dict[str, str]) -> tuple[object, ...] | None:
    """The fields the sequence is compared on (None: not compared)."""
    name = lambda i: names.get(i or "", "user" if i is None else "?")  # noqa: E731
    if isinstance(event, AgentLoaded):
        return ("loaded", name(event.agent_id), name(event.owner_id))
    if isinstance(event, InputAccepted):
        return ("accepted", name(event.recipient_id), name(event.sender_id), event.kind)
    if isinstance(event, InputEnded):
        return ("ended", name(event.recipient_id), event.status)
    if isinstance(event, ResultDelivered):
        return ("result", name(event.owner_id), name(event.from_id), event.status)
    if isinstance(event, AgentLoopEvent) and isinstance(event.event, RunStarted):
        return ("run_start", name(event.agent_id))
    if isinstance(event, AgentLoopEvent) and isinstance(event.event, RunEnded):
        return ("run_end", name(event.agent_id), event.event.outcome.status)
    return None


def states(events: list[RuntimeEvent], agent_id: str) -> list[str]:
    return [e.state for e in events if isinstance(e, AgentStateChanged) and e.agent_id == agent_id]


async def test_spawn_wait_and_abort_produce_the_expected_event_sequence(home, work) -> None:
    script = Script()
    async with piagents.Runtime(home=home, model=FunctionModel(script)) as rt:
        seen: list[RuntimeEvent] = []
        unsubscribe = rt.subscribe(seen.append)
        root = await rt.open_root(cwd=work)
        names = {root.id: "root"}

        stream = rt.events()
        quick = await root.call_tool("agent", {"action": "spawn", "name": "quick", "message": "a"})
        names[quick.details["id"]] = "quick"
        waiting = asyncio.ensure_future(
            root.call_tool("agent", {"action": "wait", "target": "quick"})
        )
        await until_event(  # the root waits: now quick may finish
            stream, lambda e: isinstance(e, AgentStateChanged) and e.state == "waiting"
        )
        script.gates["quick"].set()
        assert "quick done" in (await waiting).text

        slow = await root.call_tool("agent", {"action": "spawn", "name": "slow", "message": "b"})
        slow_id = slow.details["id"]
        names[slow_id] = "slow"
        await until_event(stream, lambda e: key(e, names) == ("run_start", "slow"))
        stream.close()
        aborted = await root.call_tool("agent", {"action": "abort", "target": "slow"})
        assert not aborted.is_error, aborted.text
        unsubscribe()

    keys = [k for k in (key(e, names) for e in seen) if k is not None]
    assert keys == [
        ("loaded", "root", "user"),
        ("loaded", "quick", "root"),
        ("accepted", "quick", "root", "input"),
        ("run_start", "quick"),
        ("ended", "quick", "completed"),
        ("result", "root", "quick", "completed"),
        ("run_end", "quick", "completed"),
        ("loaded", "slow", "root"),
        ("accepted", "slow", "root", "input"),
        ("run_start", "slow"),
        ("ended", "slow", "aborted"),
        ("result", "root", "slow", "aborted"),
        ("run_end", "slow", "aborted"),
    ]
    quick_id = next(i for i, n in names.items() if n == "quick")
    assert states(seen, quick_id)[0] in ("queued", "running")
    assert states(seen, quick_id)[-1] == "idle"
    assert "running" in states(seen, slow_id)
    assert states(seen, slow_id)[-1] == "idle"
    assert "waiting" in states(seen, root.id)  # the root waited for quick
    # Every event is one JSON object, as `--mode json` prints it.
    for event in seen:
        line = json.loads(json.dumps(event_to_json(event)))
        assert isinstance(line["type"], str)


async def test_a_message_is_announced_only_once_the_store_has_it(home, work) -> None:
    async with piagents.Runtime(home=home, model=FunctionModel(lambda call: "hi")) as rt:
        root = await rt.open_root(cwd=work)
        stored: list[bool] = []

        def check(event: RuntimeEvent) -> None:
            if isinstance(event, AgentLoopEvent) and isinstance(event.event, MessageCommitted):
                texts = [getattr(e, "message", None) for e in rt.store.entries(root.id)]
                stored.append(event.event.message in texts)
            if isinstance(event, InputAccepted):
                stored.append(any(i.id == event.input_id for i in rt.store.inputs()))

        rt.subscribe(check)
        await root.prompt("hello")
    assert stored and all(stored)


async def test_a_subscriber_that_falls_behind_is_told_how_many_events_it_lost(home, work) -> None:
    async with piagents.Runtime(home=home, model=FunctionModel(lambda call: "hi")) as rt:
        subscription = rt.events(maxsize=2)
        root = await rt.open_root(cwd=work)
        await root.prompt("hello")
        subscription.close()
        got = [e async for e in subscription]
    assert len(got) == 3
    assert isinstance(got[2], EventsLost) and got[2].count > 0


async def test_the_stream_ends_when_the_runtime_closes(home, work) -> None:
    async with piagents.Runtime(home=home, model=FunctionModel(lambda call: "hi")) as rt:
        subscription = rt.events()
        await rt.open_root(cwd=work)
    got = [e async for e in subscription]
    assert [e.type for e in got if not isinstance(e, AgentStateChanged)][:1] == ["agent_loaded"]
    assert got[-1].type == "agent_unloaded"


async def test_an_event_published_from_another_thread_is_delivered_on_the_loops() -> None:
    import threading

    from piagents.events import EventHub, SettingsChanged

    hub = EventHub()
    threads: list[int] = []
    hub.subscribe(lambda event: threads.append(threading.get_ident()))
    hub.publish(SettingsChanged("k", 1))  # binds the loop
    await asyncio.to_thread(hub.publish, SettingsChanged("k", 2))
    stream = hub.events()
    hub.publish(SettingsChanged("k", 3))
    async with asyncio.timeout(5):
        await anext(stream)
    assert threads == [threading.get_ident()] * 3


async def test_a_spawn_whose_commit_fails_announces_nothing_and_leaves_nothing(
    home, work, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """The child and its first input are one commit: when it fails, neither is stored,
    and no event announces either (what was published inside is dropped)."""
    from piagents.store.base import StoreError

    seen: list[RuntimeEvent] = []
    async with piagents.Runtime(home=home, model=FunctionModel(lambda call: "hi")) as rt:
        root = await rt.open_root(cwd=work)
        inner = rt.store.inner  # type: ignore[attr-defined]

        def refuse(record):  # type: ignore[no-untyped-def]
            raise StoreError("disk full")

        monkeypatch.setattr(inner, "add_input", refuse)
        unsubscribe = rt.subscribe(seen.append)
        res = await root.call_tool("agent", {"action": "spawn", "name": "w", "message": "hi"})
        unsubscribe()
        assert res.is_error and res.text == "disk full"
        assert rt.store.list_sessions(owner_id=root.id) == []
        assert not [e for e in seen if isinstance(e, AgentLoaded | InputAccepted)]
        monkeypatch.undo()
        again = await root.call_tool("agent", {"action": "spawn", "name": "w", "message": "hi"})
        assert not again.is_error, again.text  # the name is free again
        listed = await root.call_tool("agent", {"action": "list"})
        assert [r["id"] for r in listed.details["agents"]] == [again.details["id"]]
        waited = await root.call_tool("agent", {"action": "wait", "history": 1})
        assert [r["id"] for r in waited.details["results"]] == [again.details["id"]]


async def test_a_listener_of_some_kinds_hears_only_those_and_no_streamed_delta_is_built(
    home, work
) -> None:  # type: ignore[no-untyped-def]
    """A listener that asks for some kinds of event gets only those; while nobody asks
    for loop events, an Agent's deltas are not turned into runtime events at all."""
    from piagents.events import AgentUnloaded

    built: list[AgentLoopEvent] = []

    class Counted(AgentLoopEvent):
        def __post_init__(self) -> None:
            built.append(self)

    async with piagents.Runtime(home=home, model=FunctionModel(lambda c: "hi")) as rt:
        heard: list[RuntimeEvent] = []
        rt.subscribe(heard.append, kinds=(AgentLoaded, AgentUnloaded))
        import piagents.events.hub as hub_module

        real = hub_module.AgentLoopEvent
        hub_module.AgentLoopEvent = Counted  # type: ignore[misc]
        try:
            root = await rt.open_root(cwd=work)
            await root.prompt("hello")
        finally:
            hub_module.AgentLoopEvent = real  # type: ignore[misc]
        assert {type(e) for e in heard} == {AgentLoaded}
        assert built == []
        everything: list[RuntimeEvent] = []
        unsubscribe = rt.subscribe(everything.append)
        await root.prompt("again")
        unsubscribe()
        assert any(isinstance(e, AgentLoopEvent) for e in everything)
    assert [type(e) for e in heard] == [AgentLoaded, AgentUnloaded]
