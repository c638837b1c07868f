"""The `transcript` of a managed agent: its persisted conversation as bounded text (pure).

What is shown is the session's context, compaction-aware (`transcript_items`):
user text, visible assistant text, tool calls, textual tool results, and
compaction and branch summaries. Never shown: thinking, the system prompt,
custom (extension) entries, model changes and other metadata, images.
Assistant messages that never reach a model (aborted, errored) are left out
with the results of their tool calls, as the context leaves them out; a tool
call whose result is not yet persisted is shown without one.

Each item is a block; blocks are separated by a blank line::

    [user]
    Fix the parser.

    [assistant]
    I'll read it first.

    [tool call] read {"path":"src/parser.py"}

    [tool result] read
    def parse(): ...

    [tool result] bash (error)
    exit code 1

    [compaction summary]
    ...

    [branch summary]
    ...

A tool result over 4 KiB (UTF-8) keeps its beginning and its end around the
line `[... <n> bytes omitted ...]`, and is then at most 4 KiB. The whole text
keeps its last 16 KiB: it is cut at the start of a line (inside a line only when
the last line alone is too long, and never inside a character) after the line
`[... <n> bytes of earlier transcript omitted ...]`, and is then at most 16 KiB.
`truncated` is true when either bound cut something.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from piagents.ai.messages import AssistantMessage, Message, ToolResultMessage, UserMessage
from piagents.counted import counted
from piagents.harness.context import context_entries, keeps
from piagents.store.records import CompactionEntry, Entry, MessageEntry

TRANSCRIPT_LIMIT_BYTES = 16 * 1024
TOOL_RESULT_LIMIT_BYTES = 4 * 1024


@dataclass(frozen=True, slots=True)
class Summary:
    """A compaction or branch summary standing in for the messages it replaced."""

    kind: Literal["compaction", "branch"]
    text: str


TranscriptItem: TypeAlias = Message | Summary


def transcript_items(entries: Iterable[Entry]) -> list[TranscriptItem]:
    """The messages and summaries of a session's context, from its branch's entries."""
    items: list[TranscriptItem] = []
    dropped_calls: set[str] = set()
    for e in context_entries(list(entries)):
        if isinstance(e, CompactionEntry):
            items.append(Summary("compaction", e.summary))
        elif isinstance(e, MessageEntry):
            m = e.message
            if not keeps(m):
                dropped_calls.update(c.id for c in m.tool_calls)
            elif not (isinstance(m, ToolResultMessage) and m.tool_call_id in dropped_calls):
                items.append(m)
    return items


def render_transcript(
    items: Sequence[TranscriptItem],
    *,
    limit_bytes: int = TRANSCRIPT_LIMIT_BYTES,
    tool_result_limit_bytes: int = TOOL_RESULT_LIMIT_BYTES,
) -> tuple[str, bool]:
    """The transcript text and whether any bound cut it (format in the module docstring)."""
    blocks: list[str] = []
    truncated = False
    for item in items:
        if isinstance(item, Summary):
            blocks.append(f"[{item.kind} summary]\n{item.text}")
        elif isinstance(item, UserMessage):
            if item.text:
                blocks.append(f"[user]\n{item.text}")
        elif isinstance(item, AssistantMessage):
            if item.text:
                blocks.append(f"[assistant]\n{item.text}")
            blocks += [f"[tool call] {c.name} {_compact_json(c.args)}" for c in item.tool_calls]
        else:
            body, cut = bound_middle(item.text, tool_result_limit_bytes)
            truncated = truncated or cut
            error = " (error)" if item.is_error else ""
            header = f"[tool result] {item.tool_name}{error}"
            blocks.append(f"{header}\n{body}" if body else header)
    text, cut = bound_tail("\n\n".join(blocks), limit_bytes)
    return text, truncated or cut


def _compact_json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def bound_middle(text: str, limit_bytes: int) -> tuple[str, bool]:
    """`text` itself when it fits `limit_bytes`; otherwise its start and end around an
    omission line, at most `limit_bytes` in all."""
    data = text.encode("utf-8")
    if len(data) <= limit_bytes:
        return text, False
    longest_marker = len(_omitted_line(len(data)).encode("utf-8")) + 2  # and its two newlines
    keep = max(0, limit_bytes - longest_marker) // 2
    head = data[:keep].decode("utf-8", errors="ignore")  # drops a cut character's start
    tail = data[len(data) - keep :].decode("utf-8", errors="ignore")  # ... or its end
    omitted = len(data) - len(head.encode("utf-8")) - len(tail.encode("utf-8"))
    return f"{head}\n{_omitted_line(omitted)}\n{tail}", True


def _omitted_line(n: int) -> str:
    return f"[... {counted(n, 'byte')} omitted ...]"


def _earlier_omitted_line(n: int) -> str:
    return f"[... {counted(n, 'byte')} of earlier transcript omitted ...]"


def bound_tail(text: str, limit_bytes: int) -> tuple[str, bool]:
    """`text` itself when it fits `limit_bytes`; otherwise an omission line and the end of
    `text` from the start of a line, at most `limit_bytes` in all."""
    data = text.encode("utf-8")
    if len(data) <= limit_bytes:
        return text, False
    budget = max(0, limit_bytes - len(_earlier_omitted_line(len(data)).encode("utf-8")) - 1)
    tail = data[len(data) - budget :]
    start = 0
    while start < len(tail) and tail[start] & 0xC0 == 0x80:  # a character's continuation
        start += 1
    newline = tail.find(b"\n", start)
    if newline != -1 and newline + 1 < len(tail):
        start = newline + 1
    kept = tail[start:]
    omitted = len(data) - len(kept)
    return f"{_earlier_omitted_line(omitted)}\n{kept.decode('utf-8')}", True
