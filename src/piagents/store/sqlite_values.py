"""Values read from the SQLite store's rows, checked against the records' Literal
types: a value no pi-agents writes means the database was changed from outside,
and is reported as damage rather than passed on."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, TypeVar, cast, get_args

import msgspec

from piagents.ai.models import ThinkingLevel
from piagents.store import sqlite_errors
from piagents.store.base import StoreError
from piagents.store.records import InputDelivery, InputKind, InputStatus

L = TypeVar("L", bound=str)
R = TypeVar("R")


class OneOf(Generic[L]):
    """The values of a Literal type; `check` passes one of them and refuses others."""

    def __init__(self, literal: Any, what: str) -> None:
        self.values: tuple[str, ...] = get_args(literal)
        self._allowed = frozenset(self.values)
        self.what = what

    def check(self, path: Path, value: object, where: str) -> L:
        """`value`, read from `where` in the store at `path`; StoreDamaged if it is not
        one of the values."""
        if value in self._allowed:
            return cast(L, value)
        allowed = ", ".join(repr(v) for v in self.values)
        raise sqlite_errors.damaged(
            path, f"{where} has {self.what} {value!r}, which is not one of {allowed}"
        )


THINKING: OneOf[ThinkingLevel] = OneOf(ThinkingLevel, "the thinking level")
INPUT_KIND: OneOf[InputKind] = OneOf(InputKind, "the kind")
INPUT_DELIVERY: OneOf[InputDelivery] = OneOf(InputDelivery, "the delivery")
INPUT_STATUS: OneOf[InputStatus] = OneOf(InputStatus, "the status")


def record_body(path: Path, decode: Callable[[bytes | str], R], body: bytes | str, what: str) -> R:
    """A record stored as a JSON body (a generation, a Program), decoded: StoreDamaged
    when a field has a value no pi-agents writes, StoreError when it is unreadable."""
    try:
        return decode(body)
    except msgspec.ValidationError as exc:  # a field of the wrong type or value
        raise sqlite_errors.damaged(path, f"a {what} record is not valid: {exc}") from exc
    except msgspec.DecodeError as exc:
        raise StoreError(f"{path}: an unreadable {what} record ({exc})") from exc
