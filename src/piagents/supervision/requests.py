"""Read one raw call of the supervision `agent` tool, or of `ask_owner`, into a typed request.

Each action accepts exactly the fields the API document allows it; anything
else is an `invalid_request` `SupervisionError` whose message names the field
and the fields that are allowed. Checks run in this order, and the first that
fails is reported: the arguments are an object; `action` is one of the nine;
no field is foreign to the action; every required field is present; each
field has its type and range.

Values are kept as given (not stripped): `session` and `fork` are resolved by
the runtime, `cwd` and `files` from the caller's working directory.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeAlias

from piagents.supervision import error_texts, texts
from piagents.supervision.errors import SupervisionError, invalid_request
from piagents.supervision.labels import validate_label

Action: TypeAlias = Literal[
    "list",
    "delegate",
    "continue",
    "steer",
    "interrupt",
    "reply",
    "close",
    "inspect",
    "transcript",
]
ACTIONS: tuple[Action, ...] = (
    "list",
    "delegate",
    "continue",
    "steer",
    "interrupt",
    "reply",
    "close",
    "inspect",
    "transcript",
)

ALLOWED_FIELDS: dict[Action, tuple[str, ...]] = {
    "list": ("action",),
    "delegate": ("action", "definition", "task", "label", "cwd", "files", "fork", "timeoutMs"),
    "continue": ("action", "session", "task", "files", "timeoutMs"),
    "steer": ("action", "agent", "message", "files"),
    "interrupt": ("action", "agent", "message", "files"),
    "reply": ("action", "agent", "message", "files"),
    "close": ("action", "agent"),
    "inspect": ("action", "agent"),
    "transcript": ("action", "agent"),
}
REQUIRED_FIELDS: dict[Action, tuple[str, ...]] = {
    "list": (),
    "delegate": ("definition", "task"),
    "continue": ("session", "task"),
    "steer": ("agent", "message"),
    "interrupt": ("agent", "message"),
    "reply": ("agent", "message"),
    "close": ("agent",),
    "inspect": ("agent",),
    "transcript": ("agent",),
}
TIMEOUT_MS_MIN = 5001
TIMEOUT_MS_MAX = 300_000
TOOL_NAME = "agent"
ASK_OWNER = "ask_owner"
ASK_OWNER_FIELDS = ("question", "files")


@dataclass(frozen=True, slots=True)
class ListRequest:
    action: ClassVar[Literal["list"]] = "list"


@dataclass(frozen=True, slots=True)
class DelegateRequest:
    definition: str
    task: str
    label: str | None = None
    cwd: str | None = None
    files: tuple[str, ...] = ()
    fork: str | None = None
    timeout_ms: int | None = None
    action: ClassVar[Literal["delegate"]] = "delegate"


@dataclass(frozen=True, slots=True)
class ContinueRequest:
    session: str
    task: str
    files: tuple[str, ...] = ()
    timeout_ms: int | None = None
    action: ClassVar[Literal["continue"]] = "continue"


@dataclass(frozen=True, slots=True)
class SteerRequest:
    agent: str
    message: str
    files: tuple[str, ...] = ()
    action: ClassVar[Literal["steer"]] = "steer"


@dataclass(frozen=True, slots=True)
class InterruptRequest:
    agent: str
    message: str
    files: tuple[str, ...] = ()
    action: ClassVar[Literal["interrupt"]] = "interrupt"


@dataclass(frozen=True, slots=True)
class ReplyRequest:
    agent: str
    message: str
    files: tuple[str, ...] = ()
    action: ClassVar[Literal["reply"]] = "reply"


@dataclass(frozen=True, slots=True)
class CloseRequest:
    agent: str
    action: ClassVar[Literal["close"]] = "close"


@dataclass(frozen=True, slots=True)
class InspectRequest:
    agent: str
    action: ClassVar[Literal["inspect"]] = "inspect"


@dataclass(frozen=True, slots=True)
class TranscriptRequest:
    agent: str
    action: ClassVar[Literal["transcript"]] = "transcript"


AgentRequest: TypeAlias = (
    ListRequest
    | DelegateRequest
    | ContinueRequest
    | SteerRequest
    | InterruptRequest
    | ReplyRequest
    | CloseRequest
    | InspectRequest
    | TranscriptRequest
)


@dataclass(frozen=True, slots=True)
class AskOwnerRequest:
    question: str
    files: tuple[str, ...] = ()


# ---- parsing ------------------------------------------------------------------------


def parse_request(raw: object) -> AgentRequest:
    """The typed request of one `agent` call; an invalid call raises `SupervisionError`."""
    if not isinstance(raw, Mapping):
        raise invalid_request(TOOL_NAME, error_texts.not_an_object(_json_type(raw)))
    action = _action(raw)
    _check_fields(raw, ALLOWED_FIELDS[action], REQUIRED_FIELDS[action], action)
    read = _Reader(raw, action)
    if action == "list":
        return ListRequest()
    if action == "delegate":
        label = read.optional_text("label")
        return DelegateRequest(
            definition=read.text("definition"),
            task=read.text("task"),
            label=None if label is None else validate_label(label, action),
            cwd=read.optional_text("cwd"),
            files=read.files(),
            fork=read.optional_text("fork"),
            timeout_ms=read.timeout_ms(),
        )
    if action == "continue":
        return ContinueRequest(
            session=read.text("session"),
            task=read.text("task"),
            files=read.files(),
            timeout_ms=read.timeout_ms(),
        )
    if action == "steer":
        return SteerRequest(read.text("agent"), read.text("message"), read.files())
    if action == "interrupt":
        return InterruptRequest(read.text("agent"), read.text("message"), read.files())
    if action == "reply":
        return ReplyRequest(read.text("agent"), read.text("message"), read.files())
    if action == "close":
        return CloseRequest(read.text("agent"))
    if action == "inspect":
        return InspectRequest(read.text("agent"))
    return TranscriptRequest(read.text("agent"))


def parse_ask_owner(raw: object) -> AskOwnerRequest:
    """The typed request of one `ask_owner` call; an invalid call raises `SupervisionError`."""
    if not isinstance(raw, Mapping):
        raise invalid_request(ASK_OWNER, error_texts.not_an_object(_json_type(raw)))
    _check_fields(raw, ASK_OWNER_FIELDS, ("question",), ASK_OWNER)
    read = _Reader(raw, ASK_OWNER)
    return AskOwnerRequest(read.text("question"), read.files())


def _action(raw: Mapping[Any, Any]) -> Action:
    choices = ", ".join(ACTIONS)
    if "action" not in raw:
        raise invalid_request(TOOL_NAME, error_texts.action_required(choices))
    action = raw["action"]
    for known in ACTIONS:
        if isinstance(action, str) and action == known:
            return known
    raise invalid_request(TOOL_NAME, error_texts.unknown_action(_json_value(action), choices))


def _check_fields(
    raw: Mapping[Any, Any], allowed: tuple[str, ...], required: tuple[str, ...], operation: str
) -> None:
    foreign = [k for k in raw if k not in allowed]
    if foreign:
        names = [f"`{k}`" if isinstance(k, str) else _json_value(k) for k in foreign]
        raise invalid_request(operation, error_texts.fields_not_allowed(names, operation, allowed))
    missing = [k for k in required if k not in raw]
    if missing:
        raise invalid_request(operation, error_texts.fields_missing(operation, missing))


class _Reader:
    """Typed reads of one call's fields, each failing as an invalid_request naming the field."""

    def __init__(self, raw: Mapping[Any, Any], operation: str) -> None:
        self.raw = raw
        self.operation = operation

    def _fail(self, message: str) -> SupervisionError:
        return invalid_request(self.operation, message)

    def text(self, key: str) -> str:
        """A required field: a string with something other than whitespace in it."""
        value = self.raw[key]
        if not isinstance(value, str):
            raise self._fail(error_texts.not_a_string(key, _json_type(value)))
        if not value.strip():
            raise self._fail(error_texts.empty_field(key))
        return value

    def optional_text(self, key: str) -> str | None:
        return self.text(key) if key in self.raw else None

    def files(self) -> tuple[str, ...]:
        if "files" not in self.raw:
            return ()
        value = self.raw["files"]
        if not isinstance(value, list | tuple):
            raise self._fail(error_texts.files_not_an_array(_json_type(value)))
        for i, path in enumerate(value):
            if not isinstance(path, str) or not path.strip():
                raise self._fail(error_texts.file_not_a_path_string(i))
        return tuple(value)

    def timeout_ms(self) -> int | None:
        if "timeoutMs" not in self.raw:
            return None
        value = self.raw["timeoutMs"]
        # bool is an int in Python but not in JSON; 5001.0 is a float, not an integer
        if (
            isinstance(value, bool)
            or not isinstance(value, int)
            or not TIMEOUT_MS_MIN <= value <= TIMEOUT_MS_MAX
        ):
            shown_value = _json_value(value)
            text = error_texts.timeout_out_of_range(TIMEOUT_MS_MIN, TIMEOUT_MS_MAX, shown_value)
            raise self._fail(text)
        return value


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


