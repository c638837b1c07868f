from __future__ import annotations

import io
import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from piagents.ai.messages import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from piagents.export import export_jsonl
from piagents.harness.session import Session
from piagents.store.base import SessionNotFound
from piagents.store.records import CompactionEntry, CustomEntry, entry_from_json
from piagents.store.sqlite import SQLiteStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "store.db")
    yield s
    s.close()


def full_session(store: SQLiteStore) -> Session:
    session = Session.create(
        store,
        cwd="/work/project",
        model="anthropic/claude-sonnet-4-5",
        thinking="high",
        name="parser",
        owner_id="owner-1",
        root_id="root-1",
    )
    first = session.append_message(UserMessage.of("Fix the parser — ünïcode too."))
    session.append_message(
        AssistantMessage(
            (ThinkingContent("look first", "sig"), ToolCall("read", {"path": "p.py"}, "c1")),
            "toolUse",
            Usage(120, 30, 10, 5, 0.0008655, 0.00036, 0.00045, 0.000003, 0.00001875),
            "anthropic",
            "claude-sonnet-4-5",
            api="anthropic-messages",
        )
    )
    session.append_message(
        ToolResultMessage("c1", "read", (TextContent("def parse(): ..."),), {"lines": 1})
    )
    session.set_model("openai/gpt-5")
    session.set_thinking("low")
    session.append(CompactionEntry("## Goal\nFix the parser.", first.id, 165))
    session.append(CustomEntry("agents.note", {"k": [1, 2]}))
    session.append_message(AssistantMessage((TextContent("Done."),)))
    return session


def test_export_writes_a_header_then_every_entry_that_reads_back_equal(
    store: SQLiteStore,
) -> None:
    session = full_session(store)
    out = io.StringIO()

    count = export_jsonl(store, session.id, out)

    lines = out.getvalue().splitlines()
    entries = store.entries(session.id)
    assert count == len(entries) == len(lines) - 1 == 8
    assert [entry_from_json(json.loads(line)) for line in lines[1:]] == entries


def test_export_includes_the_entries_before_the_last_compaction(store: SQLiteStore) -> None:
    session = full_session(store)
    out = io.StringIO()

    export_jsonl(store, session.id, out)

    types = [json.loads(line)["type"] for line in out.getvalue().splitlines()]
    assert types == [
        "session",
        "message",
        "message",
        "message",
        "model_change",
        "thinking_level_change",
        "compaction",
        "custom",
        "message",
    ]


def test_an_exported_answer_names_its_wire_api_and_every_part_of_its_cost(
    store: SQLiteStore,
) -> None:
    session = full_session(store)
    out = io.StringIO()

    export_jsonl(store, session.id, out)

    [answer] = [
        line["message"]
        for line in map(json.loads, out.getvalue().splitlines()[1:])
        if line["type"] == "message"
        and line["message"]["role"] == "assistant"
        and line["message"]["content"][0]["type"] == "thinking"
    ]
    assert answer["api"] == "anthropic-messages"
    assert answer["usage"]["cost"] == {
        "input": 0.00036,
        "output": 0.00045,
        "cacheRead": 0.000003,
        "cacheWrite": 0.00001875,
        "total": 0.0008655,
    }


def test_the_header_describes_the_session(store: SQLiteStore) -> None:
    session = full_session(store)
    record = store.get_session(session.id)
    assert record is not None
    out = io.StringIO()

    export_jsonl(store, session.id, out)

    header = json.loads(out.getvalue().splitlines()[0])
    assert header == {
        "type": "session",
        "version": 3,
        "id": session.id,
        "timestamp": header["timestamp"],
        "cwd": "/work/project",
        "name": "parser",
        "model": "openai/gpt-5",
        "thinkingLevel": "low",
        "ownerId": "owner-1",
        "rootId": "root-1",
    }
    assert header["timestamp"].endswith("Z")
    stamp = header["timestamp"].replace("Z", "+00:00")
    assert round(datetime.fromisoformat(stamp).timestamp() * 1000) == record.created


def test_the_header_leaves_out_fields_that_are_not_set(store: SQLiteStore) -> None:
    session = Session.create(store, cwd="/tmp/x", model="")
    out = io.StringIO()

    count = export_jsonl(store, session.id, out)

    assert count == 0
    header = json.loads(out.getvalue())
    assert set(header) == {"type", "version", "id", "timestamp", "cwd", "thinkingLevel"}


def test_exporting_an_unknown_session_raises_session_not_found(store: SQLiteStore) -> None:
    out = io.StringIO()

    with pytest.raises(SessionNotFound, match="no-such-id"):
        export_jsonl(store, "no-such-id", out)

    assert out.getvalue() == ""
