"""What a model sees of a session: the entries in effect, tool results matched to calls."""

from piagents.ai.messages import (
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from piagents.harness.context import (
    MISSING_RESULT_TEXT,
    build_context,
    context_entries,
    in_effect,
    items_in_effect,
    summary_message,
)
from piagents.store.records import CompactionEntry, MessageEntry, ModelChangeEntry

Q = UserMessage((TextContent("question"),), 1)
CALL = AssistantMessage((ToolCall("read", {"path": "a"}, "c1"),), "toolUse", timestamp=2)
RESULT = ToolResultMessage("c1", "read", (TextContent("text"),), None, False, 3)
ANSWER = AssistantMessage((TextContent("answer"),), timestamp=4)


def test_a_compaction_puts_its_summary_first_then_what_it_kept_then_what_followed():
    e = [MessageEntry(m) for m in (Q, CALL, RESULT, ANSWER)]
    compaction = CompactionEntry("earlier work", e[2].id, 100)
    entries = [*e, ModelChangeEntry("openai", "gpt-5"), compaction, MessageEntry(Q)]
    assert context_entries(entries) == [compaction, e[2], e[3], entries[-1]]
    assert items_in_effect(entries) == [compaction, RESULT, ANSWER, Q]


def test_items_read_from_the_first_kept_entry_are_put_in_context_order():
    older = CompactionEntry("older", None, 10)
    latest = CompactionEntry("latest", None, 10)
    assert in_effect([RESULT, older, ANSWER, latest, Q]) == [latest, RESULT, ANSWER, Q]
    assert in_effect([Q, ANSWER]) == [Q, ANSWER]


def test_the_summary_is_a_user_message_at_the_compaction_time():
    summary = summary_message(CompactionEntry("done so far", None, 10, timestamp=77))
    assert summary == UserMessage(
        (
            TextContent(
                "The conversation history before this point was compacted into the following "
                "summary:\n\n<summary>\ndone so far\n</summary>"
            ),
        ),
        77,
    )


def test_a_call_without_a_result_gets_an_error_result_at_the_call_time():
    context = build_context([MessageEntry(Q), MessageEntry(CALL), MessageEntry(ANSWER)])
    assert context == [
        Q,
        CALL,
        ToolResultMessage("c1", "read", (TextContent(MISSING_RESULT_TEXT),), None, True, 2),
        ANSWER,
    ]


def test_aborted_messages_and_stray_results_are_left_out():
    aborted = AssistantMessage((ToolCall("read", {}, "c2"),), "aborted", timestamp=5)
    stray = ToolResultMessage("c2", "read", (TextContent("late"),), None, False, 6)
    entries = [MessageEntry(m) for m in (Q, CALL, RESULT, aborted, stray, ANSWER)]
    assert build_context(entries) == [Q, CALL, RESULT, ANSWER]
