"""Programs' short IDs and targets (pure): a caller names its Programs by ID or by a
unique ID prefix, and is shown each by the shortest prefix, at least 8 characters,
that none of its other Programs' IDs starts with."""

from __future__ import annotations

from collections.abc import Sequence

from piagents.agents.addressing import ShortIds
from piagents.programs import texts
from piagents.programs.calls import Refused


def short_ids(ids: Sequence[str]) -> ShortIds:
    """The short IDs of one caller's Programs (all of them count)."""
    return ShortIds(ids)


def resolve(target: str, ids: Sequence[str], shown: ShortIds | None = None) -> str | Refused:
    """The one Program of `ids` that `target` names, or the tool's error."""
    wanted = target.strip().lower()
    if wanted in ids:
        return wanted
    matches = [i for i in ids if i.startswith(wanted)] if wanted else []
    if len(matches) == 1:
        return matches[0]
    if not matches:
        return Refused(texts.no_match(target))
    short = shown if shown is not None else short_ids(ids)
    return Refused(texts.ambiguous(target, [short[i] for i in sorted(matches)]))
