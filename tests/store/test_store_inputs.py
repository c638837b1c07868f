"""Inputs between Agents, on every store: accepted, delivered once, ended exactly once,
read; listed ended first in the order they ended, then open ones. And what `list`
reads beside them: recorded states, roots and when sessions last got a request."""

from __future__ import annotations

import pytest

from piagents.ai.messages import UserMessage
from piagents.store import lease
from piagents.store.base import Store, StoreError
from piagents.store.records import InputRecord, MessageEntry, SessionRecord


def an_input(i: str, **changes: object) -> InputRecord:
    fields: dict[str, object] = dict(
        id=i, root_id="r", recipient_id="s", sender_id="r", kind="input", delivery="followUp"
    )
    fields.update(text=f"text of {i}", **changes)
    return InputRecord(**fields)  # type: ignore[arg-type]


def test_an_input_is_given_its_seq_in_the_order_accepted(store: Store) -> None:
    first, second = store.add_input(an_input("a")), store.add_input(an_input("b"))
    assert 0 < first.seq < second.seq
    assert store.inputs() == [first, second]


def test_an_input_ends_exactly_once(store: Store) -> None:
    store.add_input(an_input("a", has_result=True))
    store.add_input(an_input("b"))

    ended = store.end_inputs(["a", "nosuch"], "completed", "the result", ended=7)
    again = store.end_inputs(["a"], "failed", "late", aborted_by_owner=True, ended=8)

    assert [(i.id, i.status, i.result, i.ended) for i in ended] == [
        ("a", "completed", "the result", 7)
    ]
    assert again == []
    assert store.inputs(outstanding=False) == ended
    assert [i.id for i in store.inputs(outstanding=True)] == ["b"]


def test_inputs_list_ended_ones_in_the_order_they_ended_then_open_ones(store: Store) -> None:
    for i in "abcd":
        store.add_input(an_input(i))
    store.end_inputs(["c"], "completed", None, ended=10)
    store.end_inputs(["a"], "aborted", None, aborted_by_owner=True, ended=20)

    listed = store.inputs()

    assert [i.id for i in listed] == ["c", "a", "b", "d"]
    assert listed[1].aborted_by_owner and not listed[0].aborted_by_owner


def test_inputs_are_selected_by_recipient_root_result_read_and_delivery(store: Store) -> None:
    store.add_input(an_input("a", has_result=True))
    store.add_input(an_input("b", recipient_id="t", root_id="other"))
    store.add_input(an_input("c", delivered=False))
    store.mark_read(["a"])

    assert [i.id for i in store.inputs(recipient_ids=["s"])] == ["a", "c"]
    assert store.inputs(recipient_ids=[]) == []
    assert [i.id for i in store.inputs(root_id="other")] == ["b"]
    assert [i.id for i in store.inputs(has_result=True)] == ["a"]
    assert [i.id for i in store.inputs(read=True)] == ["a"]
    assert [i.id for i in store.inputs(delivered=False)] == ["c"]


def test_inputs_left_for_a_recipient_are_taken_once_and_marked_delivered(backend) -> None:
    store, other = backend.open(), backend.open()
    store.add_input(an_input("a", delivered=False, rendered="shown a"))
    store.add_input(an_input("b", delivered=False, recipient_id="t"))
    store.add_input(an_input("c"))

    taken = other.take_undelivered(["s", "t"])

    assert [(i.id, i.delivered) for i in taken] == [("a", True), ("b", True)]
    assert taken[0].rendered == "shown a"
    assert store.take_undelivered(["s", "t"]) == []
    assert store.take_undelivered([]) == []
    assert [i.id for i in store.inputs(delivered=False)] == []


