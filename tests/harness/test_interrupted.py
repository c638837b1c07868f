"""What a turn cut off by its process's death left in its session, as another process
that takes the session over reads it."""

from __future__ import annotations

from piagents.ai.messages import (
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from piagents.harness.interrupted import (
    INTERRUPTED_TOOL_TEXT,
    interrupted_results,
    open_calls,
    started,
)
from piagents.store.records import MessageEntry


def _asks(*calls: tuple[str, str], at: int = 10) -> MessageEntry:
    return MessageEntry(
        AssistantMessage(
            tuple(ToolCall(name=name, args={}, id=cid) for cid, name in calls),
            stop_reason="toolUse",
            timestamp=at,
        )
    )


def _result(cid: str, name: str) -> MessageEntry:
    return MessageEntry(ToolResultMessage(cid, name, (TextContent("ok"),)))


def _user(text: str, at: int) -> MessageEntry:
    return MessageEntry(UserMessage((TextContent(text),), at))


def test_the_calls_of_the_last_answer_that_have_no_result_are_open() -> None:
    entries = [_user("go", 5), _asks(("a", "bash"), ("b", "read")), _result("a", "bash")]
    assert open_calls(entries) == [("b", "read")]


def test_nothing_is_open_once_every_call_has_its_result_or_the_user_spoke_after() -> None:
    done = [_asks(("a", "bash")), _result("a", "bash")]
    assert open_calls(done) == []
    assert open_calls([_asks(("a", "bash")), _user("later", 20)]) == []
    assert open_calls([]) == []


def test_an_answer_that_failed_asks_for_nothing() -> None:
    failed = AssistantMessage(
        (ToolCall(name="bash", args={}, id="a"),), stop_reason="error", timestamp=1
    )
    assert open_calls([MessageEntry(failed)]) == []


def test_each_open_call_ends_with_an_error_result_saying_it_was_interrupted() -> None:
    [entry] = interrupted_results([("b", "read")])
    message = entry.message
    assert isinstance(message, ToolResultMessage)
    assert (message.tool_call_id, message.tool_name, message.is_error) == ("b", "read", True)
    assert message.text == INTERRUPTED_TOOL_TEXT
    assert "was not run again" in INTERRUPTED_TOOL_TEXT


def test_an_input_had_started_when_its_message_is_in_the_session_after_it_was_accepted() -> None:
    entries = [_user("old", 5), _user("hello", 20), _asks(("a", "bash"), at=30)]
    assert started(entries, "hello", accepted_ms=15)
    assert not started(entries, "queued", accepted_ms=15)  # still in the loop's queue
    # The same words said before it was accepted are another input's.
    assert not started([_user("hello", 5)], "hello", accepted_ms=15)
