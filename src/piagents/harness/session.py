"""A durable conversation: a session record, its entries, and the context they make."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import msgspec

from piagents.ai.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResultMessage,
)
from piagents.harness.context import (
    DROPPED,
    context_entries,
    keeps,
    missing_results,
    summary_message,
)
from piagents.harness.tokens import estimate_tokens
from piagents.store.base import SessionNotFound, Store
from piagents.store.collector import collector_paused
from piagents.store.records import (
    CompactionEntry,
    Entry,
    MessageEntry,
    ModelChangeEntry,
    SessionRecord,
    ThinkingLevelChangeEntry,
    new_id,
)


class Session:
    """Entries are appended through the store first; memory follows only after commit."""

    def __init__(self, store: Store, record: SessionRecord, entries: Sequence[Entry]) -> None:
        self.store = store
        self.record = record
        self.entries: list[Entry] = list(entries)
        self._rebuild_context()

    # ---- the context, kept up to date entry by entry -----------------------------

    def _rebuild_context(self) -> None:
        """The context from the entries in effect, as `_push` would build it one by one.

        Written as one pass for long sessions (a reopen may bring back 100,000
        entries): token estimates are made only after the last reported usage.
        """
        context: list[Message] = []
        append = context.append
        open_calls: dict[str, str] = {}
        calls_at = 0
        # Exact type tests (the records are never subclassed): this runs once per entry.
        for e in context_entries(self.entries):
            m: Message
            if type(e) is MessageEntry:
                m = e.message
                if type(m) is ToolResultMessage:
                    if open_calls and open_calls.pop(m.tool_call_id, None) is not None:
                        append(m)
                    continue
                if type(m) is AssistantMessage and m.stop_reason in DROPPED:
                    continue
            elif type(e) is CompactionEntry:
                m = summary_message(e)
            else:
                continue
            if open_calls:
                context.extend(missing_results(open_calls, calls_at))
                open_calls = {}
            append(m)
            if type(m) is AssistantMessage:
                for c in m.content:
                    if type(c) is ToolCall:
                        open_calls[c.id] = c.name
                        calls_at = m.timestamp
        self._context = context
        self._open_calls = open_calls
        self._calls_at = calls_at
        self._usage_tokens = 0  # usage reported by the last assistant message that has it
        self._tokens_after = 0  # estimates of what came after it ...
        start = 0
        for i in range(len(context) - 1, -1, -1):
            m = context[i]
            if type(m) is AssistantMessage:
                u = m.usage
                if u.input or u.output or u.cache_read or u.cache_write:
                    self._usage_tokens, start = u.total_tokens, i + 1
                    break
        self._unestimated = context[start:]  # ... and those not estimated yet (done when asked)

    def _push(self, m: Message) -> None:
        """Add a message as `build_context` would place it: results matched to calls."""
        if isinstance(m, ToolResultMessage):
            if m.tool_call_id not in self._open_calls:
                return  # a result whose call is not in context
            del self._open_calls[m.tool_call_id]
        else:
            self._close_open_calls()
        self._context.append(m)
        if isinstance(m, AssistantMessage):
            self._open_calls, self._calls_at = {c.id: c.name for c in m.tool_calls}, m.timestamp
            if m.usage.total_tokens > 0:
                self._usage_tokens, self._tokens_after = m.usage.total_tokens, 0
                self._unestimated = []
                return
        self._tokens_after += estimate_tokens(m)

    def _close_open_calls(self) -> None:
        for m in missing_results(self._open_calls, self._calls_at):
            self._context.append(m)
            self._tokens_after += estimate_tokens(m)
        self._open_calls = {}

    @classmethod
    def create(
        cls,
        store: Store,
        *,
        cwd: str,
        model: str,
        thinking: str = "off",
        name: str | None = None,
        owner_id: str | None = None,
        root_id: str | None = None,
        session_id: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> Session:
        record = SessionRecord(
            id=session_id or new_id(),
            cwd=cwd,
            model=model,
            thinking=thinking,
            name=name,
            owner_id=owner_id,
            root_id=root_id,
            meta=meta or {},
        )
        store.create_session(record)
        return cls(store, record, [])

    @classmethod
    def load(cls, store: Store, session_id: str) -> Session:
        record = store.get_session(session_id)
        if record is None:
            raise SessionNotFound(f"No session {session_id}")
        with collector_paused():  # a long session is many objects, none in cycles
            return cls(store, record, store.entries(session_id, from_last_compaction=True))

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def leaf_id(self) -> str | None:
        return self.entries[-1].id if self.entries else None

    def context(self) -> list[Message]:
        """Messages as the model would get them (tool calls all answered)."""
        return [*self._context, *missing_results(self._open_calls, self._calls_at)]

    def context_tokens(self) -> int:
        """Tokens of `context()`: the last reported usage plus estimates after it."""
        if self._unestimated:
            self._tokens_after += sum(estimate_tokens(m) for m in self._unestimated)
            self._unestimated = []
        pending = sum(estimate_tokens(m) for m in missing_results(self._open_calls, 0))
        return self._usage_tokens + self._tokens_after + pending

    def append(self, *entries: Entry) -> None:
        """Commit `entries` in one transaction, then add them to memory."""
        chained: list[Entry] = []
        parent = self.leaf_id
        for e in entries:
            e = msgspec.structs.replace(e, parent_id=parent)
            chained.append(e)
            parent = e.id
        self.store.append(self.id, chained)
        self.entries.extend(chained)
        for e in chained:
            if isinstance(e, CompactionEntry):
                self._rebuild_context()
            elif isinstance(e, MessageEntry) and keeps(e.message):
                self._push(e.message)
        self.record = replace(self.record, updated=chained[-1].timestamp)

    def append_message(self, message: Message) -> MessageEntry:
        entry = MessageEntry(message)
        self.append(entry)
        last = self.entries[-1]
        assert isinstance(last, MessageEntry)
        return last

    def set_model(self, model: str) -> None:
        provider, _, model_id = model.partition("/")
        self.append(ModelChangeEntry(provider, model_id))
        self.record = self.store.update_session(self.id, model=model)

    def set_thinking(self, level: str) -> None:
        self.append(ThinkingLevelChangeEntry(level))
        self.record = self.store.update_session(self.id, thinking=level)

    def set_name(self, name: str | None) -> None:
        self.record = self.store.update_session(self.id, name=name)
