"""The structured error of the supervision face, and its model-facing text.

Every failure of an `agent` action (or of `ask_owner`) is one `SupervisionError`:
an immutable record that is also the exception the operation raises. Its
structured form (`to_details`) is the object the tool result carries::

    {"category": "invalid_request", "message": "...", "operation": "delegate",
     "rollbackOccurred": false, "retryAttempted": false, "nextAction": "..."}

`nextAction` is present only where the caller can do something about it.

The text the model reads (`render_error`) starts with one stable line, then at
most two more::

    Error [<category>] <operation>: <message>
    rollbackOccurred=<true|false> retryAttempted=<true|false>   (only when either is true)
    Next action: <next action>                                   (only when there is one)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import FrozenInstanceError, dataclass
from typing import Any, Literal, TypeAlias, cast

Category: TypeAlias = Literal[
    "invalid_request",
    "agent_label_exists",
    "agent_busy",
    "target_not_found",
    "target_ambiguous",
    "rollback_failure",
    "internal_failure",
]
CATEGORIES: tuple[Category, ...] = (
    "invalid_request",
    "agent_label_exists",
    "agent_busy",
    "target_not_found",
    "target_ambiguous",
    "rollback_failure",
    "internal_failure",
)

# What raising, chaining and `add_note` write on any exception; everything else is frozen.
_EXCEPTION_ATTRIBUTES = frozenset(
    {"__traceback__", "__cause__", "__context__", "__suppress_context__", "__notes__"}
)


@dataclass(slots=True, unsafe_hash=True)
class SupervisionError(Exception):
    """A failed supervision operation: a frozen record that can be raised.

    `operation` is the action (`delegate`, `reply`, ...), `ask_owner`, or
    `agent` when the action itself could not be read. `str(error)` is the message.
    """

    category: Category
    message: str
    operation: str
    rollback_occurred: bool = False
    retry_attempted: bool = False
    next_action: str | None = None

    def __post_init__(self) -> None:
        if self.category not in CATEGORIES:
            raise ValueError(f"unknown supervision error category {self.category!r}")
        Exception.__init__(self, self.message)

    # Not `frozen=True`: a frozen dataclass refuses the `__traceback__` that
    # contextlib and asyncio assign to exceptions they re-raise.
    def __setattr__(self, name: str, value: object) -> None:
        if name in _EXCEPTION_ATTRIBUTES or (name in _FIELD_NAMES and not hasattr(self, name)):
            Exception.__setattr__(self, name, value)
            return
        raise FrozenInstanceError(f"cannot assign to {name!r}")

    def __delattr__(self, name: str) -> None:
        if name in _EXCEPTION_ATTRIBUTES:
            Exception.__delattr__(self, name)
            return
        raise FrozenInstanceError(f"cannot delete {name!r}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            SupervisionError,
            (
                self.category,
                self.message,
                self.operation,
                self.rollback_occurred,
                self.retry_attempted,
                self.next_action,
            ),
        )

    def to_details(self) -> dict[str, Any]:
        """The structured error object of a tool result (camelCase keys)."""
        details: dict[str, Any] = {
            "category": self.category,
            "message": self.message,
            "operation": self.operation,
            "rollbackOccurred": self.rollback_occurred,
            "retryAttempted": self.retry_attempted,
        }
        if self.next_action is not None:
            details["nextAction"] = self.next_action
        return details

    @classmethod
    def from_details(cls, details: Mapping[str, Any]) -> SupervisionError:
        """The error `to_details` describes; a malformed object raises ValueError."""
        expected = {"category", "message", "operation", "rollbackOccurred", "retryAttempted"}
        keys = set(details)
        if not expected <= keys or not keys <= expected | {"nextAction"}:
            raise ValueError(f"not a supervision error object: keys {sorted(keys)}")
        category = details["category"]
        texts = [details["message"], details["operation"], details.get("nextAction", "")]
        flags = [details["rollbackOccurred"], details["retryAttempted"]]
        if not all(isinstance(t, str) for t in texts) or not all(
            isinstance(f, bool) for f in flags
        ):
            raise ValueError("supervision error object has a field of the wrong type")
        return cls(
            category=cast(Category, category),
            message=details["message"],
            operation=details["operation"],
            rollback_occurred=details["rollbackOccurred"],
            retry_attempted=details["retryAttempted"],
            next_action=details.get("nextAction"),
        )

    def replace(self, **changes: Any) -> SupervisionError:
        """A copy with some fields changed (the record itself never changes)."""
        return dataclasses.replace(self, **changes)


_FIELD_NAMES = frozenset(f.name for f in dataclasses.fields(SupervisionError))


def invalid_request(
    operation: str, message: str, *, next_action: str | None = None
) -> SupervisionError:
    """The caller's request was malformed; nothing was changed."""
    return SupervisionError(
        category="invalid_request",
        message=message,
        operation=operation,
        next_action=next_action,
    )


def render_error(error: SupervisionError) -> str:
    """The model-facing text of an error (format in the module docstring)."""
    lines = [f"Error [{error.category}] {error.operation}: {error.message}"]
    if error.rollback_occurred or error.retry_attempted:
        lines.append(
            f"rollbackOccurred={_flag(error.rollback_occurred)} "
            f"retryAttempted={_flag(error.retry_attempted)}"
        )
    if error.next_action is not None:
        lines.append(f"Next action: {error.next_action}")
    return "\n".join(lines)


def _flag(value: bool) -> str:
    return "true" if value else "false"
