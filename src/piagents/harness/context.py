"""Build the messages a model sees from a session's entries (pure functions)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from piagents.ai.messages import (
    AssistantMessage,
    Message,
    TextContent,
    ToolResultMessage,
    UserMessage,
)
from piagents.store.records import CompactionEntry, ContextItem, Entry, MessageEntry

MISSING_RESULT_TEXT = "No result provided"

SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n"
    "<summary>\n"
)
SUMMARY_SUFFIX = "\n</summary>"


def summary_message(entry: CompactionEntry) -> UserMessage:
    return UserMessage(
        (TextContent(SUMMARY_PREFIX + entry.summary + SUMMARY_SUFFIX),), entry.timestamp
    )


DROPPED = frozenset(("error", "aborted"))  # stop reasons of messages no model sees again


def keeps(message: Message) -> bool:
    """Aborted and errored assistant messages never reach a model."""
    return not (isinstance(message, AssistantMessage) and message.stop_reason in DROPPED)


def context_entries(entries: Sequence[Entry]) -> list[Entry]:
    """The entries in effect: from the latest compaction's first kept entry on."""
    last = None
    for i in range(len(entries) - 1, -1, -1):
        if type(entries[i]) is CompactionEntry:  # exact: runs over every entry of a session
            last = i
            break
    if last is None:
        return list(entries)
    compaction = entries[last]
    assert isinstance(compaction, CompactionEntry)
    start = last
    if compaction.first_kept_entry_id is not None:
        for i in range(last):
            if entries[i].id == compaction.first_kept_entry_id:
                start = i
                break
    kept = [e for e in entries[start:last] if isinstance(e, MessageEntry)]
    return [compaction, *kept, *entries[last + 1 :]]


def items_in_effect(entries: Sequence[Entry]) -> list[ContextItem]:
    """The messages and the compaction of `context_entries(entries)`, in its order."""
    items: list[ContextItem] = []
    for e in context_entries(entries):
        if isinstance(e, MessageEntry):
            items.append(e.message)
        elif isinstance(e, CompactionEntry):
            items.append(e)
    return items


def in_effect(items: Sequence[ContextItem]) -> Sequence[ContextItem]:
    """Items read from the latest compaction's first kept entry on, put in context order:
    the compaction, the messages it kept, then everything after it."""
    types = list(map(type, items))  # searched in C: this may be 100,000 items
    types.reverse()
    try:
        i = len(items) - 1 - types.index(CompactionEntry)
    except ValueError:
        return items
    kept = [m for m in items[:i] if type(m) is not CompactionEntry]
    return [items[i], *kept, *items[i + 1 :]]


def build_context(entries: Iterable[Entry]) -> list[Message]:
    """Messages for the model, with results matched to calls.

    Aborted/errored assistant messages are dropped (and results of their calls);
    a tool call without a result gets an error result right after its message.
    """
    out: list[Message] = []
    for e in context_entries(list(entries)):
        if isinstance(e, CompactionEntry):
            out.append(summary_message(e))
        elif isinstance(e, MessageEntry) and keeps(e.message):
            out.append(e.message)
    return repair_tool_results(out)


def missing_results(open_calls: dict[str, str], timestamp: int) -> list[ToolResultMessage]:
    """Error results for tool calls (id -> name) that never got one.

    They carry the time of the message that made the calls, so the same entries
    always give the same context.
    """
    return [
        ToolResultMessage(call_id, name, (TextContent(MISSING_RESULT_TEXT),), None, True, timestamp)
        for call_id, name in open_calls.items()
    ]


def repair_tool_results(messages: Sequence[Message]) -> list[Message]:
    out: list[Message] = []
    open_calls: dict[str, str] = {}  # id -> name, of the latest assistant message
    calls_at = 0  # its time

    def close_open() -> None:
        out.extend(missing_results(open_calls, calls_at))
        open_calls.clear()

    for m in messages:
        if isinstance(m, ToolResultMessage):
            if m.tool_call_id in open_calls:
                del open_calls[m.tool_call_id]
                out.append(m)
            continue  # a result whose call is not in context is dropped
        close_open()
        out.append(m)
        if isinstance(m, AssistantMessage):
            open_calls, calls_at = {c.id: c.name for c in m.tool_calls}, m.timestamp
    close_open()
    return out
