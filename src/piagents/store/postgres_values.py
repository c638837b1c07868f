"""Values read from the PostgreSQL store's rows, checked against the records' Literal
types (as `sqlite_values` does for SQLite), text made storable, and lists of text
sent as arrays."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import msgspec
import psycopg
from psycopg.adapt import Dumper

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


class TextArray(tuple[str, ...]):
    """Text values sent as one `text[]` argument (`ANY(%s)`). psycopg adapts a list by
    looking at its elements to choose the array's type, at every call: with a lease
    fence and a list of inputs in every write of a turn, ~10 us a statement."""

    __slots__ = ()


class TextArrayDumper(Dumper):
    """`TextArray` as a `text[]` literal (text format): each element quoted, with its
    backslashes and double quotes escaped."""

    oid = psycopg.adapters.types["text"].array_oid

    def dump(self, obj: Any) -> bytes:
        quoted = ('"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"' for v in obj)
        return ("{" + ",".join(quoted) + "}").encode()


def register_values(db: psycopg.Connection[Any]) -> None:
    """Teach a connection the store's own argument types."""
    db.adapters.register_dumper(TextArray, TextArrayDumper)
