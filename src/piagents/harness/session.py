"""A durable conversation: a session record, its entries, and the context they make."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from piagents.ai.messages import Message
from piagents.harness.context import build_context, keeps
from piagents.store.base import SessionNotFound, Store
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
        self._context: list[Message] = build_context(self.entries)

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
        return cls(store, record, store.entries(session_id, from_last_compaction=True))

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def leaf_id(self) -> str | None:
        return self.entries[-1].id if self.entries else None

    def context(self) -> list[Message]:
        """Messages as the model would get them (tool calls all answered)."""
        from piagents.harness.context import repair_tool_results

        return repair_tool_results(self._context)

    def append(self, *entries: Entry) -> None:
        """Commit `entries` in one transaction, then add them to memory."""
        chained: list[Entry] = []
        parent = self.leaf_id
        for e in entries:
            e = replace(e, parent_id=parent)
            chained.append(e)
            parent = e.id
        self.store.append(self.id, chained)
        self.entries.extend(chained)
        for e in chained:
            if isinstance(e, CompactionEntry):
                self._context = build_context(self.entries)
            elif isinstance(e, MessageEntry) and keeps(e.message):
                self._context.append(e.message)
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
