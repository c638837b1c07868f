"""Programs in the store: added running, ended once with their kept values, read newest
first by caller, and stopped when the process that ran them is gone."""

from __future__ import annotations

import uuid

import msgspec
import pytest

from piagents.store.base import Store, StoreDamaged
from piagents.store.records import ProgramRecord, SessionRecord, new_id, new_program_id


def caller(store: Store) -> str:
    record = SessionRecord(id=new_id(), cwd="/", name=None)
    store.create_session(record)
    return record.id


def program(caller_id: str, code: str = "return 1", **extra: object) -> ProgramRecord:
    return ProgramRecord(
        id=new_program_id(), caller_id=caller_id, root_id=caller_id, code=code, **extra
    )


def test_program_ids_are_uuid7_and_sort_by_creation() -> None:
    ids = [new_program_id() for _ in range(200)]
    assert all(uuid.UUID(i).version == 7 for i in ids)
    assert all(uuid.UUID(i).variant == uuid.RFC_4122 for i in ids)
    assert ids == sorted(ids)  # in the order made, though many share a millisecond
    assert len(set(ids)) == 200


def test_a_program_is_added_running_and_ends_once(store: Store) -> None:
    me = caller(store)
    p = program(me, background=True, timeout=5.0)
    store.add_program(p)
    assert store.get_program(p.id) == p
    done = msgspec.structs.replace(p, state="completed", result="Script completed", ended=9)
    assert store.end_program(done, {"count": "3"})
    again = msgspec.structs.replace(p, state="failed", result="late")
    assert not store.end_program(again, {"count": "4"})  # ended already: nothing written
    assert store.get_program(p.id) == done
    assert store.program_values(me) == {"count": "3"}


def test_a_program_is_only_added_running_and_only_ended_not_running(store: Store) -> None:
    me = caller(store)
    with pytest.raises(ValueError):
        store.add_program(program(me, state="completed"))
    p = program(me)
    store.add_program(p)
    with pytest.raises(ValueError):
        store.end_program(p)


def test_later_values_replace_earlier_ones_of_the_same_caller_only(store: Store) -> None:
    me, other = caller(store), caller(store)
    for who, values in ((me, {"a": "1", "b": "2"}), (me, {"a": "10"}), (other, {"a": "x"})):
        p = program(who)
        store.add_program(p)
        store.end_program(msgspec.structs.replace(p, state="completed"), values)
    assert store.program_values(me) == {"a": "10", "b": "2"}
    assert store.program_values(other) == {"a": "x"}


def test_a_callers_programs_newest_first_by_state_and_prefix(store: Store) -> None:
    me, other = caller(store), caller(store)
    made = [program(me, code=f"return {i}") for i in range(5)]
    for p in made:
        store.add_program(p)
    store.add_program(program(other))
    store.end_program(msgspec.structs.replace(made[1], state="failed"))
    assert [p.id for p in store.programs(me)] == [p.id for p in reversed(made)]
    assert [p.id for p in store.programs(me, limit=2, offset=1)] == [made[3].id, made[2].id]
    assert [p.id for p in store.programs(me, offset=4)] == [made[0].id]
    assert [p.id for p in store.programs(me, state="failed")] == [made[1].id]
    assert store.count_programs(me) == 5 and store.count_programs(me, state="running") == 4
    assert [p.id for p in store.programs(me, id_prefix=made[2].id[:30].upper())] == [made[2].id]
    assert store.programs(me, id_prefix="%") == []


def test_a_callers_scripts_and_scopes_are_read_apart_or_together(store: Store) -> None:
    me = caller(store)
    script, scope = program(me), program(me, code="", kind="scope")
    later_script = program(me)
    for p in (script, scope, later_script):
        store.add_program(p)
    assert [p.id for p in store.programs(me)] == [later_script.id, scope.id, script.id]
    assert [p.id for p in store.programs(me, kind="script")] == [later_script.id, script.id]
    assert [p.kind for p in store.programs(me, kind="scope")] == ["scope"]
    assert store.count_programs(me, kind="scope") == 1
    assert store.count_programs(me, kind="script", state="running") == 2
    stopped = store.stop_running_programs(me, "gone", 7)  # a killed process: every kind
    assert {p.id: p.kind for p in stopped} == {
        script.id: "script",
        scope.id: "scope",
        later_script.id: "script",
    }


def test_results_given_to_the_caller_are_marked_returned(store: Store) -> None:
    me = caller(store)
    running, ended = program(me), program(me)
    store.add_program(running)
    store.add_program(ended)
    store.end_program(msgspec.structs.replace(ended, state="completed", result="r"))
    store.mark_programs_returned([running.id, ended.id, "no-such-program"])
    assert [p.id for p in store.programs(me, returned=False)] == [running.id]
    got = store.get_program(ended.id)
    assert got is not None and got.returned and got.result == "r"


def test_programs_left_running_by_a_process_that_died_reopen_stopped(backend) -> None:
    first = backend.open()
    me = caller(first)
    left, done = program(me), program(me)
    first.add_program(left)
    first.add_program(done)
    first.end_program(msgspec.structs.replace(done, state="completed"))
    first.close()  # as a killed process leaves it: `left` still says running
    again = backend.open()
    stopped = again.stop_running_programs(me, "the process running it ended", 42)
    assert [p.id for p in stopped] == [left.id]
    got = again.get_program(left.id)
    assert got is not None and got.state == "stopped"
    assert got.reason == "the process running it ended" and got.ended == 42
    assert again.count_programs(me, state="running") == 0
    done_now = again.get_program(done.id)
    assert done_now is not None and done_now.state == "completed"


def test_a_program_record_changed_from_outside_is_reported_as_damage(store: Store, backend) -> None:
    me = caller(store)
    p = program(me)
    store.add_program(p)
    body = msgspec.json.encode(p).replace(b'"running"', b'"exploded"')
    backend.sql("UPDATE programs SET body = ? WHERE id = ?", body, p.id)
    with pytest.raises(StoreDamaged, match="not valid"):
        store.get_program(p.id)
