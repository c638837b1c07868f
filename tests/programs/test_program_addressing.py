"""Programs' short IDs as front ends show them (programs/addressing.py): a script's as its
caller's model reads it, among the scripts only; a scope's among all of them."""

from piagents.programs.addressing import shown_ids
from piagents.store.records import ProgramRecord


def record(program_id, kind="script"):
    return ProgramRecord(id=program_id, caller_id="c", root_id="c", code="", kind=kind)


def test_a_scripts_short_id_ignores_scopes_and_a_scopes_counts_every_program():
    script = record("01234567-aaaa-0000")
    other_script = record("01234567-bbbb-0000")
    scope = record("01234567-aaaa-1111", "scope")
    assert shown_ids([script, other_script, scope]) == {
        script.id: "01234567-a",
        other_script.id: "01234567-b",
        scope.id: "01234567-aaaa-1",
    }
    assert shown_ids([script, scope]) == {script.id: "01234567", scope.id: "01234567-aaaa-1"}
