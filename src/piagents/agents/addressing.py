"""Short IDs and addresses (pure): how a reader names and finds visible Agents."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

MIN_SHORT = 8


def short_ids(ids: Sequence[str], reader_id: str | None = None) -> dict[str, str]:
    """The shortest prefix of each ID, at least 8 characters, that no other ID has.

    `ids` are the Agents visible to the reader; the reader's own ID counts too.
    """
    everyone = sorted(set(ids) | ({reader_id} if reader_id else set()))
    heads = [agent_id[:MIN_SHORT] for agent_id in everyone]
    need = dict.fromkeys(everyone, MIN_SHORT)
    # In sorted order the longest shared prefix is a neighbour's, and only neighbours
    # that share the first 8 characters need more (rare with random IDs).
    for i, (a, b) in enumerate(pairwise(heads)):
        if a == b:
            first, second = everyone[i], everyone[i + 1]
            n = _common_prefix(first, second) + 1
            need[first] = max(need[first], n)
            need[second] = max(need[second], n)
    return {agent_id: agent_id[:n] for agent_id, n in need.items()}


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
