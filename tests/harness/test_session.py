"""A session's context is the same whether built entry by entry, rebuilt on reopen, or pure."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from piagents.ai.messages import (
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from piagents.harness.context import build_context
from piagents.harness.session import Session
from piagents.harness.tokens import context_tokens
from piagents.store import sqlite as sqlite_store
from piagents.store.records import CompactionEntry, Entry, MessageEntry
from piagents.store.sqlite import SQLiteStore

# One step of a conversation; tool results refer to calls by their number.
steps = st.one_of(
    st.tuples(st.just("user"), st.text(max_size=30)),
    st.tuples(st.just("assistant"), st.integers(0, 2), st.sampled_from(["stop", "toolUse"])),
    st.tuples(st.just("dropped"), st.sampled_from(["error", "aborted"]), st.integers(0, 1)),
    st.tuples(st.just("result"), st.integers(0, 9)),
    st.tuples(st.just("usage"), st.integers(1, 5000)),
    st.tuples(st.just("compaction"), st.integers(0, 8)),
)


def entries_of(script: list[tuple]) -> list[Entry]:
    out: list[Entry] = []
    calls: list[str] = []
    for step in script:
        kind = step[0]
        if kind == "user":
            out.append(MessageEntry(UserMessage.of(step[1] or "hi")))
        elif kind in ("assistant", "dropped"):
            n = step[1] if kind == "assistant" else step[2]
            new = [f"c{len(calls) + i}" for i in range(n)]
            calls.extend(new)
            stop = step[2] if kind == "assistant" else step[1]
            content = (TextContent("ok"), *(ToolCall("read", {"path": c}, c) for c in new))
            out.append(MessageEntry(AssistantMessage(content, stop)))
        elif kind == "result" and calls:
            call = calls[step[1] % len(calls)]
            out.append(MessageEntry(ToolResultMessage(call, "read", (TextContent("r" * 40),))))
        elif kind == "usage":
            out.append(MessageEntry(AssistantMessage((TextContent("u"),), usage=Usage(step[1]))))
        elif kind == "compaction" and out:
            kept = out[-1 - step[1] % len(out)].id
            out.append(CompactionEntry("summary", kept, 10))
    return out


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(steps, max_size=40), st.sampled_from([sqlite_store.BLOCK, 3]))
def test_incremental_reopened_and_pure_contexts_agree(tmp_path, monkeypatch, script, block):
    # With blocks of 3 entries, reopening reads packed blocks, cut where the context starts.
    monkeypatch.setattr(sqlite_store, "BLOCK", block)
    store = SQLiteStore(tmp_path / f"s{abs(hash(str(script)))}-{block}.db")
    try:
        live = Session.create(store, cwd="/", model="faux/x")
        for entry in entries_of(script):
            live.append(entry)
        reopened = Session.load(store, live.id)
        expected = build_context(live.entries)
        assert live.context() == expected
        assert reopened.context() == expected
        assert live.context_tokens() == reopened.context_tokens() == context_tokens(expected)
        assert reopened.leaf_id == live.leaf_id
        assert build_context(reopened.entries) == expected
    finally:
        store.close()


class CountingStore(SQLiteStore):
    """Counts the calls that decode a session's entries."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.entry_reads = 0

    def entries(self, *args, **kwargs):
        self.entry_reads += 1
        return super().entries(*args, **kwargs)


def _conversation(session: Session, turns: int) -> None:
    for i in range(turns):
        session.append_message(UserMessage.of(f"question {i}"))
        session.append_message(
            AssistantMessage((TextContent("looking"), ToolCall("read", {}, f"c{i}")), "toolUse")
        )
        session.append_message(ToolResultMessage(f"c{i}", "read", (TextContent("text"),)))


def test_a_reopened_session_reads_its_entries_only_when_asked(tmp_path):
    store = CountingStore(tmp_path / "store.db")
    live = Session.create(store, cwd="/", model="faux/x")
    _conversation(live, 3)
    session = Session.load(store, live.id)
    assert len(session.context()) == 9
    assert session.leaf_id == live.leaf_id
    reply = session.append_message(AssistantMessage((TextContent("done"),)))
    assert reply.parent_id == live.leaf_id  # chained to the last entry without reading them
    assert session.leaf_id == reply.id
    assert store.entry_reads == 0
    assert session.entries == [*live.entries, reply]  # read now, with what was appended
    assert store.entry_reads == 1
    later = session.append_message(UserMessage.of("more"))
    assert session.entries[-1] == later and store.entry_reads == 1


def test_a_compaction_appended_to_a_reopened_session_rebuilds_its_context(tmp_path):
    store = SQLiteStore(tmp_path / "store.db")
    live = Session.create(store, cwd="/", model="faux/x")
    _conversation(live, 3)
    kept = live.entries[6]
    session = Session.load(store, live.id)
    (compaction,) = session.append(CompactionEntry("the first two turns", kept.id, 500))
    assert session.context() == build_context([*live.entries, compaction])
    assert session.context()[0].content[0].text.endswith("the first two turns\n</summary>")
    assert len(session.context()) == 4
    store.close()


def test_a_dropped_message_between_a_call_and_its_result_leaves_them_paired(tmp_path):
    store = SQLiteStore(tmp_path / "store.db")
    live = Session.create(store, cwd="/", model="faux/x")
    call = AssistantMessage((ToolCall("read", {}, "c0"),), "toolUse")
    result = ToolResultMessage("c0", "read", (TextContent("text"),))
    live.append_message(call)
    live.append_message(AssistantMessage((TextContent("overloaded"),), "error"))
    live.append_message(result)
    assert live.context() == Session.load(store, live.id).context() == [call, result]
    store.close()