def test_a_session_that_took_part_is_kept_and_one_that_did_not_is_discarded(
    store: Store,
) -> None:
    for sid in ("root", "spare", "busy"):
        store.create_session(SessionRecord(id=sid, cwd="/"))
    store.create_session(SessionRecord(id="child", cwd="/", owner_id="root", root_id="root"))
    store.append("spare", [MessageEntry(UserMessage.of("hi"))])
    store.add_input(an_input("i", recipient_id="busy"))

    store.discard_session("spare")
    for kept in ("root", "busy"):
        with pytest.raises(StoreError, match="has inputs or Agents"):
            store.discard_session(kept)

    assert store.get_session("spare") is None and store.entries("spare") == []
    assert store.latest_requests(["spare"]) == {}
    assert {s.id for s in store.list_sessions()} == {"root", "busy", "child"}


def test_roots_mark_changes_when_a_root_is_added_only(store: Store) -> None:
    assert store.roots_mark() == (0, 0)
    store.create_session(SessionRecord(id="r", cwd="/", created=5, updated=5))
    store.create_session(SessionRecord(id="c", cwd="/", owner_id="r", root_id="r", created=9))
    assert store.roots_mark() == (1, 5)


def test_a_state_is_shown_only_while_a_live_runtime_holds_the_session(store: Store) -> None:
    for sid in ("held", "free"):
        store.create_session(SessionRecord(id=sid, cwd="/"))
        store.set_state(sid, "running")
    holder = lease.new_holder()
    try:
        store.acquire_lease("held", holder)
        assert store.states(["held", "free", "nosuch"]) == {"held": "running", "free": "offline"}
        store.release_lease("held", holder)
        assert store.lease_of("held") is None
        assert store.states(["held"]) == {"held": "offline"}
    finally:
        lease.retire(holder)


def test_each_sessions_latest_request_and_when_it_came(store: Store) -> None:
    store.create_session(SessionRecord(id="r", cwd="/", created=1, updated=1))
    store.create_session(
        SessionRecord(id="c", cwd="/", owner_id="r", root_id="r", created=2, updated=2)
    )
    store.create_session(SessionRecord(id="other", cwd="/", created=3, updated=3))
    store.append(
        "c",
        [
            MessageEntry(UserMessage.of("first"), timestamp=10),
            MessageEntry(UserMessage.of("latest"), timestamp=20),
        ],
    )

    assert store.latest_requests(["r", "c", "other"]) == {"c": (20, "latest")}
    assert store.request_times("r", False) == {"r": 1, "c": 20}
    assert store.request_times("r", True) == {"r": 1, "c": 20, "other": 3}


def test_unread_results_are_the_ended_unread_ones_of_those_recipients_as_they_change(
    backend,
) -> None:
    """What a wait reads page after page: it follows marking read, new ends, and
    changes other connections make."""
    store, other = backend.open(), backend.open()
    for i, recipient in (("a", "s"), ("b", "t"), ("c", "s"), ("d", "u")):
        store.add_input(an_input(i, recipient_id=recipient, has_result=True))
    store.add_input(an_input("plain", recipient_id="s"))  # no result to read
    store.end_inputs(["c"], "completed", "c done", ended=10)
    store.end_inputs(["a", "plain"], "failed", "a failed", ended=20)

    def unread() -> list[str]:
        return [r.id for r in store.unread_results(["s", "t"])]

    assert unread() == ["c", "a"] and unread() == ["c", "a"]
    assert store.unread_results([]) == []
    assert [r.result for r in store.unread_results(["s"])] == ["c done", "a failed"]
    store.mark_read(["c"])
    assert unread() == ["a"]
    store.end_inputs(["b"], "completed", "b done", ended=30)
    assert unread() == ["a", "b"]
    other.mark_read(["a"])  # another process's commit
    assert unread() == ["b"]
    other.end_inputs(["d"], "completed", "d done", ended=40)
    assert unread() == ["b"] and [r.id for r in store.unread_results(["u"])] == ["d"]
    store.mark_read(["b", "d"])
    assert unread() == [] and store.unread_results(["u"]) == []
