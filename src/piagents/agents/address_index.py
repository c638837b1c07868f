"""What an address can name in a set of records, found without a scan of the set.

An address is an ID, a name or an ID prefix (`addressing.resolve`). Resolving one
by looking at every record an Agent sees made each `send`, `wait` or `abort` with a
target cost as much as the tree is large; this index keeps the records' names and
their IDs in order as they are added, so the records an address could name are found
by a lookup (a name) or a bisection (a prefix), and only those are checked for
visibility.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterable

from piagents.store.records import SessionRecord

_ABSENT = object()


class AddressIndex:
    """The IDs of a set of records by name, and all of them in order."""

    def __init__(self, records: Iterable[SessionRecord] = ()) -> None:
        self._by_name: dict[str, list[str]] = {}
        self._ids: list[str] = []  # sorted: the IDs a prefix names are a run of it
        self._name_of: dict[str, str | None] = {}
        for record in records:
            self.add(record)

    def add(self, record: SessionRecord) -> None:
        """A record added, or changed (renamed)."""
        old = self._name_of.get(record.id, _ABSENT)
        if old is _ABSENT:
            insort(self._ids, record.id)
        elif old == record.name:
            return
        elif isinstance(old, str):
            same = self._by_name[old]
            same.remove(record.id)
            if not same:
                del self._by_name[old]
        self._name_of[record.id] = record.name
        if record.name is not None:
            self._by_name.setdefault(record.name, []).append(record.id)

    def named(self, name: str) -> list[str]:
        """The IDs of the records called `name`."""
        return list(self._by_name.get(name, ()))

    def prefixed(self, prefix: str) -> list[str]:
        """The IDs that start with `prefix` (every ID for an empty one)."""
        ids = self._ids
        out: list[str] = []
        i = bisect_left(ids, prefix)
        while i < len(ids) and ids[i].startswith(prefix):
            out.append(ids[i])
            i += 1
        return out
