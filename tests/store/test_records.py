"""The store form of entries: MessagePack maps, lists of them, and views for a context."""

import os
import re
import uuid

import msgspec
import pytest

from piagents.ai.messages import AssistantMessage, TextContent, ToolCall, UserMessage
from piagents.store.records import (
    CompactionEntry,
    CustomEntry,
    MessageEntry,
    ModelChangeEntry,
    ThinkingLevelChangeEntry,
    decode_context_items,
    decode_entries,
    decode_entry,
    encode_entry,
    entries_array,
    new_entry_id,
    new_id,
    split_entries,
)

QUESTION = UserMessage((TextContent("why?"),), 1)
CALL = AssistantMessage((ToolCall("read", {"path": "a.py"}, "c1"),), "toolUse", timestamp=2)
ENTRIES = [
    MessageEntry(QUESTION, "e1", None, 10),
    ModelChangeEntry("openai", "gpt-5", "e2", "e1", 11),
    MessageEntry(CALL, "e3", "e2", 12),
    ThinkingLevelChangeEntry("high", "e4", "e3", 13),
    CompactionEntry("so far", "e3", 99, "e5", "e4", 14),
    CustomEntry("note", {"k": [1, 2]}, "e6", "e5", 15),
]


def test_every_kind_of_entry_round_trips_through_its_store_form():
    for entry in ENTRIES:
        assert decode_entry(encode_entry(entry)) == entry


def test_the_store_form_is_a_map_with_pi_keys():
    assert msgspec.msgpack.decode(encode_entry(ENTRIES[2])) == {
        "type": "message",
        "message": {
            "role": "assistant",
            "content": [
                {"type": "toolCall", "name": "read", "arguments": {"path": "a.py"}, "id": "c1"}
            ],
            "stopReason": "toolUse",
            "timestamp": 2,
        },
        "id": "e3",
        "parentId": "e2",
        "timestamp": 12,
    }


@pytest.mark.parametrize("n", [0, 1, 15, 16, 512, 65535, 65536, 70000])
def test_a_list_is_made_from_the_store_forms_of_its_entries(n):
    bodies = [msgspec.msgpack.encode(i) for i in range(n)]
    array = entries_array(bodies)
    assert msgspec.msgpack.decode(array) == list(range(n))
    assert split_entries(array) == bodies


def test_a_list_of_entries_decodes_whole_or_as_a_context_needs_it():
    array = entries_array([encode_entry(e) for e in ENTRIES])
    assert decode_entries(array) == ENTRIES
    assert decode_context_items(array) == [QUESTION, CALL, ENTRIES[4]]
    messages_only = entries_array([encode_entry(ENTRIES[0]), encode_entry(ENTRIES[2])])
    assert decode_context_items(messages_only) == [QUESTION, CALL]


def test_a_malformed_list_raises_a_msgspec_error():
    with pytest.raises(msgspec.DecodeError):
        decode_context_items(b"\x92\x81")
    with pytest.raises(msgspec.ValidationError):
        decode_entries(entries_array([msgspec.msgpack.encode({"type": "nope"})]))


def test_ids_are_random_version_4_uuids_and_entry_ids_eight_hex_digits() -> None:
    ids = [new_id() for _ in range(10_000)]
    assert len(set(ids)) == len(ids)
    assert all(uuid.UUID(i).version == 4 and str(uuid.UUID(i)) == i for i in ids)
    entry_ids = {new_entry_id() for _ in range(1_000)}
    assert len(entry_ids) > 990 and all(re.fullmatch(r"[0-9a-f]{8}", e) for e in entry_ids)


def test_a_forked_child_makes_other_ids_than_its_parent() -> None:
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next IDs, to the parent
        os.close(read_end)
        os.write(write_end, " ".join(new_id() for _ in range(5)).encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        childs = set(pipe.read().decode().split())
    os.waitpid(pid, 0)
    assert len(childs) == 5 and not childs & {new_id() for _ in range(5)}
