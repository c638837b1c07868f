"""A durable conversation: a session record, its entries, and the context they make."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import msgspec

from piagents.ai.messages import (
    NO_USAGE,
    AssistantMessage,
    Message,
    ToolCall,
    ToolResultMessage,
    Usage,
)
from piagents.ai.models import ThinkingLevel
from piagents.harness.context import (
    DROPPED,
    in_effect,
    items_in_effect,
    keeps,
    missing_results,
    summary_message,
)
from piagents.harness.tokens import estimate_tokens
from piagents.store.base import SessionNotFound, Store
from piagents.store.collector import collector_paused
from piagents.store.records import (
    CompactionEntry,
    ContextItem,
    Entry,
    MessageEntry,
    ModelChangeEntry,
    SessionRecord,
    ThinkingLevelChangeEntry,
    new_id,
)


class Session:
    """Entries are appended through the store first; memory follows only after commit.

    A loaded session builds its context from the store's messages alone; its
    `entries` are read when first asked for (compaction, forks, the viewer).
    """

    def __init__(self, store: Store, record: SessionRecord, entries: Sequence[Entry]) -> None:
        self.store = store
        self.record = record
        self._entries: list[Entry] | None = list(entries)
        self._leaf_id = entries[-1].id if entries else None
        self._rebuild_context(items_in_effect(self._entries))

    @property
    def entries(self) -> list[Entry]:
        """The entries from the latest compaction's first kept entry on, in order."""
        if self._entries is None:
            with collector_paused():  # a long session is many objects, none in cycles
                self._entries = self.store.entries(self.id, from_last_compaction=True)
        return self._entries

    # ---- the context, kept up to date entry by entry -----------------------------

    def _rebuild_context(self, items: Sequence[ContextItem]) -> None:
        """The context of `items` (in context order), as `_push` would build it one by one.

        Written as one pass for long sessions (a reopen may bring back 100,000
        messages): token estimates are made only after the last reported usage.
        """
        context: list[Message] = []
        append = context.append
        open_calls: dict[str, str] = {}
        calls_at = 0
        # Exact type tests (the records are never subclassed), types taken in C and
        # names bound locally: this runs once per message.
        result_type, assistant_type, compaction_type = (
            ToolResultMessage,
            AssistantMessage,
            CompactionEntry,
        )
        call_type, dropped, no_usage = ToolCall, DROPPED, NO_USAGE
        usage: Usage = no_usage  # the last usage reported in context ...
        usage_at = 0  # ... and where what came after it starts
        for m, t in zip(items, map(type, items), strict=True):
            if t is result_type:
                if open_calls and open_calls.pop(m.tool_call_id, None) is not None:  # type: ignore[union-attr]
                    append(m)  # type: ignore[arg-type]
                continue
            if t is assistant_type and m.stop_reason in dropped:  # type: ignore[union-attr]
                continue  # before closing open calls: a dropped message is not there
            if open_calls:
                context.extend(missing_results(open_calls, calls_at))
                open_calls = {}
            if t is assistant_type:
                append(m)  # type: ignore[arg-type]
                for c in m.content:  # type: ignore[union-attr]
                    if type(c) is call_type:
                        open_calls[c.id] = c.name
                        calls_at = m.timestamp
                u = m.usage  # type: ignore[union-attr]
                if u is not no_usage and u.total_tokens > 0:
                    usage, usage_at = u, len(context)
            elif t is compaction_type:
                append(summary_message(m))  # type: ignore[arg-type]
            else:
                append(m)  # type: ignore[arg-type]  # a user message
        self._context = context
        self._open_calls = open_calls
        self._calls_at = calls_at
        self._usage_tokens = usage.total_tokens
        self._tokens_after = 0  # estimates of what came after it, made when first asked:
        self._unestimated = context[usage_at:]

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
        thinking: ThinkingLevel = "off",
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
        session = cls.__new__(cls)
        session.store, session.record = store, record
        session._entries = None  # read when first asked for
        with collector_paused():  # a long session is many objects, none in cycles
            items, session._leaf_id = store.context_items(session_id)
            session._rebuild_context(in_effect(items))
        return session

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def leaf_id(self) -> str | None:
        return self._leaf_id

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

    def append(self, *entries: Entry) -> list[Entry]:
        """Commit `entries` in one transaction, then add them to memory; returns them
        as appended (chained to their parents)."""
        chained: list[Entry] = []
        parent = self.leaf_id
        for e in entries:
            e = msgspec.structs.replace(e, parent_id=parent)
            chained.append(e)
            parent = e.id
        self.store.append(self.id, chained)
        self._leaf_id = parent
        if self._entries is not None:
            self._entries.extend(chained)
        for e in chained:
            if isinstance(e, CompactionEntry):
                self._rebuild_context(items_in_effect(self.entries))
            elif isinstance(e, MessageEntry) and keeps(e.message):
                self._push(e.message)
        self.record = replace(self.record, updated=chained[-1].timestamp)
        return chained

    def append_message(self, message: Message) -> MessageEntry:
        entry = MessageEntry(message)
        (appended,) = self.append(entry)
        assert isinstance(appended, MessageEntry)
        return appended

    def set_model(self, model: str) -> None:
        provider, _, model_id = model.partition("/")
        self.append(ModelChangeEntry(provider, model_id))
        self.record = self.store.update_session(self.id, model=model)

    def set_thinking(self, level: ThinkingLevel) -> None:
        self.append(ThinkingLevelChangeEntry(level))
        self.record = self.store.update_session(self.id, thinking=level)

    def set_name(self, name: str | None) -> None:
        self.record = self.store.update_session(self.id, name=name)
