"""Records the store keeps: sessions and their append-only entries.

Entries are frozen msgspec Structs tagged by `type`: the store keeps them in
their own form, MessagePack maps with the same camelCase keys as JSON
(`encode_entry`, `decode_entries`), decoded in C.
`entry_to_json` / `entry_from_json` are Pi's session format, for export and
for reading older stores.
"""

from __future__ import annotations

import operator
import os
import random
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeAlias

import msgspec

from piagents.ai.messages import Message, message_from_json, message_to_json, now_ms
from piagents.ai.models import ThinkingLevel

InputKind: TypeAlias = Literal["input", "write", "notification", "control"]
"""What an input asks of its recipient (see InputRecord)."""

InputDelivery: TypeAlias = Literal["steer", "followUp", "write", "control"]
"""When an input reaches its recipient: into the current turn, after it, only into
its conversation, or to the supervisor of a managed agent's worker."""

InputStatus: TypeAlias = Literal["outstanding", "completed", "failed", "aborted"]

GenerationPlacement: TypeAlias = Literal["inline", "process", "tmux", "workers"]

GenerationKind: TypeAlias = Literal["delegate", "continue"]
# What a generation keeps beside its record: the runtime options its lead hands its
# worker (placement `workers`), and the live evidence (output tail, foreground
# processes, context use) the worker writes.
GenerationDocumentKind: TypeAlias = Literal["options", "evidence"]

GenerationState: TypeAlias = Literal[
    "starting", "working", "blocked", "settling", "ended", "lost", "unknown"
]

GenerationOutcome: TypeAlias = Literal[
    "completed", "failed", "aborted", "closed", "retired", "lost"
]


# IDs come from a generator seeded from the system's randomness (again in a forked
# child), not from os.urandom at each call: that call lets go of the GIL, and with the
# PostgreSQL store's write threads running, the event loop waited tens of microseconds
# to take it back for every entry and input it named. IDs must be unique, not secret
# (a lease's token, which proves its holder, still comes from os.urandom).
_random = random.Random()
os.register_at_fork(after_in_child=_random.seed)


def new_id() -> str:
    """A random UUID (version 4)."""
    return str(uuid.UUID(int=_random.getrandbits(128), version=4))


def new_entry_id() -> str:
    return f"{_random.getrandbits(32):08x}"


@dataclass(frozen=True, slots=True)
class SessionRecord:
    id: str
    cwd: str
    model: str = ""
    thinking: ThinkingLevel = "off"
    name: str | None = None
    owner_id: str | None = None
    root_id: str | None = None
    created: int = field(default_factory=now_ms)
    updated: int = field(default_factory=now_ms)
    # Free-form metadata of higher layers (agents, supervision) kept with the session.
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def is_root(self) -> bool:
        return self.owner_id is None


class _Entry(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True, tag_field="type"):
    """An entry of a session; its store form is tagged by `type`."""


class MessageEntry(_Entry, frozen=True, tag="message"):
    message: Message
    id: str = msgspec.field(default_factory=new_entry_id)
    parent_id: str | None = None
    timestamp: int = msgspec.field(default_factory=now_ms)
    type: ClassVar[str] = "message"


class ModelChangeEntry(_Entry, frozen=True, tag="model_change"):
    provider: str
    model_id: str
    id: str = msgspec.field(default_factory=new_entry_id)
    parent_id: str | None = None
    timestamp: int = msgspec.field(default_factory=now_ms)
    type: ClassVar[str] = "model_change"


class ThinkingLevelChangeEntry(_Entry, frozen=True, tag="thinking_level_change"):
    thinking_level: str
    id: str = msgspec.field(default_factory=new_entry_id)
    parent_id: str | None = None
    timestamp: int = msgspec.field(default_factory=now_ms)
    type: ClassVar[str] = "thinking_level_change"


