"""Values read from the PostgreSQL store's rows, checked against the records' Literal
types (as `sqlite_values` does for SQLite), and text made storable."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import msgspec

from piagents.store import postgres_errors as errors
from piagents.store.base import StoreError
from piagents.store.sqlite_values import OneOf

L = TypeVar("L", bound=str)
R = TypeVar("R")


def check(one_of: OneOf[L], location: str, value: object, where: str) -> L:
    """`value`, read from `where`; StoreDamaged if it is none of `one_of`'s values."""
    if value in one_of.values:
        return value  # type: ignore[return-value]
    allowed = ", ".join(repr(v) for v in one_of.values)
    raise errors.damaged(
        location, f"{where} has {one_of.what} {value!r}, which is not one of {allowed}"
    )


def record_body(location: str, decode: Callable[[bytes], R], body: bytes, what: str) -> R:
    """A record stored as a JSON body (a generation, a Program), decoded: StoreDamaged
    when a field has a value no pi-agents writes, StoreError when it is unreadable."""
    try:
        return decode(bytes(body))
    except msgspec.ValidationError as exc:
        raise errors.damaged(location, f"a {what} record is not valid: {exc}") from exc
    except msgspec.DecodeError as exc:
        raise StoreError(f"{location}: an unreadable {what} record ({exc})") from exc


def text(value: str | None) -> str | None:
    """`value` as a PostgreSQL text column can hold it: NUL, which it cannot, as U+FFFD."""
    return value.replace("\x00", "\ufffd") if value is not None and "\x00" in value else value
