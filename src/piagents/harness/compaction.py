"""Context compaction: summarise old entries so a long session fits its model.

Walking back from the newest entry, about `keep_recent_tokens` of messages are
kept verbatim; everything before them (a previous summary included) is
summarised by the model into a `CompactionEntry`. From then on the model sees
the summary followed by the kept messages.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from piagents.ai.events import StreamEnd
from piagents.ai.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from piagents.ai.models import ModelRef
from piagents.ai.provider import ModelRequest, Provider
from piagents.ai.retry import RetryPolicy, stream_with_retry
from piagents.config import CompactionSettings
from piagents.counted import counted
from piagents.harness.context import context_entries, keeps, summary_message
from piagents.harness.events import Compacted
from piagents.harness.session import Session
from piagents.harness.tokens import (
    context_tokens,
    estimate_tokens,
)
from piagents.store.records import CompactionEntry, Entry, MessageEntry

if TYPE_CHECKING:
    from piagents.harness.loop import AgentLoop

TOOL_RESULT_MAX_CHARS = 2000  # the summariser needs the gist of a result, not all of it
DEFAULT_RETRY = RetryPolicy()

SUMMARY_SYSTEM_PROMPT = (
    "You summarise conversations between a user and an AI coding assistant. You read the "
    "conversation you are given and write a structured summary in the exact format requested, "
    "so that another assistant can pick up the work without the original messages.\n\n"
    "Do not continue the conversation and do not answer questions in it. "
    "Output only the summary."
)

SUMMARY_FORMAT = """Use exactly this Markdown format:

## Goal
[What the user wants to achieve; several items if the session covers several tasks.]

## Constraints & Preferences
- [Requirements, constraints and preferences the user stated, or "(none)".]

## Progress
### Done
- [x] [Finished tasks and changes.]

### In Progress
- [ ] [Work under way.]

### Blocked
- [What stops progress, or "(none)".]

## Key Decisions
- **[Decision]**: [Why, in a line.]

## Next Steps
1. [What should happen next, in order.]

## Critical Context
- [Data, examples, references or error messages needed to continue, or "(none)".]

