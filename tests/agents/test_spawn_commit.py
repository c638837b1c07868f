"""A spawn commits the new Agent, its first input and (when it can start at once) its
first message in one transaction; a queued Agent's message enters its conversation
only when its turn starts."""

import sqlite3

from agent_support import runtime, spawn

from piagents.ai.messages import UserMessage
from piagents.store.records import MessageEntry
from support import Gate, until


def user_texts(store, session_id):
    return [
        e.message.text
        for e in store.entries(session_id)
        if isinstance(e, MessageEntry) and isinstance(e.message, UserMessage)
    ]


def statements(rt):
    """The SQL statements the runtime's store runs from now on (its one connection)."""
    seen: list[str] = []
    db: sqlite3.Connection = rt.store._db
    db.set_trace_callback(seen.append)
    return seen


def entry_writes(seen, session_id):
    return [s for s in seen if s.startswith("INSERT INTO entries") and session_id in s]


async def test_a_spawn_that_starts_at_once_is_one_commit_with_its_first_message(home, work, script):
    gate = Gate()
    script.on("*", gate.handler)
    script.on(None, lambda call: "root turn")
    async with runtime(home, script, maxConcurrent=2) as rt:
        root = await rt.open_root(cwd=work)
        seen = statements(rt)
        res = await spawn(root, "a", "count the files")
        child = res.details["id"]
        assert seen.count("COMMIT") == 1
        assert len(entry_writes(seen, child)) == 1
        # Committed before the spawn returned, before the child's loop ran at all.
        [text] = user_texts(rt.store, child)
        assert "count the files" in text
        await until(lambda: gate.started == ["a"])
        # Its turn announced the message and did not write it again.
        assert len(entry_writes(seen, child)) == 1
        assert user_texts(rt.store, child) == [text]
        gate.release("a")
        wait = await root.call_tool("agent", {"action": "wait", "timeout": 10})
        assert "a finished" in wait.text
        assert user_texts(rt.store, child) == [text]


async def test_a_queued_spawn_commits_its_message_only_when_it_starts(home, work, script):
    gate = Gate()
    script.on("*", gate.handler)
    script.on(None, lambda call: "root turn")
    async with runtime(home, script, maxConcurrent=1) as rt:
        root = await rt.open_root(cwd=work)
        await spawn(root, "a")
        queued = await spawn(root, "b", "wait your turn")
        assert queued.details["queued"] is True
        b = queued.details["id"]
        assert user_texts(rt.store, b) == []
        gate.release("a")
        await until(lambda: "b" in gate.started)
        [text] = user_texts(rt.store, b)
        assert "wait your turn" in text
        gate.release("b")
        await root.call_tool("agent", {"action": "wait", "timeout": 10})


async def test_a_spawn_aborted_while_queued_leaves_no_message_behind(home, work, script):
    gate = Gate()
    script.on("*", gate.handler)
    script.on(None, lambda call: "root turn")
    async with runtime(home, script, maxConcurrent=1) as rt:
        root = await rt.open_root(cwd=work)
        await spawn(root, "a")
        queued = await spawn(root, "c", "never mind")
        c = queued.details["id"]
        res = await root.call_tool("agent", {"action": "abort", "target": "c"})
        assert not res.is_error, res.text
        await until(lambda: rt.coordinator.state_of(c) == "idle")
        assert user_texts(rt.store, c) == []
        [ended] = rt.store.inputs(recipient_ids=[c])
        assert ended.status == "aborted"
        gate.release("a")
        await root.call_tool("agent", {"action": "wait", "timeout": 10})
