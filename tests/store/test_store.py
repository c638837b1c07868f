"""The Store contract, on every store (`conftest.py`: SQLite and PostgreSQL): sessions
and their entries, blocks, leases and generations behave alike whichever holds them."""

import os
import subprocess
import sys

import msgspec
import pytest

from piagents.ai.messages import AssistantMessage, TextContent, UserMessage
from piagents.store import lease
from piagents.store.base import LeaseHolder, SessionInUse, StoreError
from piagents.store.records import (
    CompactionEntry,
    CustomEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionRecord,
    ThinkingLevelChangeEntry,
)
from piagents.store.sqlite_layout import BLOCK


def test_a_session_round_trips_with_all_its_fields(store):
    rec = SessionRecord(
        id="s1",
        cwd="/w",
        model="openai/gpt-5",
        thinking="high",
        name="n",
        owner_id="o",
        root_id="r",
        meta={"k": [1]},
    )
    store.create_session(rec)
    assert store.get_session("s1") == rec


def test_entries_of_every_kind_round_trip_in_order(store):
    store.create_session(SessionRecord(id="s", cwd="/"))
    entries = [
        MessageEntry(UserMessage.of("hi")),
        MessageEntry(AssistantMessage((TextContent("yo"),))),
        ModelChangeEntry("anthropic", "claude"),
        ThinkingLevelChangeEntry("low"),
        CustomEntry("x", {"a": 1}),
    ]
    store.append("s", entries[:2])
    store.append("s", entries[2:])
    assert store.entries("s") == entries


def test_has_entries_tells_an_empty_session_from_one_with_entries(store):
    store.create_session(SessionRecord(id="s", cwd="/"))
    assert not store.has_entries("s")
    store.append("s", [MessageEntry(UserMessage.of("hi"))])
    assert store.has_entries("s")
    assert not store.has_entries("nosuch")


def test_loading_from_the_last_compaction_starts_at_its_first_kept_entry(store):
    store.create_session(SessionRecord(id="s", cwd="/"))
    old = [MessageEntry(UserMessage.of(f"m{i}")) for i in range(5)]
    store.append("s", old)
    comp = CompactionEntry("sum", old[3].id, 100)
    later = MessageEntry(UserMessage.of("after"))
    store.append("s", [comp, later])
    assert store.entries("s", from_last_compaction=True) == [old[3], old[4], comp, later]


def test_appending_updates_the_session_time(store):
    store.create_session(SessionRecord(id="s", cwd="/", updated=1))
    e = MessageEntry(UserMessage.of("hi"))
    store.append("s", [e])
    assert store.get_session("s").updated == e.timestamp


def test_entries_appended_one_at_a_time_read_back_as_one_batch_of_them_does(store):
    # (The PostgreSQL store sends one entry with at most one search document as
    # plain values, a batch as arrays: both must store the same.)
    entries = [
        MessageEntry(UserMessage((TextContent("ask 1"),), 11), id="u1", timestamp=11),
        MessageEntry(
            AssistantMessage((TextContent("answer 1"),), "stop", timestamp=21),
            id="a1",
            timestamp=21,
        ),
        CompactionEntry("summary 1", "u1", 5, id="c1", timestamp=31),
    ]
    for name in ("single", "batch"):
        store.create_session(SessionRecord(id=name, cwd="/", created=1, updated=1))
    for entry in entries:
        store.append("single", [entry])
    store.append("batch", entries)

    assert store.entries("single") == store.entries("batch") == entries
    assert store.latest_requests(["single", "batch"]) == {
        "single": (11, "ask 1"),
        "batch": (11, "ask 1"),
    }
    assert store.get_session("single").updated == store.get_session("batch").updated == 31
    found = {h.session_id: h.text for h in store.search("single", True, [["summary"]])}
    assert found == {"single": "summary 1", "batch": "summary 1"}


