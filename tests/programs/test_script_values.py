"""Values from the sandbox become JSON values, whatever monty hands over."""

from __future__ import annotations

import json
import math

from piagents.programs.script_values import to_json_value


class Proxy:
    """Stands for monty's MontyClassProxy: an instance of a script's class."""

    def __init__(self) -> None:
        self.attributes = {"x": 1, "tags": ("a",)}


def test_sequences_sets_and_bytes_become_lists_and_text() -> None:
    value = {"t": (1, (2, 3)), "s": {3, 1}, "b": b"caf\xc3\xa9", "bad": b"\xff"}

    assert to_json_value(value) == {"t": [1, [2, 3]], "s": [1, 3], "b": "café", "bad": "\ufffd"}


def test_keys_become_strings_and_instances_their_attributes() -> None:
    assert to_json_value({1: Proxy(), None: 2}) == {"1": {"x": 1, "tags": ["a"]}, "None": 2}


def test_what_json_cannot_hold_becomes_text() -> None:
    value = [ValueError("bad"), math.inf, object]

    converted = to_json_value(value)

    assert converted == ["ValueError: bad", "inf", repr(object)]
    json.dumps(converted, allow_nan=False)


def test_a_deeply_nested_value_is_cut_not_a_recursion_error() -> None:
    value: list[object] = []
    inner = value
    for _ in range(500):
        inner.append([])
        inner = inner[0]  # type: ignore[assignment]

    json.dumps(to_json_value(value))
