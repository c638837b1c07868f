"""A durable conversation: a session record, its entries, and the context they make."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
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
from piagents.store.write_thread import LaterWrite

Landed = Callable[[list[Entry]], None]


@dataclass
class _Pending:
    """An append handed to the store's write thread, not settled here yet."""

    entries: list[Entry]
    write: LaterWrite[Any]
    previous_leaf: str | None
    then: Landed | None
    settled: bool = False
    error: Exception | None = None


class Session:
    """Entries are appended through the store first; memory follows only after commit.

    A loaded session builds its context from the store's messages alone; its
    `entries` are read when first asked for (compaction, forks, the viewer).
    """

    _pending: _Pending | None = None  # at most one append under way on the write thread

    def __init__(self, store: Store, record: SessionRecord, entries: Sequence[Entry]) -> None:
        self.store = store
        self.record = record
        self._entries: list[Entry] | None = list(entries)
        self._leaf_id = entries[-1].id if entries else None
        self._rebuild_context(items_in_effect(self._entries))

    @property
    def entries(self) -> list[Entry]:
        """The entries from the latest compaction's first kept entry on, in order."""
        self._flush()
        return self._entries_now()

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
        self._flush()
        return self._leaf_id

    def context(self) -> list[Message]:
        """Messages as the model would get them (tool calls all answered)."""
        self._flush()
        return [*self._context, *missing_results(self._open_calls, self._calls_at)]

    def context_tokens(self) -> int:
        """Tokens of `context()`: the last reported usage plus estimates after it."""
        self._flush()
        if self._unestimated:
            self._tokens_after += sum(estimate_tokens(m) for m in self._unestimated)
            self._unestimated = []
        pending = sum(estimate_tokens(m) for m in missing_results(self._open_calls, 0))
        return self._usage_tokens + self._tokens_after + pending

    def append(self, *entries: Entry) -> list[Entry]:
        """Commit `entries` in one transaction, then add them to memory; returns them
        as appended (chained to their parents)."""
        self._flush()
        chained = self._chained(entries)
        self.store.append(self.id, chained)
        self._landed(chained)
        return chained

    async def append_async(self, *entries: Entry, then: Landed | None = None) -> list[Entry]:
        """`append`, awaiting the commit instead of holding the event loop for it when
        the store commits on a write thread of its own (PostgreSQL): the other Agents
        run meanwhile. Memory follows once it committed, and `then(entries)` runs then,
        even if the awaiting task was cancelled meanwhile (a commit is not taken back).
        Anything that reads or appends in the meantime first waits for it."""
        self._flush()
        chained = self._chained(entries)
        write = self.store.append_later(self.id, chained)
        if write is None:  # the store commits here: as `append`, without suspending
            self.store.append(self.id, chained)
            self._landed(chained)
            if then is not None:
                then(chained)
            return chained
        pending = _Pending(chained, write, self._leaf_id, then)
        self._pending = pending
        self._leaf_id = chained[-1].id  # what is appended next chains after these
        done = write.done_here()
        done.add_done_callback(lambda _: self._settle_quietly(pending))
        await asyncio.shield(done)  # cancelled, the write still goes on
        self._settle(pending)
        return chained

    def _chained(self, entries: Sequence[Entry]) -> list[Entry]:
        chained: list[Entry] = []
        parent = self._leaf_id
        for e in entries:
            e = msgspec.structs.replace(e, parent_id=parent)
            chained.append(e)
            parent = e.id
        return chained

    def _landed(self, chained: list[Entry]) -> None:
        """Memory after `chained` committed."""
        self._leaf_id = chained[-1].id
        if self._entries is not None:
            self._entries.extend(chained)
        for e in chained:
            if isinstance(e, CompactionEntry):
                self._rebuild_context(items_in_effect(self._entries_now()))
            elif isinstance(e, MessageEntry) and keeps(e.message):
                self._push(e.message)
        self.record = replace(self.record, updated=chained[-1].timestamp)

    def _entries_now(self) -> list[Entry]:
        """`entries` without waiting for an append under way (one settling calls it)."""
        if self._entries is None:
            with collector_paused():  # a long session is many objects, none in cycles
                self._entries = self.store.entries(self.id, from_last_compaction=True)
        return self._entries

    def _settle(self, pending: _Pending) -> None:
        """Once: memory and `then` if the write committed, the leaf back if it did not
        (waiting for it, if it is still under way). Raises the write's error."""
        if not pending.settled:
            pending.settled = True
            if self._pending is pending:
                self._pending = None
            try:
                pending.write.result()
            except Exception as exc:
                pending.error = exc
                if self._leaf_id == pending.entries[-1].id:
                    self._leaf_id = pending.previous_leaf
            else:
                self._landed(pending.entries)
                if pending.then is not None:
                    pending.then(pending.entries)
        if pending.error is not None:
            raise pending.error

    def _settle_quietly(self, pending: _Pending) -> None:
        with contextlib.suppress(Exception):  # its awaiter, if still there, raises it
            self._settle(pending)

    def _flush(self) -> None:
        """Wait for an append under way, so that what comes next sees and follows it."""
        if self._pending is not None:
            self._settle_quietly(self._pending)

    def append_message(self, message: Message) -> MessageEntry:
        entry = MessageEntry(message)
        (appended,) = self.append(entry)
        assert isinstance(appended, MessageEntry)
        return appended

    async def append_message_async(self, message: Message, then: Landed | None = None) -> None:
        await self.append_async(MessageEntry(message), then=then)

    def set_model(self, model: str) -> None:
        provider, _, model_id = model.partition("/")
        self.append(ModelChangeEntry(provider, model_id))
        self.record = self.store.update_session(self.id, model=model)

    def set_thinking(self, level: ThinkingLevel) -> None:
        self.append(ThinkingLevelChangeEntry(level))
        self.record = self.store.update_session(self.id, thinking=level)

    def set_name(self, name: str | None) -> None:
        self.record = self.store.update_session(self.id, name=name)