def test_nothing_of_a_failed_append_is_visible(store):
    store.create_session(SessionRecord(id="s", cwd="/"))
    e = MessageEntry(UserMessage.of("hi"))
    with pytest.raises(StoreError):
        store.append("missing-session", [e])
    assert store.entries("missing-session") == []


def test_sessions_list_newest_first_and_filter_by_cwd_and_roots(store):
    store.create_session(SessionRecord(id="a", cwd="/x", updated=1))
    store.create_session(SessionRecord(id="b", cwd="/x", updated=3))
    store.create_session(SessionRecord(id="c", cwd="/y", updated=2, owner_id="a", root_id="a"))
    assert [r.id for r in store.list_sessions()] == ["b", "c", "a"]
    assert [r.id for r in store.list_sessions(cwd="/x")] == ["b", "a"]
    assert [r.id for r in store.list_sessions(roots_only=True)] == ["b", "a"]


def test_sessions_made_in_the_same_millisecond_list_newest_first(store):
    store.create_session(SessionRecord(id="r", cwd="/"))
    for name in ("a", "c", "b"):
        store.create_session(
            SessionRecord(id=name, cwd="/", owner_id="r", root_id="r", created=5, updated=5)
        )
    assert [s.id for s in store.list_sessions(root_id="r")] == ["b", "c", "a"]
    assert [s.id for s in store.list_sessions(owner_id="r")] == ["b", "c", "a"]


def test_a_live_lease_holder_is_named_in_the_error(store):
    store.create_session(SessionRecord(id="s", cwd="/"))
    first, second = lease.new_holder(), lease.new_holder()
    try:
        store.acquire_lease("s", first)
        with pytest.raises(SessionInUse) as info:
            store.acquire_lease("s", second)
        assert f"pid {os.getpid()}" in str(info.value)
        assert first.host in str(info.value)
    finally:
        lease.retire(first)
        lease.retire(second)


def test_a_lease_of_a_closed_runtime_is_taken_over(store):
    store.create_session(SessionRecord(id="s", cwd="/"))
    first, second = lease.new_holder(), lease.new_holder()
    store.acquire_lease("s", first)
    lease.retire(first)
    store.acquire_lease("s", second)
    assert store.lease_of("s") == second
    lease.retire(second)


def test_a_lease_of_a_dead_process_is_taken_over(store):
    store.create_session(SessionRecord(id="s", cwd="/"))
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    dead = LeaseHolder(proc.pid, lease.new_holder().host, "t", "1")
    store.acquire_lease("s", dead)
    mine = lease.new_holder()
    store.acquire_lease("s", mine)
    assert store.lease_of("s") == mine
    lease.retire(mine)


def test_a_lease_held_by_another_live_process_is_refused(store):
    store.create_session(SessionRecord(id="s", cwd="/"))
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        other = LeaseHolder(
            proc.pid, lease.new_holder().host, "t", lease.process_start_time(proc.pid)
        )
        store.acquire_lease("s", other)
        with pytest.raises(SessionInUse, match=f"pid {proc.pid}"):
            store.acquire_lease("s", lease.new_holder())
    finally:
        proc.kill()
        proc.wait()


def test_entries_are_stored_as_compact_tagged_messagepack_maps(store, backend):
    store.create_session(SessionRecord(id="s", cwd="/"))
    entry = MessageEntry(UserMessage((TextContent("hi"),), 5), "e1", None, 7)
    store.append("s", [entry])
    body = msgspec.msgpack.decode(backend.rows("SELECT body FROM entries")[0][0])
    assert body == {
        "type": "message",
        "message": {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 5},
        "id": "e1",
        "timestamp": 7,
    }


def _chain(n, start=0):
    return [MessageEntry(UserMessage.of(f"m{start + i}")) for i in range(n)]


