"""Export a session as Pi-style JSONL: a session header line, then one line per entry."""

from __future__ import annotations

import datetime
import json
from typing import Any, TextIO

from piagents.store.base import SessionNotFound, Store
from piagents.store.records import SessionRecord, entry_to_json

SESSION_FORMAT_VERSION = 3


def _iso(ms: int) -> str:
    moment = datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def session_header(record: SessionRecord) -> dict[str, Any]:
    """The first line of an export; fields Pi does not know are added only when set."""
    header: dict[str, Any] = {
        "type": "session",
        "version": SESSION_FORMAT_VERSION,
        "id": record.id,
        "timestamp": _iso(record.created),
        "cwd": record.cwd,
    }
    extras = {
        "name": record.name,
        "model": record.model,
        "thinkingLevel": record.thinking,
        "ownerId": record.owner_id,
        "rootId": record.root_id,
    }
    header.update({key: value for key, value in extras.items() if value})
    return header


def _line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n"


def export_jsonl(store: Store, session_id: str, out: TextIO) -> int:
    """Write the session's header and all its entries to `out`; returns the entry count."""
    record = store.get_session(session_id)
    if record is None:
        raise SessionNotFound(
            f"Cannot export session {session_id}: no such session in {store.location}."
        )
    entries = store.entries(session_id)
    out.write(_line(session_header(record)))
    for entry in entries:
        out.write(_line(entry_to_json(entry)))
    return len(entries)
