"""The unread results of a set of Agents, remembered between the pages of a wait.

An owner that waits for 1,000 Agents reads their results a page at a time (each
`wait` returns what fits Pi's output limit and leaves the rest unread), and every
page asked the store for all of the unread results again: 1,000 index lookups and
records per page. `UnreadResults` keeps the last answer with the connection's stamp
(`Connection.stamp`: it changes with every commit, this connection's or another's)
and gives it again while the stamp is the same. Marking results read through it is
the one change it follows itself: when the stamp moved by exactly that one commit,
what it remembered, less the results now read, is still the store's answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from piagents.store.records import InputRecord
from piagents.store.sqlite_connection import Connection

Query = Callable[[Sequence[str]], list[InputRecord]]


class UnreadResults:
    """The ended, unread results of given recipients, as `query` reads them."""

    def __init__(self, conn: Connection, query: Query, mark_read: Callable[[Sequence[str]], None]):
        self._conn = conn
        self._query = query
        self._mark_read = mark_read
        # (stamp, recipients, their unread results): the last answer and when it held.
        self._known: tuple[tuple[int, int], tuple[str, ...], list[InputRecord]] | None = None

    def of(self, recipient_ids: Sequence[str]) -> list[InputRecord]:
        key = tuple(recipient_ids)
        stamp = self._conn.stamp()
        known = self._known
        if known is not None and known[0] == stamp and known[1] == key:
            return list(known[2])
        self._known = None
        found = self._query(key)
        if self._conn.stamp() == stamp:  # nothing committed while it was read
            self._known = (stamp, key, found)
        return list(found)

    def mark_read(self, ids: Sequence[str]) -> None:
        if not ids:
            return
        before = self._conn.stamp()
        known, self._known = self._known, None
        self._mark_read(ids)
        if known is None or known[0] != before:
            return
        version, commits = before
        if self._conn.stamp() == (version, commits + 1):  # this commit alone
            read = set(ids)
            self._known = (
                (version, commits + 1),
                known[1],
                [r for r in known[2] if r.id not in read],
            )