def test_every_full_block_of_entries_is_packed_into_one_row(store, backend):
    store.create_session(SessionRecord(id="s", cwd="/"))
    entries = _chain(BLOCK * 2 + 10)
    for i in range(0, len(entries), 7):  # batches that straddle block boundaries
        store.append("s", entries[i : i + 7])
    assert store.entries("s") == entries
    blocks = backend.rows("SELECT first_seq, last_seq FROM entry_blocks ORDER BY first_seq")
    assert blocks == [(0, BLOCK - 1), (BLOCK, 2 * BLOCK - 1)]
    assert backend.rows("SELECT count(*) FROM entries WHERE length(body) > 0") == [(10,)]
    # A new store (another process) finds where packing stopped and goes on from there.
    again = backend.open()
    more = _chain(BLOCK, start=len(entries))
    again.append("s", more)
    assert again.entries("s") == entries + more
    assert backend.rows("SELECT count(*) FROM entry_blocks") == [(3,)]


def test_the_context_start_is_found_inside_packed_blocks(store):
    store.create_session(SessionRecord(id="s", cwd="/"))
    old = _chain(BLOCK + 100)
    store.append("s", old)
    comp = CompactionEntry("sum", old[BLOCK - 3].id, 100)
    later = _chain(BLOCK, start=len(old))
    store.append("s", [comp, *later])  # the compaction itself ends up packed too
    assert store.entries("s", from_last_compaction=True) == [*old[BLOCK - 3 :], comp, *later]


def test_context_items_are_the_messages_and_compactions_from_the_context_start(store):
    store.create_session(SessionRecord(id="s", cwd="/"))
    old = [*_chain(BLOCK), ModelChangeEntry("openai", "gpt-5"), *_chain(100, start=BLOCK)]
    store.append("s", old)
    comp = CompactionEntry("sum", old[BLOCK - 3].id, 100)
    later = [ThinkingLevelChangeEntry("high"), *_chain(BLOCK, start=200), CustomEntry("x", 1)]
    store.append("s", [comp, *later])
    items, leaf_id = store.context_items("s")
    wanted = store.entries("s", from_last_compaction=True)
    assert wanted[0] == old[BLOCK - 3]  # the context starts inside the first block
    assert items == [
        e.message if isinstance(e, MessageEntry) else e
        for e in wanted
        if isinstance(e, MessageEntry | CompactionEntry)
    ]
    assert leaf_id == later[-1].id


def test_an_empty_session_has_no_context_items_and_no_leaf(store):
    store.create_session(SessionRecord(id="s", cwd="/"))
    assert store.context_items("s") == ([], None)


def test_an_unreadable_block_is_a_clear_error_for_its_session_only(store, backend):
    for sid in ("bad", "good"):
        store.create_session(SessionRecord(id=sid, cwd="/"))
        store.append(sid, _chain(BLOCK))
    backend.sql("UPDATE entry_blocks SET body = ? WHERE session_id = 'bad'", b"[{}]")
    with pytest.raises(StoreError, match="session bad has an unreadable entry"):
        store.entries("bad")
    with pytest.raises(StoreError, match="session bad has an unreadable entry"):
        store.context_items("bad")
    assert len(store.context_items("good")[0]) == BLOCK
    assert len(store.entries("good")) == BLOCK


def _generation(**changes):
    from piagents.store.records import GenerationRecord

    fields = dict(
        id="g1",
        label="scout-1",
        definition="scout",
        root_id="lead",
        owner_id="lead",
        session_id="s1",
        cwd="/w",
        task="look",
        placement="inline",
    )
    fields.update(changes)
    return GenerationRecord(**fields)


def _result(i="r1"):
    from piagents.store.records import InputRecord

    return InputRecord(
        id=i,
        root_id="lead",
        recipient_id="lead",
        sender_id="s1",
        kind="notification",
        delivery="steer",
        text="done",
        delivered=False,
        rendered="done",
    )


