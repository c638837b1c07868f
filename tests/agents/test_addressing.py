"""Short IDs and address resolution (spec §1): ID, then name, then unique ID prefix."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from piagents.agents.addressing import MIN_SHORT, Candidate, ShortIds, resolve, short_ids

A = "01JAAAAAAAAAAAAAAAAAAAAAAA"
B = "01JBBBBBBBBBBBBBBBBBBBBBBB"
READER = "01JRRRRRRRRRRRRRRRRRRRRRRR"


def test_a_unique_id_is_shown_by_its_first_eight_characters():
    assert short_ids([A, B], READER) == {A: "01JAAAAA", B: "01JBBBBB", READER: "01JRRRRR"}


def test_ids_sharing_ten_characters_get_eleven_character_short_ids():
    first = "0123456789abcdefghijklmnop"
    second = "0123456789zzzzzzzzzzzzzzzz"
    shorts = short_ids([first, second, A])
    assert shorts[first] == "0123456789a"
    assert shorts[second] == "0123456789z"
    assert shorts[A] == "01JAAAAA"


def test_the_reader_counts_among_the_ids_a_short_id_must_differ_from():
    reader = "01JAAAAAAXreader0000000000"  # shares 9 characters with A
    shorts = short_ids([A, B], reader)
    assert shorts[A] == "01JAAAAAAA"
    assert shorts[reader] == "01JAAAAAAX"
    assert shorts[B] == "01JBBBBB"


def test_a_short_id_is_the_shortest_unique_prefix_against_every_other_id():
    ids = ["abcdefgh1xxxxxxx", "abcdefgh12xxxxxx", "abcdefgh123xxxxx", "zzzzzzzzzzzzzzzz"]
    shorts = short_ids(ids)
    assert shorts == {
        "abcdefgh1xxxxxxx": "abcdefgh1x",
        "abcdefgh12xxxxxx": "abcdefgh12x",
        "abcdefgh123xxxxx": "abcdefgh123",
        "zzzzzzzzzzzzzzzz": "zzzzzzzz",
    }
    for agent_id, short in shorts.items():
        others = [other for other in ids if other != agent_id]
        assert not any(other.startswith(short) for other in others)
        assert any(other.startswith(short[:-1]) for other in others) or len(short) == 8


@given(st.sets(st.text("ab", min_size=12, max_size=12), max_size=40))
def test_short_ids_are_the_shortest_unique_prefixes_of_at_least_eight(ids):
    shorts = short_ids(sorted(ids))
    for agent_id in ids:
        others = ids - {agent_id}
        n = MIN_SHORT
        while any(other.startswith(agent_id[:n]) for other in others):
            n += 1
        assert shorts[agent_id] == agent_id[:n]


def test_short_ids_are_a_mapping_made_when_asked_for():
    shorts = ShortIds([B, A, A])
    assert len(shorts) == 2 and list(shorts) == [A, B]
    assert shorts[B] == "01JBBBBB" and shorts.get("01JC") is None
    with pytest.raises(KeyError):
        shorts["01JCCCCCCC"]


def test_an_id_shorter_than_eight_characters_is_shown_whole():
    assert short_ids(["abc"]) == {"abc": "abc"}


def test_an_address_that_is_an_id_resolves_to_that_agent_first():
    # Another Agent is named like A's ID; the ID wins.
    visible = [Candidate(A, "worker"), Candidate(B, A)]
    assert resolve(A, visible).unique == Candidate(A, "worker")


def test_a_name_is_tried_before_an_id_prefix():
    # "01JB" is B's ID prefix, but also A's name: the name wins.
    visible = [Candidate(A, "01JB"), Candidate(B, "reviewer")]
    assert resolve("01JB", visible).unique == Candidate(A, "01JB")


def test_an_address_resolves_by_name():
    visible = [Candidate(A, "worker"), Candidate(B, "reviewer")]
    assert resolve("reviewer", visible).unique == Candidate(B, "reviewer")


def test_a_unique_id_prefix_resolves():
    visible = [Candidate(A, "worker"), Candidate(B, "reviewer")]
    assert resolve("01JB", visible).unique == Candidate(B, "reviewer")


def test_a_name_shared_by_two_agents_is_ambiguous():
    visible = [Candidate(A, "worker"), Candidate(B, "worker"), Candidate(READER, None)]
    result = resolve("worker", visible)
    assert result.unique is None
    assert result.matches == (Candidate(A, "worker"), Candidate(B, "worker"))


def test_a_prefix_shared_by_two_ids_is_ambiguous():
    visible = [Candidate(A, "worker"), Candidate(B, "reviewer")]
    result = resolve("01J", visible)
    assert result.unique is None
    assert result.matches == (Candidate(A, "worker"), Candidate(B, "reviewer"))


def test_an_unknown_address_matches_nothing():
    visible = [Candidate(A, "worker"), Candidate(B, "reviewer")]
    result = resolve("planner", visible)
    assert result.matches == ()
    assert result.unique is None


def test_an_empty_address_matches_nothing():
    assert resolve("", [Candidate(A, "worker")]).matches == ()


def test_an_unnamed_agent_is_not_found_by_a_name():
    visible = [Candidate(A, "worker"), Candidate(B, None)]
    assert resolve("None", visible).matches == ()
