"""Short IDs and addresses (pure): how a reader names and finds visible Agents."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

MIN_SHORT = 8


class ShortIds(Mapping[str, str]):
    """The shortest prefix of each ID, at least 8 characters, that no other ID has.

    Made when asked for: a reader is shown a page of a tree of thousands, so only
    the IDs it shows are worked out (against their neighbours in sorted order,
    where the longest shared prefix is).
    """

    def __init__(self, ids: Iterable[str]) -> None:
        self._sorted = sorted(set(ids))
        self._made: dict[str, str] = {}

    def __getitem__(self, agent_id: str) -> str:
        short = self._made.get(agent_id)
        if short is not None:
            return short
        everyone = self._sorted
        i = bisect_left(everyone, agent_id)
        if i == len(everyone) or everyone[i] != agent_id:
            raise KeyError(agent_id)
        need = MIN_SHORT
        head = agent_id[:MIN_SHORT]
        for j in (i - 1, i + 1):
            # Only a neighbour that shares the first 8 characters asks for more.
            if 0 <= j < len(everyone) and everyone[j][:MIN_SHORT] == head:
                need = max(need, _common_prefix(agent_id, everyone[j]) + 1)
        short = self._made[agent_id] = agent_id[:need]
        return short

    def add(self, agent_id: str) -> None:
        """Count one more ID: only its new neighbours' short IDs can change."""
        everyone = self._sorted
        i = bisect_left(everyone, agent_id)
        if i < len(everyone) and everyone[i] == agent_id:
            return
        everyone.insert(i, agent_id)
        for j in (i - 1, i + 1):
            if 0 <= j < len(everyone):
                self._made.pop(everyone[j], None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._sorted)

    def __len__(self) -> int:
        return len(self._sorted)


def short_ids(ids: Sequence[str], reader_id: str | None = None) -> dict[str, str]:
    """Every short ID of `ids` and the reader's own ID (which counts too)."""
    return dict(ShortIds([*ids, *([reader_id] if reader_id else [])]))


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