_QUOTED_CHARS = 80


def _json_value(value: object) -> str:
    """`value` as JSON, for quoting the caller's input back to it: shortened, and by its
    kind when it cannot be written (nested too deep, an integer too long to print)."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return _json_type(value)
    return text if len(text) <= _QUOTED_CHARS else text[: _QUOTED_CHARS - 1] + "…"


# ---- schemas ------------------------------------------------------------------------


@functools.cache
def parameters() -> dict[str, Any]:
    """The JSON schema of the supervision `agent` tool (one shared, read-only object)."""
    d = texts.PARAMETER_DESCRIPTIONS
    paths = {"type": "array", "items": {"type": "string", "minLength": 1}}
    return {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": list(ACTIONS), "description": d["action"]},
            "definition": {"type": "string", "minLength": 1, "description": d["definition"]},
            "task": {"type": "string", "minLength": 1, "description": d["task"]},
            "label": {
                "type": "string",
                "pattern": "^[a-z][a-z0-9_-]{0,31}$",
                "description": d["label"],
            },
            "cwd": {"type": "string", "minLength": 1, "description": d["cwd"]},
            "files": {**paths, "description": d["files"]},
            "fork": {"type": "string", "minLength": 1, "description": d["fork"]},
            "session": {"type": "string", "minLength": 1, "description": d["session"]},
            "timeoutMs": {
                "type": "integer",
                "minimum": TIMEOUT_MS_MIN,
                "maximum": TIMEOUT_MS_MAX,
                "description": d["timeoutMs"],
            },
            "agent": {"type": "string", "minLength": 1, "description": d["agent"]},
            "message": {"type": "string", "minLength": 1, "description": d["message"]},
        },
        "required": ["action"],
        "additionalProperties": False,
    }


@functools.cache
def ask_owner_parameters() -> dict[str, Any]:
    """The JSON schema of `ask_owner` (one shared, read-only object)."""
    d = texts.ASK_OWNER_PARAMETER_DESCRIPTIONS
    return {
        "type": "object",
        "properties": {
            "question": {"type": "string", "minLength": 1, "description": d["question"]},
            "files": {
                "type": "array",
                "items": {"type": "string", "minLength": 1},
                "description": d["files"],
            },
        },
        "required": ["question"],
        "additionalProperties": False,
    }
