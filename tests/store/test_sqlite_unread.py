"""The SQLite store remembers the unread results it last gave while its database is
unchanged, and follows the one change a wait's page makes (marking results read)
without asking again; any other commit, its own or another connection's, makes it
ask again."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from piagents.store.records import InputRecord
from piagents.store.sqlite import SQLiteStore
from piagents.store.sqlite_unread import UnreadResults


def a_result(i: str) -> InputRecord:
    return InputRecord(
        id=i,
        root_id="r",
        recipient_id=f"child-{i}",
        sender_id="r",
        kind="input",
        delivery="followUp",
        text="go",
        has_result=True,
    )


class Counted:
    """The store's query for unread results, counting how often it is asked."""

    def __init__(self, store: SQLiteStore) -> None:
        self.store = store
        self.asked = 0
        unread = store._unread
        self.inner = unread._query

        def query(ids):  # type: ignore[no-untyped-def]
            self.asked += 1
            return self.inner(ids)

        unread._query = query


def ended_store(path: Path, n: int) -> tuple[SQLiteStore, list[str]]:
    store = SQLiteStore(path)
    ids = [f"i{k}" for k in range(n)]
    for i in ids:
        store.add_input(a_result(i))
    store.end_inputs(ids, "completed", "done")
    return store, [f"child-{i}" for i in ids]


def test_the_pages_of_a_wait_ask_the_store_once(tmp_path: Path) -> None:
    store, recipients = ended_store(tmp_path / "s.db", 6)
    counted = Counted(store)
    left = [r.id for r in store.unread_results(recipients)]
    while left:
        page, left = left[:2], left[2:]
        store.mark_read(page)
        assert [r.id for r in store.unread_results(recipients)] == left
    assert counted.asked == 1


def test_other_recipients_another_commit_or_another_connection_ask_again(
    tmp_path: Path,
) -> None:
    store, recipients = ended_store(tmp_path / "s.db", 3)
    counted = Counted(store)
    store.unread_results(recipients)
    store.unread_results(recipients[:2])
    assert counted.asked == 2
    store.add_input(a_result("late"))  # its own commit
    store.unread_results(recipients[:2])
    assert counted.asked == 3
    other = SQLiteStore(tmp_path / "s.db")
    other.mark_read(["i0"])  # another connection's
    assert [r.id for r in store.unread_results(recipients[:2])] == ["i1"]
    assert counted.asked == 4
    store.mark_read(["i1"])
    assert store.unread_results(recipients[:2]) == [] and counted.asked == 4
    other.close()
    store.close()


def test_a_commit_between_the_read_and_marking_read_is_not_missed(tmp_path: Path) -> None:
    store, recipients = ended_store(tmp_path / "s.db", 2)
    unread: UnreadResults = store._unread
    assert [r.id for r in store.unread_results(recipients)] == ["i0", "i1"]
    inner = unread._mark_read

    def and_another_commit(ids):  # type: ignore[no-untyped-def]
        inner(ids)  # then, before the stamp is looked at again, a result of child-i1 ends
        store.add_input(replace(a_result("y"), recipient_id="child-i1"))
        store.end_inputs(["y"], "completed", "y done")

    unread._mark_read = and_another_commit
    store.mark_read(["i0"])
    assert [r.id for r in store.unread_results(recipients)] == ["i1", "y"]
    store.close()
