"""Programs' short IDs and targets (pure): a caller names its Programs by ID or by a
unique ID prefix, and is shown each by the shortest prefix, at least 8 characters,
that none of its other Programs' IDs starts with. Its Programs are the scripts of its
`program` tool; the SDK's scopes opened from it are never among them."""

from __future__ import annotations

from collections.abc import Sequence

from piagents.agents.addressing import ShortIds
from piagents.programs import texts
from piagents.programs.calls import Refused
from piagents.store.records import ProgramRecord


def short_ids(ids: Sequence[str]) -> ShortIds:
    """The short IDs of one caller's Programs (all of them count)."""
    return ShortIds(ids)


def shown_ids(programs: Sequence[ProgramRecord]) -> dict[str, str]:
    """The short IDs front ends show for one caller's Programs (scripts and scopes): a
    script's as its caller's model reads it (among the scripts), a scope's among all of
    them, so that no script's short ID names it."""
    scripts = short_ids([p.id for p in programs if p.kind == "script"])
    every = short_ids([p.id for p in programs])
    return {p.id: scripts[p.id] if p.kind == "script" else every[p.id] for p in programs}


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
