"""Values the store reads back are those its records' Literal types allow: a row
changed from outside to hold anything else is reported as damage, naming the
store, the row and the value, and is never passed on to the runtime."""

from __future__ import annotations

import json
import re
from typing import get_args

import msgspec
import pytest

from piagents.ai.models import ThinkingLevel
from piagents.store.base import Store, StoreDamaged
from piagents.store.records import (
    GenerationKind,
    GenerationOutcome,
    GenerationPlacement,
    GenerationRecord,
    GenerationState,
    InputDelivery,
    InputKind,
    InputRecord,
    InputStatus,
    SessionRecord,
)


def an_input(i: str = "i1", **changes: object) -> InputRecord:
    fields: dict[str, object] = dict(
        id=i,
        root_id="r",
        recipient_id="s",
        sender_id=None,
        kind="input",
        delivery="followUp",
        text="hi",
    )
    fields.update(changes)
    return InputRecord(**fields)  # type: ignore[arg-type]


def a_generation(**changes: object) -> GenerationRecord:
    fields: dict[str, object] = dict(
        id="g1",
        label="scout-1",
        definition="scout",
        root_id="r",
        owner_id="r",
        session_id="s",
        cwd="/w",
        task="look",
        placement="inline",
    )
    fields.update(changes)
    return GenerationRecord(**fields)  # type: ignore[arg-type]


def damaged(location: str, *parts: str) -> str:
    return re.escape(f"{location} is damaged (") + ".*".join(re.escape(p) for p in parts)


@pytest.mark.parametrize("level", get_args(ThinkingLevel))
def test_every_thinking_level_round_trips(store: Store, level: ThinkingLevel) -> None:
    record = SessionRecord(id="s", cwd="/", thinking=level)
    store.create_session(record)
    assert store.get_session("s") == record
    assert store.update_session("s", thinking=level) == record


def test_a_session_with_an_unknown_thinking_level_is_damage_named_by_its_id(
    store: Store, backend
) -> None:
    store.create_session(SessionRecord(id="s", cwd="/"))
    store.create_session(SessionRecord(id="ok", cwd="/"))
    backend.sql("UPDATE sessions SET thinking = 'huge' WHERE id = 's'")

    expected = damaged(
        backend.location, "session s has the thinking level 'huge'", "'off', 'minimal'"
    )
    with pytest.raises(StoreDamaged, match=expected):
        store.get_session("s")
    with pytest.raises(StoreDamaged, match=expected):
        store.list_sessions()
    with pytest.raises(StoreDamaged, match=expected):
        store.update_session("s", name="n")
    assert store.get_session("ok") is not None  # the other sessions still read


@pytest.mark.parametrize(
    ("kind", "delivery", "status"),
    [
        *((k, "followUp", "outstanding") for k in get_args(InputKind)),
        *(("input", d, "outstanding") for d in get_args(InputDelivery)),
        *(("input", "followUp", s) for s in get_args(InputStatus)),
    ],
)
def test_every_kind_delivery_and_status_of_an_input_round_trips(
    store: Store, kind: InputKind, delivery: InputDelivery, status: InputStatus
) -> None:
    added = store.add_input(an_input(kind=kind, delivery=delivery, status=status))
    assert store.inputs() == [added]


@pytest.mark.parametrize(
    ("column", "what"),
    [("kind", "the kind"), ("delivery", "the delivery"), ("status", "the status")],
)
def test_an_input_with_an_unknown_value_is_damage_wherever_it_is_read(
    store: Store, backend, column: str, what: str
) -> None:
    store.add_input(an_input("i1", delivered=False))
    backend.sql(f"UPDATE inputs SET {column} = 'sideways' WHERE id = 'i1'")

    expected = damaged(backend.location, f"input i1 has {what} 'sideways', which is not one of")
    with pytest.raises(StoreDamaged, match=expected):
        store.inputs()
    with pytest.raises(StoreDamaged, match=expected):
        store.take_undelivered(["s"])
    if column != "status":  # (an input of an unknown status is not outstanding: not ended)
        with pytest.raises(StoreDamaged, match=expected):
            store.end_inputs(["i1"], "completed", "done", ended=5)


def test_a_row_the_store_refuses_to_read_is_left_as_it_was(store: Store, backend) -> None:
    store.create_session(SessionRecord(id="s", cwd="/", name="before"))
    store.add_input(an_input("i1", delivered=False))
    store.add_input(an_input("i2"))
    backend.sql("UPDATE inputs SET kind = 'sideways'")
    backend.sql("UPDATE sessions SET thinking = 'huge'")

    with pytest.raises(StoreDamaged):
        store.take_undelivered(["s"])
    with pytest.raises(StoreDamaged):
        store.end_inputs(["i2"], "completed", "done")
    with pytest.raises(StoreDamaged):
        store.update_session("s", name="after")
    assert backend.rows("SELECT id, delivered, status FROM inputs ORDER BY seq") == [
        ("i1", 0, "outstanding"),
        ("i2", 1, "outstanding"),
    ]
    assert backend.rows("SELECT name FROM sessions") == [("before",)]


@pytest.mark.parametrize(
    "changes",
    [
        *({"placement": p} for p in get_args(GenerationPlacement)),
        *({"kind": k} for k in get_args(GenerationKind)),
        *({"state": s} for s in get_args(GenerationState)),
        *({"state": "ended", "outcome": o} for o in get_args(GenerationOutcome)),
    ],
)
def test_every_placement_kind_state_and_outcome_of_a_generation_round_trips(
    store: Store, changes: dict[str, str]
) -> None:
    g = a_generation(**changes)
    store.add_generation(g)
    assert store.get_generation("g1") == g
    assert store.generations() == [g]


@pytest.mark.parametrize("field", ["placement", "kind", "state", "outcome"])
def test_a_generation_with_an_unknown_value_is_damage(store: Store, backend, field: str) -> None:
    store.add_generation(a_generation())
    body = json.loads(msgspec.json.encode(a_generation()))
    body[field] = "sideways"
    backend.sql("UPDATE generations SET body = ? WHERE id = 'g1'", json.dumps(body).encode())

    expected = damaged(backend.location, "a generation record is not valid", f"$.{field}")
    with pytest.raises(StoreDamaged, match=expected):
        store.get_generation("g1")
    with pytest.raises(StoreDamaged, match=expected):
        store.generations(live=True)


def test_a_generation_record_that_is_not_json_stays_an_unreadable_record(
    store: Store, backend
) -> None:
    store.add_generation(a_generation())
    backend.sql("UPDATE generations SET body = ? WHERE id = 'g1'", b"\x00\xff")
    with pytest.raises(Exception, match="an unreadable generation record") as raised:
        store.get_generation("g1")
    assert not isinstance(raised.value, StoreDamaged)
