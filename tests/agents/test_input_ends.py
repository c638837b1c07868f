"""The ends of inputs: on PostgreSQL a completed run's end is committed on the
store's write thread while the Agent goes on, and what follows it (the event, the
owner's wait, the notification) comes only once the store has it, once."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agent_support import runtime, spawn

from piagents.events import InputEnded
from support import until


async def test_an_end_is_announced_only_once_the_store_has_it_and_only_once(
    home: Path, work: Path, script, store_url: str | None
) -> None:
    script.on("w", lambda call: f"done {sum(m.role == 'user' for m in call.messages)}")
    script.on(None, lambda call: "root turn")
    async with runtime(home, script, store=store_url) as rt:
        seen: list[tuple[str, str, str]] = []

        def on_end(event: InputEnded) -> None:
            [stored] = [
                i for i in rt.store.inputs(recipient_ids=[event.recipient_id])
                if i.id == event.input_id
            ]  # fmt: skip
            seen.append((event.input_id, event.status, stored.status))

        rt.subscribe(on_end, kinds=(InputEnded,))
        root = await rt.open_root(cwd=work)
        wid = (await spawn(root, "w")).details["id"]
        first = await root.call_tool("agent", {"action": "wait", "target": "w", "timeout": 10})
        assert first.text == "done 1"
        for n in (2, 3):
            sent = await root.call_tool(
                "agent", {"action": "send", "target": "w", "message": "more"}
            )
            assert not sent.is_error, sent.text
            got = await root.call_tool("agent", {"action": "wait", "target": "w", "timeout": 10})
            assert got.text == f"done {n}"
        await until(lambda: len([s for s in seen if s[1] == "completed"]) >= 3)
        ended = [i for i in rt.store.inputs(recipient_ids=[wid])]
        assert [i.status for i in ended] == ["completed"] * 3
        mine = [s for s in seen if s[0] in {i.id for i in ended}]
        assert sorted(s[0] for s in mine) == sorted(i.id for i in ended)  # each once
        assert all(status == stored for _, status, stored in seen)  # never before the commit


async def test_the_last_ends_of_a_tree_are_committed_before_its_lease_is_given_up(
    home: Path, work: Path, script, store_url: str | None
) -> None:
    """A runtime closed right after its roots' runs completed: their ends, which may
    still be on the store's write threads, are committed while the lease that fences
    them is still held, so none is lost (or left for the next runtime to abort)."""
    script.on(None, lambda call: "answered")
    async with runtime(home, script, store=store_url) as rt:
        roots = [await rt.open_root(cwd=work) for _ in range(8)]
        answers = await asyncio.gather(*(r.prompt("hello") for r in roots))
        assert answers == ["answered"] * 8  # settled; their ends may not be committed yet
        ids = [r.id for r in roots]
    async with runtime(home, script, store=store_url) as rt:
        inputs = rt.store.inputs(recipient_ids=ids)
        assert len(inputs) == 8
        assert {(i.status, i.result) for i in inputs} == {("completed", "answered")}
