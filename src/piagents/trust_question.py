"""Whether to ask the user to trust a project's own agent definitions, and what their
answer does: the question a front end puts when a lead opens in such a project."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from piagents.events import DefinitionsChanged, EventHub
from piagents.supervision.definitions import DefinitionError, discover
from piagents.supervision.trust import TrustError, is_trusted, trust


@dataclass(frozen=True, slots=True)
class TrustQuestion:
    """A project with definitions of its own that are not trusted yet."""

    project: Path
    untrusted: tuple[str, ...]  # the names of those definitions, sorted


@dataclass(frozen=True, slots=True)
class Notice:
    text: str
    kind: Literal["info", "error"] = "info"


def trust_question(home: Path, project: Path) -> TrustQuestion | None:
    """The question for a lead's `project`, or None when there is nothing to ask
    (trusted already, nothing of its own, or unreadable: shown as problems instead)."""
    try:
        if is_trusted(home, project):
            return None
        untrusted = discover(home, project, False).untrusted
    except (TrustError, DefinitionError):
        return None
    if not untrusted:
        return None
    return TrustQuestion(project, tuple(sorted(untrusted)))


def answer(home: Path, question: TrustQuestion, trusted: bool | None, hub: EventHub) -> Notice:
    """Record the user's answer; what to tell them."""
    project = question.project
    if not trusted:
        return Notice(
            f"Project definitions in {project} are not used; `pi-agents trust` "
            "trusts the project later."
        )
    try:
        trust(home, project)
    except TrustError as exc:
        return Notice(f"Could not trust {project}: {exc}", "error")
    hub.publish(DefinitionsChanged(str(project), None))
    return Notice(f"Trusted {project}: its agent definitions are used.")
