"""Short IDs and addresses (pure): how a reader names and finds visible Agents."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

MIN_SHORT = 8


def short_ids(ids: Sequence[str], reader_id: str | None = None) -> dict[str, str]:
    """The shortest prefix of each ID, at least 8 characters, that no other ID has.

    `ids` are the Agents visible to the reader; the reader's own ID counts too.
    """
    everyone = sorted(set(ids) | ({reader_id} if reader_id else set()))
    out: dict[str, str] = {}
    for i, agent_id in enumerate(everyone):
        need = MIN_SHORT
        for j in (i - 1, i + 1):  # in sorted order, the longest shared prefix is a neighbour's
            if 0 <= j < len(everyone):
                need = max(need, _common_prefix(agent_id, everyone[j]) + 1)
        out[agent_id] = agent_id[: min(need, len(agent_id))]
    return out


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


@dataclass(frozen=True, slots=True)
class Candidate:
    id: str
    name: str | None


@dataclass(frozen=True, slots=True)
class Resolved:
    """One match, several (ambiguous), or none."""

    matches: tuple[Candidate, ...]

    @property
    def unique(self) -> Candidate | None:
        return self.matches[0] if len(self.matches) == 1 else None


def resolve(address: str, visible: Sequence[Candidate]) -> Resolved:
    """An ID, then a name, then a unique ID prefix, tried in that order."""
    exact = [c for c in visible if c.id == address]
    if exact:
        return Resolved(tuple(exact[:1]))
    named = [c for c in visible if c.name is not None and c.name == address]
    if named:
        return Resolved(tuple(named))
    if address:
        prefixed = [c for c in visible if c.id.startswith(address)]
        return Resolved(tuple(prefixed))
    return Resolved(())
