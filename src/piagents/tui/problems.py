"""What is wrong with the settings, the extensions and the agent definitions, for the user.

The runtime collects settings and extension warnings when it starts, and the
supervision layer reports definition problems to the model only; the UI shows
them to the user through this one module (the one place that reads them, from the
read model).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from piagents.agent import Agent
from piagents.ai.models import ModelRef, has_thinking_levels
from piagents.read_model import ReadModel

Severity: TypeAlias = Literal["error", "warning"]


@dataclass(frozen=True, slots=True)
class Problem:
    """One problem, in the words the user reads (its file and field named)."""

    severity: Severity
    text: str


def runtime_problems(model: ReadModel) -> tuple[Problem, ...]:
    """Settings and extension warnings: the defaults are used, or the extension is not."""
    return tuple(Problem("warning", f"Warning: {w}") for w in model.warnings())


def no_levels(model: ModelRef) -> str:
    return f"{model} has no thinking levels"


def thinking_note(model: ModelRef, level: str) -> str | None:
    """What to say of a thinking level the model cannot use (pure); None if it can."""
    if level == "off" or has_thinking_levels(model):
        return None
    return f"{no_levels(model)}: thinking {level} has no effect."


def session_problems(model: ReadModel, root: Agent) -> tuple[Problem, ...]:
    """What to tell the user when `root` opens: the runtime's warnings, a thinking level
    its model cannot use, and a lead's definition problems."""
    problems = list(runtime_problems(model))
    note = thinking_note(root.model, root.thinking)
    if note is not None:
        problems.append(Problem("warning", f"Warning: {note}"))
    if model.face(root) == "supervision":
        problems.extend(definition_problems(model, root.cwd))
    return tuple(problems)


def definition_problems(model: ReadModel, cwd: str) -> tuple[Problem, ...]:
    """The problems of the definitions a lead working in `cwd` uses: errors when they
    cannot be used at all (discovery stops, so `delegate` and `list` fail), warnings for
    tools no one provides, for the files of an untrusted project (not used, so not
    fatal) and for a damaged trust file."""
    found = model.definition_survey(cwd)
    problems: list[Problem] = []
    if found.trust_error is not None:  # the supervisor then trusts no project
        problems.append(Problem("warning", f"Warning: no project is trusted: {found.trust_error}"))
    report = found.report
    if report.roster is None:
        problems.extend(
            Problem("error", f"Agent definitions cannot be used until fixed: {p.text}")
            for p in report.errors
        )
        return tuple(problems)
    unused = set(report.roster.untrusted_problems)
    problems.extend(
        Problem("warning", f"Warning: {p.text} (not used: the project is not trusted)")
        if p.text in unused
        else Problem("warning", f"Warning: {p.text}")
        for p in report.warnings
    )
    return tuple(problems)
