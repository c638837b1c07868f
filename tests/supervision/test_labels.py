"""Labels of managed agents: the pattern and the automatic `<definition>-<n>`."""

import pytest

from piagents.supervision.errors import SupervisionError
from piagents.supervision.labels import (
    automatic_label,
    is_valid_label,
    label_base,
    numbered_label,
    validate_label,
)


@pytest.mark.parametrize("label", ["a", "implementer-1", "scout_2", "r2-d2", "a" + "b" * 31, "x-"])
def test_labels_that_match_the_pattern(label):
    assert is_valid_label(label)
    assert validate_label(label) == label


@pytest.mark.parametrize(
    "label",
    ["", "1abc", "-a", "_a", "Implementer", "a b", "a.b", "é", "a" * 33, "abc\n", " abc"],
)
def test_labels_that_do_not_match_the_pattern(label):
    assert not is_valid_label(label)


def test_an_invalid_label_is_an_invalid_request_naming_the_pattern():
    with pytest.raises(SupervisionError) as caught:
        validate_label("Bad Label")
    assert caught.value.to_details() == {
        "category": "invalid_request",
        "message": '`label` "Bad Label" must match ^[a-z][a-z0-9_-]{0,31}$: a lower-case '
        "letter, then up to 31 lower-case letters, digits, `_` or `-`.",
        "operation": "delegate",
        "rollbackOccurred": False,
        "retryAttempted": False,
    }


def test_the_first_automatic_label_is_number_one():
    assert automatic_label("implementer", []) == "implementer-1"


def test_the_smallest_free_number_is_taken():
    taken = {"implementer-1", "implementer-2", "implementer-4"}
    assert automatic_label("implementer", taken) == "implementer-3"


def test_labels_of_other_definitions_do_not_count():
    assert automatic_label("scout", {"implementer-1", "scout-2"}) == "scout-1"


def test_a_freed_number_is_used_again():
    assert automatic_label("scout", {"scout-2", "scout-3"}) == "scout-1"


def test_a_long_definition_is_cut_so_the_label_has_32_characters():
    name = "a" * 32
    assert numbered_label(name, 1) == "a" * 30 + "-1"
    assert numbered_label(name, 10) == "a" * 29 + "-10"
    assert automatic_label(name, {"a" * 30 + "-1"}) == "a" * 30 + "-2"


def test_the_cut_grows_with_the_number():
    name = "b" * 31
    taken = {numbered_label(name, n) for n in range(1, 10)}
    assert automatic_label(name, taken) == "b" * 29 + "-10"
    assert all(is_valid_label(label) for label in taken)


def test_a_name_outside_the_label_alphabet_becomes_a_valid_label():
    assert label_base("Code Reviewer") == "code-reviewer"
    assert label_base("9lives") == "agent-9lives"
    assert label_base("***") == "agent"
    assert automatic_label("Code.Reviewer", []) == "code-reviewer-1"


def test_label_numbers_start_at_one():
    with pytest.raises(ValueError):
        numbered_label("scout", 0)
