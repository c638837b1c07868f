"""What a turn cut off by the death of its process left in its session, read when
another process takes the session over (pure functions over the entries).

Only what was committed counts: the assistant message that asked for tools is in
the session once its model call was answered; a tool's result is there once the
tool ended. A call with no result was running (or about to) when the process died.
It is never run again: it gets an error result saying so, and the model decides.
"""

from __future__ import annotations

from collections.abc import Sequence

from piagents.ai.messages import AssistantMessage, TextContent, ToolResultMessage, UserMessage
from piagents.harness.context import context_entries, keeps
from piagents.store.records import Entry, MessageEntry

INTERRUPTED_TOOL_TEXT = (
    "This tool call was interrupted: the process running it stopped before it finished, "
    "and the work was taken over by another one. It was not run again; what it did "
    "before it stopped is not known."
)


def open_calls(entries: Sequence[Entry]) -> list[tuple[str, str]]:
    """The tool calls (id, name) of the latest assistant message that have no result,
    if nothing but their results followed it."""
    calls: dict[str, str] = {}
    for e in context_entries(list(entries)):
        if not isinstance(e, MessageEntry):
            continue
        m = e.message
        if isinstance(m, ToolResultMessage):
            calls.pop(m.tool_call_id, None)
        elif isinstance(m, AssistantMessage) and keeps(m):
            calls = {c.id: c.name for c in m.tool_calls}
        elif isinstance(m, UserMessage):
            calls = {}
    return list(calls.items())


def interrupted_results(calls: Sequence[tuple[str, str]]) -> list[MessageEntry]:
    """An error result for each of `calls`, to commit before the turn goes on."""
    return [
        MessageEntry(
            ToolResultMessage(call_id, name, (TextContent(INTERRUPTED_TOOL_TEXT),), None, True)
        )
        for call_id, name in calls
    ]


def started(entries: Sequence[Entry], rendered: str, accepted_ms: int) -> bool:
    """Whether an input (the text its recipient reads, accepted at `accepted_ms`) had
    started: its message was committed to the session, which happens when its run
    starts. An input still queued then has no message yet."""
    for e in reversed(entries):
        if not isinstance(e, MessageEntry):
            continue
        m = e.message
        if m.timestamp < accepted_ms:
            return False
        if isinstance(m, UserMessage) and m.text == rendered:
            return True
    return False