Keep each section short. Keep exact file paths, function names and error messages."""

NEW_SUMMARY_TASK = (
    "The conversation above is to be summarised. Write a structured checkpoint summary "
    "that another assistant will use to continue the work."
)

UPDATE_SUMMARY_TASK = (
    "The conversation above continues from the summary in <previous-summary>. Write one "
    "updated structured summary that covers both: keep everything still relevant from the "
    "previous summary, add the new progress, decisions and context, move finished items from "
    "In Progress to Done, and bring Next Steps up to date."
)


class CompactionError(Exception):
    """The model could not produce a summary; the session was left unchanged."""


# ---- token estimates ---------------------------------------------------------


def compaction_threshold(context_window: int, settings: CompactionSettings) -> int:
    """Context tokens above which a session is compacted (a managed agent retired): the
    window less the reserve that fits it (`fit_to_window`)."""
    return context_window - fit_to_window(settings, context_window).reserve_tokens


def should_compact(tokens: int, context_window: int, settings: CompactionSettings) -> bool:
    return settings.enabled and tokens > compaction_threshold(context_window, settings)


def fit_to_window(settings: CompactionSettings, context_window: int) -> CompactionSettings:
    """The settings for a model with this context window. A reserve that does not fit the
    window (the default 16k on an 8k model) becomes a quarter of it, so compaction starts
    before the window is full; a recent part to keep that reaches the threshold becomes half
    of what lies below it, so compaction has something to summarise."""
    reserve = settings.reserve_tokens
    if reserve >= context_window:
        reserve = max(1, context_window // 4)
    threshold = context_window - reserve
    keep = settings.keep_recent_tokens
    if keep >= threshold:
        keep = max(1, threshold // 2)
    if (reserve, keep) == (settings.reserve_tokens, settings.keep_recent_tokens):
        return settings  # they fit: every model call of a large window asks
    return replace(settings, reserve_tokens=reserve, keep_recent_tokens=keep)


# ---- cut point -----------------------------------------------------------------


def _entry_tokens(entry: Entry) -> int:
    if isinstance(entry, MessageEntry):
        return estimate_tokens(entry.message)
    if isinstance(entry, CompactionEntry):
        return estimate_tokens(summary_message(entry))
    return 0


def _is_cut_point(entry: Entry) -> bool:
    # A tool result must stay with the assistant message that called the tool.
    return isinstance(entry, MessageEntry) and entry.message.role in ("user", "assistant")


def find_cut_point(entries: Sequence[Entry], keep_recent_tokens: int) -> int:
    """Index of the first entry to keep verbatim; the entries before it get summarised.

    Keeps about `keep_recent_tokens`, cutting only before a user or assistant
    message, never before a tool result. Returns 0 (keep all) when the entries
    hold fewer tokens than that, or offer no place to cut.
    """
    cuts = [i for i, e in enumerate(entries) if _is_cut_point(e)]
    total = 0
    for i in range(len(entries) - 1, -1, -1):
        total += _entry_tokens(entries[i])
        if total >= keep_recent_tokens:
            after = [c for c in cuts if c >= i]
            if after:
                return after[0]
            before = [c for c in cuts if c < i]
            return before[-1] if before else 0
    return 0


# ---- summarising ---------------------------------------------------------------


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n\n[... {counted(len(text) - limit, 'more character')} truncated]"


def _call_text(call: ToolCall) -> str:
    args = ", ".join(f"{k}={json.dumps(v)}" for k, v in call.args.items())
    return f"{call.name}({args})"


def serialize_conversation(messages: Sequence[Message]) -> str:
    """The conversation as plain text, so the summariser reads it instead of continuing it."""
    parts: list[str] = []
    for m in messages:
        if isinstance(m, UserMessage):
            if m.text:
                parts.append(f"[User]: {m.text}")
        elif isinstance(m, AssistantMessage):
            if m.thinking:
                parts.append(f"[Assistant thinking]: {m.thinking}")
            if m.text:
                parts.append(f"[Assistant]: {m.text}")
            if m.tool_calls:
                calls = "; ".join(_call_text(c) for c in m.tool_calls)
                parts.append(f"[Assistant tool calls]: {calls}")
        elif isinstance(m, ToolResultMessage) and m.text:
            label = "Tool error" if m.is_error else "Tool result"
            parts.append(f"[{label} {m.tool_name}]: {_clip(m.text, TOOL_RESULT_MAX_CHARS)}")
    return "\n\n".join(parts)


def summary_prompt(
    messages: Sequence[Message], previous_summary: str | None, custom_instructions: str | None
) -> str:
    """The one user message that asks for a summary of `messages`."""
    text = f"<conversation>\n{serialize_conversation(messages)}\n</conversation>\n\n"
    if previous_summary is not None:
        text += f"<previous-summary>\n{previous_summary}\n</previous-summary>\n\n"
        text += UPDATE_SUMMARY_TASK
    else:
        text += NEW_SUMMARY_TASK
    text += "\n\n" + SUMMARY_FORMAT
    if custom_instructions:
        text += f"\n\nAdditional focus: {custom_instructions}"
    return text


def _split(head: Sequence[Entry]) -> tuple[str | None, list[Message]]:
    """The previous summary and the messages among the entries to summarise."""
    previous: str | None = None
    messages: list[Message] = []
    for e in head:
        if isinstance(e, CompactionEntry):
            previous = e.summary
        elif isinstance(e, MessageEntry) and keeps(e.message):
            messages.append(e.message)
    return previous, messages


async def _summarise(provider: Provider, request: ModelRequest, retry: RetryPolicy) -> str:
    async for event in stream_with_retry(provider, request, retry):
        if isinstance(event, StreamEnd):
            answer = event.message
            if answer.stop_reason in ("error", "aborted"):
                raise CompactionError(
                    f"Compaction failed: {answer.error_message or answer.stop_reason}"
                )
            if not answer.text.strip():
                raise CompactionError("Compaction failed: the model returned an empty summary")
            return answer.text.strip()
    raise AssertionError("unreachable: stream_with_retry always ends with StreamEnd")


async def compact(
    session: Session,
    provider: Provider,
    model: ModelRef,
    settings: CompactionSettings,
    *,
    custom_instructions: str | None = None,
    retry: RetryPolicy = DEFAULT_RETRY,
) -> CompactionEntry | None:
    """Summarise the older part of the session's context and append the summary.

    Returns the appended entry, or None when nothing is old enough to summarise.
    Raises `CompactionError` when the model fails; nothing is appended then.
    """
    entries = context_entries(session.entries)
    cut = find_cut_point(entries, settings.keep_recent_tokens)
    previous, messages = _split(entries[:cut])
    if not messages:
        return None
    request = ModelRequest(
        model=model,
        system_prompt=SUMMARY_SYSTEM_PROMPT,
        messages=(UserMessage.of(summary_prompt(messages, previous, custom_instructions)),),
        max_output=int(0.8 * settings.reserve_tokens),
        agent_id=session.id,
        agent_name=session.record.name,
    )
    summary = await _summarise(provider, request, retry)
    tokens_before = context_tokens(session.context())
    (appended,) = session.append(CompactionEntry(summary, entries[cut].id, tokens_before))
    assert isinstance(appended, CompactionEntry)
    return appended


def auto_compaction(
    settings: CompactionSettings,
    context_window_of: Callable[[ModelRef], int | Awaitable[int]],
) -> Callable[[AgentLoop], Awaitable[None]]:
    """A `LoopHooks.before_model_call` hook that compacts when the context nears its window.

    `context_window_of` may be a coroutine function: the registry's asks a declared server
    for its limits the first time."""

    async def before_model_call(loop: AgentLoop) -> None:
        tokens = loop.session.context_tokens()
        window = context_window_of(loop.model)
        if inspect.isawaitable(window):
            window = await window
        fitted = fit_to_window(settings, window)
        if not (fitted.enabled and tokens > window - fitted.reserve_tokens):
            return
        try:
            provider = loop.resolve_provider(loop.model)
            entry = await compact(
                loop.session, provider, loop.model, fitted, retry=loop.config.retry
            )
        except Exception:  # the turn can still go ahead on the full context
            return
        if entry is not None:
            loop.emit(Compacted(entry.summary, entry.tokens_before))

    return before_model_call
