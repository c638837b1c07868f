"""A batch of store calls is one transaction: all of it is committed, or none (on
every store: a batch's calls are savepoints of one transaction)."""

from __future__ import annotations

import pytest

from piagents.ai.messages import UserMessage
from piagents.store.base import Store, StoreError
from piagents.store.records import MessageEntry, SessionRecord, new_id


def session(name: str) -> SessionRecord:
    return SessionRecord(id=new_id(), cwd="/", name=name)


def test_calls_in_a_batch_are_committed_together(backend) -> None:
    store = backend.open()
    other = backend.open()  # another connection: sees only commits
    a, b = session("a"), session("b")
    with store.batch():
        store.create_session(a)
        store.create_session(b)
        assert store.get_session(a.id) is not None  # its own writes, at once
        assert other.get_session(a.id) is None  # nobody else's yet
    assert other.get_session(a.id) is not None and other.get_session(b.id) is not None


def test_a_batch_that_raises_leaves_nothing(store: Store) -> None:
    a = session("a")
    with pytest.raises(RuntimeError), store.batch():
        store.create_session(a)
        raise RuntimeError("the caller changed its mind")
    assert store.get_session(a.id) is None
    store.create_session(a)  # the store is usable again, the name free
    assert store.get_session(a.id) is not None


def test_a_failed_call_in_a_batch_undoes_only_itself(store: Store) -> None:
    a = session("a")
    with store.batch():
        store.create_session(a)
        with pytest.raises(StoreError):  # same id twice: refused, and caught
            store.create_session(a)
        store.update_session(a.id, name="renamed")
    got = store.get_session(a.id)
    assert got is not None and got.name == "renamed"


def test_a_failed_call_left_uncaught_undoes_the_whole_batch(store: Store) -> None:
    root = session("root")
    store.create_session(root)
    child = SessionRecord(id=new_id(), cwd="/", name="w", owner_id=root.id, root_id=root.id)
    with pytest.raises(StoreError), store.batch():
        store.create_session(child)
        store.create_session(root)  # refused: the batch ends with the error
    assert store.list_sessions(owner_id=root.id) == []


def test_a_read_that_fails_in_a_batch_leaves_the_batch_usable(store: Store, backend) -> None:
    a, b = session("a"), session("b")
    store.create_session(a)
    backend.sql("UPDATE sessions SET thinking = 'huge' WHERE id = ?", a.id)
    with store.batch():
        with pytest.raises(StoreError):
            store.get_session(a.id)  # damaged: refused, and caught
        store.create_session(b)
    assert store.get_session(b.id) is not None


def test_an_atomic_batch_commits_its_calls_together(backend) -> None:
    store = backend.open()
    other = backend.open()
    root = session("root")
    with store.batch(atomic=True):
        store.create_session(root)
        store.append(root.id, [MessageEntry(UserMessage.of("first"))])
        assert other.get_session(root.id) is None
    assert [e.message.text for e in other.entries(root.id)] == ["first"]


def test_an_atomic_batch_in_which_a_write_failed_saves_nothing_even_if_caught(
    store: Store,
) -> None:
    a = session("a")
    with (
        pytest.raises(StoreError, match="nothing of the batch was saved"),
        store.batch(atomic=True),
    ):
        store.create_session(a)
        with pytest.raises(StoreError):  # same id twice: refused, and caught
            store.create_session(a)
        store.update_session(a.id, name="renamed")
    assert store.get_session(a.id) is None
    store.create_session(a)  # the store is usable again
    assert store.get_session(a.id) is not None


def test_an_atomic_batch_goes_on_after_a_read_that_failed(store: Store, backend) -> None:
    a, b = session("a"), session("b")
    store.create_session(a)
    backend.sql("UPDATE sessions SET thinking = 'huge' WHERE id = ?", a.id)
    with store.batch(atomic=True):
        with pytest.raises(StoreError):
            store.get_session(a.id)  # damaged: refused, and caught; nothing was written
        store.create_session(b)
    assert store.get_session(b.id) is not None