def test_a_generation_ends_once_with_its_result_in_the_same_transaction(store):
    import msgspec

    g = _generation()
    store.add_generation(g)
    assert store.get_generation("g1") == g
    working = msgspec.structs.replace(g, state="working")
    assert store.update_generation(working, expect_state="starting")
    assert not store.update_generation(g, expect_state="starting")  # someone moved it on
    ended = msgspec.structs.replace(working, state="ended", outcome="completed")
    assert store.update_generation(ended, end=True, result=_result())
    # A second end (a crash recovery racing the worker, say) changes nothing.
    lost = msgspec.structs.replace(working, state="lost")
    assert not store.update_generation(lost, end=True, result=_result("r2"))
    assert store.get_generation("g1") == ended
    assert [r.id for r in store.take_undelivered(["lead"])] == ["r1"]
    assert store.generations(root_id="lead", live=True) == []
    assert store.generations(owner_id="lead", live=False) == [ended]


def test_generations_are_selected_by_root_owner_and_session_oldest_first(store):
    store.add_generation(_generation(id="a"))
    store.add_generation(_generation(id="b", owner_id="s1", session_id="s2", label="x"))
    store.add_generation(_generation(id="c", root_id="other", owner_id="other"))
    assert [g.id for g in store.generations(root_id="lead")] == ["a", "b"]
    assert [g.id for g in store.generations(owner_id="s1")] == ["b"]
    assert [g.id for g in store.generations(session_id="s1")] == ["a", "c"]


def test_a_generations_evidence_is_replaced_whole_and_read_by_any_store(store, backend):
    from piagents.ai.messages import now_ms

    assert store.generation_document("g1", "evidence") is None
    before = now_ms()
    store.put_generation_document("g1", "evidence", '{"recent_output": "one"}')
    store.put_generation_document("g1", "evidence", '{"recent_output": "two"}')
    store.put_generation_document("g2", "evidence", "{}")
    other = backend.open()  # another process, another machine
    body, written = other.generation_document("g1", "evidence")
    assert body == '{"recent_output": "two"}'
    assert before <= written <= now_ms()
    g2 = other.generation_document("g2", "evidence")
    assert g2 is not None and g2[0] == "{}"


def test_an_unreadable_generation_is_a_clear_error(store, backend):
    store.add_generation(_generation())
    backend.sql("UPDATE generations SET body = ?", b"nope")
    with pytest.raises(StoreError, match="unreadable generation record"):
        store.generations(root_id="lead")


def test_entries_after_one_are_read_alone_even_from_packed_blocks(store):
    store.create_session(SessionRecord(id="s", cwd="/"))
    entries = _chain(BLOCK + 20)
    store.append("s", entries)
    assert store.entries("s", after=entries[BLOCK - 5].id) == entries[BLOCK - 4 :]
    assert store.entries("s", after=entries[-1].id) == []
    assert store.entries("s", after="not-there") == entries
    comp = CompactionEntry("sum", entries[10].id, 100)
    store.append("s", [comp])
    assert store.entries("s", from_last_compaction=True, after=entries[3].id)[0] == entries[10]
    assert store.entries("s", from_last_compaction=True, after=entries[15].id)[0] == entries[16]


def test_two_stores_on_one_database_append_to_one_session_in_turn(backend):
    first, second = backend.open(), backend.open()
    first.create_session(SessionRecord(id="s", cwd="/"))
    entries = [MessageEntry(UserMessage.of(f"m{i}")) for i in range(3)]

    first.append("s", [entries[0]])
    second.append("s", [entries[1]])  # another process continued the session
    first.append("s", [entries[2]])

    assert first.entries("s") == entries


def test_a_closed_store_refuses_to_be_used(backend):
    store = backend.open()
    store.create_session(SessionRecord(id="s", cwd="/"))
    store.close()
    with pytest.raises(StoreError):
        store.get_session("s")
    with pytest.raises(StoreError):
        store.create_session(SessionRecord(id="t", cwd="/"))
