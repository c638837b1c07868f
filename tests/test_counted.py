"""Counts with their nouns (counted.py): singular for exactly one, plural otherwise."""

from piagents.counted import counted


def test_one_is_singular_and_every_other_count_plural():
    assert counted(1, "second") == "1 second"
    assert counted(1.0, "second") == "1 second"
    assert counted(0, "second") == "0 seconds"
    assert counted(2, "byte") == "2 bytes"
    assert counted(0.5, "second") == "0.5 seconds"
    assert counted(1, "entry", "entries") == "1 entry"
    assert counted(3, "entry", "entries") == "3 entries"
    assert counted(1, "more line") == "1 more line"
