"""A Program's end as its caller reads it (pure): the state it ended in and the
result text in the foreground layout of PROGRAM-NOTES.md.

A Program that returned is `completed`; one that raised (or broke a sandbox limit)
is `failed` with its traceback; one whose `timeout` expired or that was stopped is
`stopped`, its error `Script timed out: …` or `Script aborted: …`. Work that did
not stop within the cleanup timeout adds the cleanup error line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from piagents.programs import texts
from piagents.programs.sandbox import ScriptOutcome
from piagents.programs.texts import CallMade, ProgramState


@dataclass(frozen=True, slots=True)
class StopCause:
    """Why a running Program was stopped from outside: `detail` ends its error line."""

    kind: Literal["timed_out", "aborted"]
    detail: str


@dataclass(frozen=True, slots=True)
class RunResult:
    state: ProgramState
    text: str


def timed_out(timeout: float) -> StopCause:
    return StopCause("timed_out", texts.timeout_expired(timeout))


def console_lines(printed: Sequence[str]) -> list[str]:
    """The printed chunks (whole lines, in order) as the console block's lines."""
    return "".join(printed).splitlines()


def run_result(
    outcome: ScriptOutcome | None,
    *,
    seconds: float,
    items: Sequence[str],
    printed: Sequence[str],
    calls: Sequence[CallMade],
    stop: StopCause | None,
    cleanup_failed: bool,
) -> RunResult:
    """`outcome` is None when the run did not end by itself (`stop` says why), or
    failed before its script ran (then `stop` is None and `error` below)."""
    console = console_lines(printed)
    if outcome is not None and outcome.state == "completed" and stop is None:
        text = texts.completed(seconds, texts.output_text(items, console, outcome.value))
        state: ProgramState = "completed"
    else:
        output = texts.output_text(items, console)
        if stop is not None:
            error = (
                texts.timed_out(stop.detail)
                if stop.kind == "timed_out"
                else (texts.aborted(stop.detail))
            )
            state = "stopped"
        elif outcome is not None and outcome.state == "failed":
            error, state = outcome.error or "", "failed"
        else:
            raise ValueError("a stopped outcome needs the StopCause that says why")
        text = texts.failed(seconds, output, error, calls)
    if cleanup_failed:
        text += f"\n\n{texts.CLEANUP_ERROR}"
    return RunResult(state, text)


def sandbox_failure(seconds: float, error: str) -> RunResult:
    """The sandbox could not run the script at all (its workers, its prelude)."""
    return RunResult("failed", texts.failed(seconds, "", error, ()))


def left_stopped(reason: str) -> str:
    """The result of a Program its process left running, stopped when its caller loaded."""
    return texts.failed(0.0, "", texts.aborted(reason), ())
