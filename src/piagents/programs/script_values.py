"""Values that cross between a script and the host, as JSON values.

The sandbox hands the host Python values of its own kinds: tuples, sets, bytes,
exceptions, proxies of the script's class instances. Tool arguments, Agents'
messages and a Program's return value are JSON, so each crossing is converted
here once: sequences and sets become lists, mappings get string keys, bytes are
decoded, an instance becomes the dict of its attributes, and anything else
becomes its `repr`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, TypeAlias

JsonValue: TypeAlias = "bool | int | float | str | list[JsonValue] | dict[str, JsonValue] | None"

_MAX_DEPTH = 100


def to_json_value(value: object, _depth: int = 0) -> JsonValue:
    """`value` as a JSON value (see the module docstring); never raises."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if _depth >= _MAX_DEPTH:
        return repr(value)
    if isinstance(value, Mapping):
        return {_key(k): to_json_value(v, _depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_json_value(v, _depth + 1) for v in value]
    if isinstance(value, set | frozenset):
        items = [to_json_value(v, _depth + 1) for v in value]
        return sorted(items, key=repr)
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", errors="replace")
    if isinstance(value, BaseException):
        return f"{type(value).__name__}: {value}"
    attributes: Any = getattr(value, "attributes", None)  # monty's MontyClassProxy
    if isinstance(attributes, Mapping):
        return to_json_value(attributes, _depth + 1)
    return repr(value)


def _key(key: object) -> str:
    return key if isinstance(key, str) else str(to_json_value(key))
