"""Which Program an Agent belongs to, and so which Agents it sees (pure).

A Program's Agent is an owned session whose owner is the Program's caller (the same
root, so it counts toward that tree's slots and `maxOutstanding`), marked with
`meta["program"] = <the Program's ID>` and persisted so with the session: a reopened
runtime knows it as well. Agents spawned under it carry no mark; each belongs to the
nearest marked Agent above it. Every other Agent belongs to no Program (None).

Agents see only Agents of their own group: the Program's Agents and those under them
see one another; the rest of the tree (and other roots) sees none of them.
"""

from __future__ import annotations

from collections.abc import Mapping

from piagents.store.records import SessionRecord

PROGRAM_META = "program"


def program_mark(record: SessionRecord) -> str | None:
    """The Program this session was made for, when it is one of a Program's own Agents."""
    mark = record.meta.get(PROGRAM_META)
    return mark if isinstance(mark, str) and mark else None


def program_of(record: SessionRecord, owned: Mapping[str, SessionRecord]) -> str | None:
    """The Program `record` belongs to: its own mark or its nearest marked owner's, looked
    up among the tree's owned records `owned`; None for an Agent of no Program."""
    seen = record
    for _ in range(len(owned) + 1):  # ownership has no cycles; bounded all the same
        mark = program_mark(seen)
        if mark is not None:
            return mark
        owner = owned.get(seen.owner_id) if seen.owner_id is not None else None
        if owner is None:
            return None
        seen = owner
    return None


def marked(record: SessionRecord, program_id: str) -> dict[str, object]:
    """The meta of `record` with the mark of Program `program_id` added."""
    return {**record.meta, PROGRAM_META: program_id}
