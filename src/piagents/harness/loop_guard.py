"""Keeping a run from going round in circles.

Two guards, as the best coding agents have them: a bound on the model calls of
one run, and a stop to the same tool call made again and again with the same
result (a model that lists the same directory 57 times is not making
progress). The third identical call in a row is told so in its result; the
fifth ends the run. A call its tool says was a poll (a `wait` whose Agents are
still working) may repeat freely: what it looks at is changing.

The texts are model- and user-facing; they are built here by pure functions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from piagents.ai.messages import ToolCall

DEFAULT_MAX_MODEL_CALLS = 200
REPEAT_NOTE_AT = 3
REPEAT_STOP_AT = 5
SETTING = "maxModelCallsPerRun"


def repeat_note(name: str, count: int) -> str:
    """Appended to the result of the third and later identical calls in a row."""
    return (
        f"[This is {_ordinal(count)} {name} call in a row with the same arguments and the "
        "same result; repeating it will not change anything. Do something else, or answer "
        f"with what you have: the run stops at {REPEAT_STOP_AT} in a row.]"
    )


def repeat_stopped(name: str, count: int) -> str:
    """Why a run ended after identical calls."""
    return (
        f"Stopped: the model called {name} {count} times in a row with the same arguments "
        "and got the same result each time. Send a message to go on from here."
    )


def model_calls_exhausted(limit: int) -> str:
    """Why a run ended at its bound of model calls."""
    return (
        f"Stopped after {limit} model calls in one run (the limit set by "
        f'"pi-agents": {{"{SETTING}": {limit}}} in settings.json). Send a message to go '
        "on from here, or raise the limit."
    )


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"the {n}{suffix}"


@dataclass(slots=True)
class RepeatGuard:
    """Counts identical tool calls in a row (same tool, arguments and result) in one run."""

    _last: tuple[str, str, str, bool] | None = None
    streak: int = 0
    stopped: str | None = None  # why the run must end, once it must

    def observe(self, call: ToolCall, text: str, is_error: bool, polls: bool = False) -> str | None:
        """Record one call's result, in call order; the note to add to it, if any."""
        if polls:
            self._last, self.streak = None, 0
            return None
        key = (call.name, _canonical(call.args), text, is_error)
        self.streak = self.streak + 1 if key == self._last else 1
        self._last = key
        if self.streak >= REPEAT_STOP_AT and self.stopped is None:
            self.stopped = repeat_stopped(call.name, self.streak)
        if self.streak >= REPEAT_NOTE_AT:
            return repeat_note(call.name, self.streak)
        return None


def _canonical(args: Any) -> str:
    try:
        return json.dumps(args, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError):  # not plain JSON: never equal to another call
        return repr(id(args))


def is_poll(tool: object, args: dict[str, Any], details: Any) -> bool:
    """Whether the tool says a call (its arguments and its result's details) polled
    something that is still changing (`tool.is_poll(args, details)`)."""
    polls = getattr(tool, "is_poll", None)
    return bool(polls(args, details)) if polls is not None else False
