"""The supervision error: a frozen record that is raised, its details object and its text."""

import asyncio
import contextlib
import dataclasses
import pickle

import pytest

from piagents.supervision.errors import (
    CATEGORIES,
    SupervisionError,
    invalid_request,
    render_error,
)

BUSY = SupervisionError(
    category="agent_busy",
    message="implementer-1 is settling its result.",
    operation="steer",
    next_action="call list to see its available_actions",
)


def test_the_categories_are_exactly_the_seven_of_the_api():
    assert CATEGORIES == (
        "invalid_request",
        "agent_label_exists",
        "agent_busy",
        "target_not_found",
        "target_ambiguous",
        "rollback_failure",
        "internal_failure",
    )


def test_an_unknown_category_is_refused():
    with pytest.raises(ValueError, match="unknown supervision error category 'oops'"):
        SupervisionError(category="oops", message="m", operation="list")  # type: ignore[arg-type]


def test_the_error_is_an_exception_whose_str_is_its_message():
    with pytest.raises(SupervisionError) as caught:
        raise BUSY
    assert caught.value is BUSY
    assert str(caught.value) == "implementer-1 is settling its result."


def test_the_flags_default_to_false_and_next_action_to_none():
    e = SupervisionError(category="internal_failure", message="m", operation="close")
    assert (e.rollback_occurred, e.retry_attempted, e.next_action) == (False, False, None)


def test_fields_cannot_be_assigned_or_deleted():
    with pytest.raises(dataclasses.FrozenInstanceError):
        BUSY.message = "other"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del BUSY.category
    with pytest.raises(dataclasses.FrozenInstanceError):
        BUSY.extra = 1  # type: ignore[attr-defined]
    assert BUSY.message == "implementer-1 is settling its result."


def test_replace_makes_a_changed_copy():
    rolled_back = BUSY.replace(rollback_occurred=True)
    assert rolled_back.rollback_occurred
    assert not BUSY.rollback_occurred
    assert rolled_back.message == BUSY.message


def test_equal_fields_make_equal_hashable_records():
    twin = dataclasses.replace(BUSY)
    assert twin == BUSY
    assert len({twin, BUSY}) == 1


def test_it_survives_the_exception_machinery_that_assigns_to_exceptions():
    @contextlib.contextmanager
    def scope():
        yield

    with pytest.raises(SupervisionError), scope():
        raise BUSY.replace()  # contextlib assigns __traceback__ when it re-raises
    e = BUSY.replace()
    e.add_note("while closing")
    assert e.__notes__ == ["while closing"]
    try:
        raise e from KeyError("k")
    except SupervisionError as caught:
        assert isinstance(caught.__cause__, KeyError)


async def test_it_can_be_raised_through_an_awaited_task():
    async def fail():
        raise BUSY.replace()

    with pytest.raises(SupervisionError) as caught:
        await asyncio.create_task(fail())
    assert caught.value == BUSY


def test_it_pickles_with_all_its_fields():
    e = BUSY.replace(rollback_occurred=True, retry_attempted=True)
    assert pickle.loads(pickle.dumps(e)) == e


# ---- details --------------------------------------------------------------------


def test_details_have_exactly_the_api_keys_and_next_action_when_set():
    assert BUSY.to_details() == {
        "category": "agent_busy",
        "message": "implementer-1 is settling its result.",
        "operation": "steer",
        "rollbackOccurred": False,
        "retryAttempted": False,
        "nextAction": "call list to see its available_actions",
    }


def test_details_leave_out_next_action_when_there_is_none():
    e = SupervisionError(
        category="rollback_failure",
        message="The worker could not be stopped.",
        operation="delegate",
        rollback_occurred=True,
        retry_attempted=True,
    )
    assert e.to_details() == {
        "category": "rollback_failure",
        "message": "The worker could not be stopped.",
        "operation": "delegate",
        "rollbackOccurred": True,
        "retryAttempted": True,
    }


def test_details_come_back_as_the_same_error():
    assert SupervisionError.from_details(BUSY.to_details()) == BUSY
    plain = invalid_request("list", "m")
    assert SupervisionError.from_details(plain.to_details()) == plain


@pytest.mark.parametrize(
    "details",
    [
        {"category": "agent_busy", "message": "m", "operation": "steer"},
        {**BUSY.to_details(), "extra": 1},
        {**BUSY.to_details(), "rollbackOccurred": "no"},
        {**BUSY.to_details(), "message": 7},
        {**BUSY.to_details(), "category": "bad"},
    ],
)
def test_malformed_details_are_refused(details):
    with pytest.raises(ValueError):
        SupervisionError.from_details(details)


def test_invalid_request_builds_an_invalid_request_error():
    e = invalid_request("delegate", "`task` must be non-empty.", next_action="retry with a task")
    assert e == SupervisionError(
        category="invalid_request",
        message="`task` must be non-empty.",
        operation="delegate",
        next_action="retry with a task",
    )


# ---- text -----------------------------------------------------------------------


def test_error_text_is_one_prefixed_line_when_there_is_nothing_more():
    e = invalid_request("continue", "Field `cwd` is not allowed for continue.")
    assert render_error(e) == (
        "Error [invalid_request] continue: Field `cwd` is not allowed for continue."
    )


def test_error_text_puts_the_next_action_on_its_own_line():
    assert render_error(BUSY) == (
        "Error [agent_busy] steer: implementer-1 is settling its result.\n"
        "Next action: call list to see its available_actions"
    )


def test_error_text_states_the_flags_when_either_is_set():
    e = SupervisionError(
        category="rollback_failure",
        message="The new generation could not be removed.",
        operation="delegate",
        rollback_occurred=False,
        retry_attempted=True,
        next_action="call list before delegating again",
    )
    assert render_error(e) == (
        "Error [rollback_failure] delegate: The new generation could not be removed.\n"
        "rollbackOccurred=false retryAttempted=true\n"
        "Next action: call list before delegating again"
    )