class CompactionEntry(_Entry, frozen=True, tag="compaction"):
    summary: str
    first_kept_entry_id: str | None
    tokens_before: int
    id: str = msgspec.field(default_factory=new_entry_id)
    parent_id: str | None = None
    timestamp: int = msgspec.field(default_factory=now_ms)
    type: ClassVar[str] = "compaction"


class CustomEntry(_Entry, frozen=True, tag="custom"):
    custom_type: str
    data: Any
    id: str = msgspec.field(default_factory=new_entry_id)
    parent_id: str | None = None
    timestamp: int = msgspec.field(default_factory=now_ms)
    type: ClassVar[str] = "custom"


Entry: TypeAlias = (
    MessageEntry | ModelChangeEntry | ThinkingLevelChangeEntry | CompactionEntry | CustomEntry
)


ContextItem: TypeAlias = Message | CompactionEntry
"""What a context is built from: a message entry's message, or a compaction."""


# Views of the store form that keep only what a context needs: a message entry's
# message and compactions whole. Other entries and the wrappers' ids and times
# are skipped while parsing, a quarter of the objects of a long session.
class _View(msgspec.Struct, frozen=True, gc=False, tag_field="type"):
    pass


class _MessageView(_View, frozen=True, tag="message"):
    message: Message


class _ModelChangeView(_View, frozen=True, tag="model_change"):
    pass


class _ThinkingLevelChangeView(_View, frozen=True, tag="thinking_level_change"):
    pass


class _CustomView(_View, frozen=True, tag="custom"):
    pass


_ENCODER = msgspec.json.Encoder()
_PACKER = msgspec.msgpack.Encoder()
_ENTRY = msgspec.msgpack.Decoder(Entry)
_ENTRIES = msgspec.msgpack.Decoder(list[Entry])
_VIEWS = msgspec.msgpack.Decoder(
    list[_MessageView | CompactionEntry | _ModelChangeView | _ThinkingLevelChangeView | _CustomView]
)
_JSON_ENTRY = msgspec.json.Decoder(Entry)
_JSON_ENTRIES = msgspec.json.Decoder(list[Entry])
_RAW_ARRAY = msgspec.msgpack.Decoder(list[msgspec.Raw])


def encode_entry(e: Entry) -> bytes:
    """The store's form of an entry: a MessagePack map (a fifth smaller than JSON,
    and decoded a fifth faster: no escapes, lengths known ahead)."""
    return _PACKER.encode(e)


def decode_entry(body: bytes) -> Entry:
    """One entry from its store form; malformed input raises a `msgspec` error."""
    return _ENTRY.decode(body)


def decode_json_entry(body: bytes | str) -> Entry:
    """One entry from the store form of schema 2: the same map, as JSON."""
    return _JSON_ENTRY.decode(body)


def decode_json_entries(array: bytes | str) -> list[Entry]:
    """A JSON array of entries in the store form of schema 2."""
    return _JSON_ENTRIES.decode(array)


def entries_array(bodies: Sequence[bytes]) -> bytes:
    """The store form of a list of entries, from the store forms of each."""
    n = len(bodies)
    if n < 16:
        head = bytes((0x90 | n,))
    elif n < 1 << 16:
        head = b"\xdc" + n.to_bytes(2, "big")
    else:
        head = b"\xdd" + n.to_bytes(4, "big")
    return head + b"".join(bodies)


def split_entries(array: bytes) -> list[bytes]:
    """The store forms of each entry of a list, undecoded."""
    return [bytes(raw) for raw in _RAW_ARRAY.decode(array)]


def decode_entries(array: bytes) -> list[Entry]:
    """A list of entries in their store form, decoded in one call."""
    return _ENTRIES.decode(array)


def decode_context_items(array: bytes) -> list[ContextItem]:
    """The messages and compactions of a list of entries in store form, in order;
    nothing else."""
    views = _VIEWS.decode(array)
    try:  # most blocks hold only message entries: their messages are taken in C
        return list(map(_message_of, views))
    except AttributeError:
        pass
    items: list[ContextItem] = []
    for v in views:
        if type(v) is _MessageView:
            items.append(v.message)
        elif type(v) is CompactionEntry:
            items.append(v)
    return items


_message_of = operator.attrgetter("message")


def _iso(ms: int) -> str:
    """ISO-8601 UTC with milliseconds, as Pi writes entry timestamps."""
    import datetime

    stamp = datetime.datetime.fromtimestamp(ms // 1000, datetime.UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S") + f".{ms % 1000:03d}Z"


def entry_to_json(e: Entry) -> dict[str, Any]:
    d: dict[str, Any] = {
        "type": e.type,
        "id": e.id,
        "parentId": e.parent_id,
        "timestamp": _iso(e.timestamp),
    }
    if isinstance(e, MessageEntry):
        d["message"] = message_to_json(e.message)
    elif isinstance(e, ModelChangeEntry):
        d["provider"], d["modelId"] = e.provider, e.model_id
    elif isinstance(e, ThinkingLevelChangeEntry):
        d["thinkingLevel"] = e.thinking_level
    elif isinstance(e, CompactionEntry):
        d["summary"] = e.summary
        d["firstKeptEntryId"] = e.first_kept_entry_id
        d["tokensBefore"] = e.tokens_before
    else:
        d["customType"], d["data"] = e.custom_type, e.data
    return d


def _ms(value: Any) -> int:
    if isinstance(value, int | float):
        return int(value)
    import datetime

    stamp = datetime.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return round(stamp.timestamp() * 1000)  # int() would turn .002 into 1 ms less


def entry_from_json(d: dict[str, Any]) -> Entry:
    kind = d.get("type")
    eid, parent, ts = str(d["id"]), d.get("parentId"), _ms(d["timestamp"])
    if kind == "message":
        return MessageEntry(message_from_json(d["message"]), eid, parent, ts)
    if kind == "model_change":
        return ModelChangeEntry(str(d["provider"]), str(d["modelId"]), eid, parent, ts)
    if kind == "thinking_level_change":
        return ThinkingLevelChangeEntry(str(d["thinkingLevel"]), eid, parent, ts)
    if kind == "compaction":
        return CompactionEntry(
            str(d["summary"]),
            d.get("firstKeptEntryId"),
            int(d.get("tokensBefore", 0)),
            eid,
            parent,
            ts,
        )
    if kind == "custom":
        return CustomEntry(str(d["customType"]), d.get("data"), eid, parent, ts)
    raise ValueError(f"unknown entry type {kind!r}")


@dataclass(frozen=True, slots=True)
class InputRecord:
    """A message accepted for an Agent, from acceptance until it ends.

    `kind` is `input` (asks the recipient to act), `write` (only adds to its
    conversation), `notification` (an owned Agent's input ended) or `control` (a
    supervision control message; its text is JSON). Only inputs from the
    recipient's owner have results (`has_result`).
    """

    id: str
    root_id: str
    recipient_id: str
    sender_id: str | None  # None: the recipient's user
    kind: InputKind
    delivery: InputDelivery
    text: str
    has_result: bool = False
    status: InputStatus = "outstanding"  # then completed | failed | aborted
    result: str | None = None
    read: bool = False
    aborted_by_owner: bool = False
    accepted: int = field(default_factory=now_ms)
    ended: int | None = None
    seq: int = 0
    # False while the input waits in the store for the runtime that holds the
    # recipient (another process); `rendered` is the text the recipient sees.
    delivered: bool = True
    rendered: str | None = None

    @property
    def outstanding(self) -> bool:
        return self.status == "outstanding"


@dataclass(frozen=True, slots=True)
class SearchHit:
    """An Agent's latest document matching a `list` query (None: matched by ID, name or cwd)."""

    session_id: str
    text: str | None
    timestamp: int


class GenerationRecord(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """One managed-agent generation: one assignment given by `delegate` or `continue`.

    `state` is the last recorded lifecycle state (`starting`, `working`,
    `blocked`, `settling`, `ended`, `lost`, `unknown`); `outcome` is set once,
    when the generation ends, together with the result for its owner.
    """

    id: str  # the assignment's request id
    label: str
    definition: str
    root_id: str  # the lead's session
    owner_id: str  # the controller that delegated: the lead or a delegating agent
    session_id: str  # the managed agent's session
    cwd: str
    task: str
    placement: GenerationPlacement
    kind: GenerationKind = "delegate"
    state: GenerationState = "starting"
    outcome: GenerationOutcome | None = None
    result: str | None = None
    error: str | None = None
    # Where it runs: the process (pid, host, its start time) and its pane or handle.
    pid: int | None = None
    host: str | None = None
    started: str | None = None
    token: str | None = None  # the runtime running it (its lease holder token)
    pane: str | None = None
    # ask_owner: at most one question per assignment.
    ask_id: str | None = None
    question: str | None = None
    asked: bool = False
    parent_label: str | None = None
    created: int = msgspec.field(default_factory=now_ms)
    updated: int = msgspec.field(default_factory=now_ms)
    ended: int | None = None

    @property
    def live(self) -> bool:
        return self.outcome is None and self.state not in ("lost", "unknown")


_GENERATION = msgspec.json.Decoder(GenerationRecord)


def encode_generation(g: GenerationRecord) -> bytes:
    return _ENCODER.encode(g)


def decode_generation(body: bytes | str) -> GenerationRecord:
    return _GENERATION.decode(body)


ProgramState: TypeAlias = Literal["running", "completed", "failed", "stopped"]

ProgramKind: TypeAlias = Literal["script", "scope"]
"""A script the `program` tool ran, or an SDK Program scope (`Agent.program()`)."""


class ProgramRecord(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """One Program: code an Agent (its caller) ran with the `program` tool (`kind`
    `script`), or a Program scope an embedder opened from it (`scope`: no code, never
    shown to a model).

    `state` is `running` until it ends `completed`, `failed` or `stopped`, once; then
    `result` holds the text its caller is given (the foreground layout; a scope has
    none), `reason` why it stopped (a scope: also why it failed), and `returned`
    whether the caller has been given it. Records written before scopes were recorded
    have no `kind`: they are scripts."""

    id: str  # time-ordered: `new_program_id()`
    caller_id: str
    root_id: str
    code: str
    kind: ProgramKind = "script"
    background: bool = False
    timeout: float | None = None
    state: ProgramState = "running"
    result: str | None = None
    reason: str | None = None
    returned: bool = False
    created: int = 0
    ended: int | None = None


_PROGRAM = msgspec.json.Decoder(ProgramRecord)


def new_program_id() -> str:
    """A UUID version 7: 48 bits of milliseconds, then a 12-bit counter for IDs made in
    the same millisecond (RFC 9562, method 1), then random bits: IDs made here sort in
    the order they were made, even within a millisecond or when the clock steps back."""
    global _last_ms, _counter
    with _id_lock:
        ms = time.time_ns() // 1_000_000
        if ms > _last_ms:
            _last_ms, _counter = ms, _random.getrandbits(11)  # room to count up
        else:
            _counter += 1
            if _counter > 0xFFF:
                _last_ms, _counter = _last_ms + 1, 0
        stamp, counter = _last_ms, _counter
    value = stamp << 80 | 0x7 << 76 | counter << 64 | 0x2 << 62 | _random.getrandbits(62)
    return str(uuid.UUID(int=value))


_id_lock = threading.Lock()
_last_ms = 0
_counter = 0


def encode_program(p: ProgramRecord) -> bytes:
    return _ENCODER.encode(p)


def decode_program(body: bytes | str) -> ProgramRecord:
    return _PROGRAM.decode(body)
