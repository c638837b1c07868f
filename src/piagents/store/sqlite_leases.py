"""Who holds each session in the SQLite store (its lease), what it is doing there
(its recorded state), and the registry of holders whose heartbeats keep their
leases alive (timed by this machine's clock: a SQLite store has one machine)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence

from piagents.store import lease
from piagents.store.base import (
    LeaseHolder,
    LeaseLost,
    Registration,
    SessionInUse,
    SessionNotFound,
    WaitingRoot,
    WorkerRecord,
)
from piagents.store.sqlite_connection import Connection
from piagents.store.sqlite_search import chunks

# A session's lease, with its holder's heartbeat (NULL: none recorded).
HOLDER = (
    "s.lease_pid, s.lease_host, s.lease_token, s.lease_started, h.heartbeat "
    "FROM sessions s LEFT JOIN holders h ON h.token = s.lease_token"
)
NO_HOLDERS = "s.lease_pid, s.lease_host, s.lease_token, s.lease_started, NULL FROM sessions s"


class LeaseTable:
    """The lease and state columns of `sessions`, and the `holders` table."""

    def __init__(self, conn: Connection, lapse: float = lease.LAPSE_S) -> None:
        self.conn = conn
        self.lapse = lapse
        # A store opened read-only on a layout from before heartbeats has no `holders`.
        self._holder = HOLDER if self._has_holders() else NO_HOLDERS
        self._fence: str | None = None  # the registered holder: whose writes these are
        self._held: set[str] = set()  # sessions it took through this store
        # (other connections' commits, this one's undone writes) when every session in
        # `_held` was last seen with the holder's token: until either changes, no fence
        # can fail, and none is read again.
        self._all_held_at: tuple[int, int] | None = None

    def _has_holders(self) -> bool:
        return bool(
            self.conn.fetch("SELECT 1 FROM sqlite_master WHERE type='table' AND name='holders'", ())
        )

    def _lease(self, row: Sequence[object], now: float) -> tuple[LeaseHolder, bool]:
        holder = LeaseHolder(row[0], row[1], row[2], row[3] or "")  # type: ignore[arg-type]
        beat = row[4]
        fresh = None if beat is None else now - float(beat) < self.lapse  # type: ignore[arg-type]
        return holder, lease.is_alive(holder, fresh)

    # ---- the registry of holders --------------------------------------------------

    def register(self, registration: Registration) -> None:
        self._all_held_at = None  # its leases change: see them again
        self._fence = registration.holder.token  # even if this write fails: it is retried
        now = time.time()
        with self.conn.tx() as db:
            self._upsert(db, registration, now)
            # Holders long gone, with no lease left, leave the registry.
            db.execute(
                "DELETE FROM holders WHERE heartbeat < ? AND NOT EXISTS "
                "(SELECT 1 FROM sessions WHERE lease_token = holders.token)",
                (now - lease.FORGOTTEN_S,),
            )

    @staticmethod
    def _upsert(db: sqlite3.Connection, r: Registration, now: float, *, load: bool = True) -> None:
        """The holder's row, its heartbeat `now` (and its load, unless `load` is False)."""
        h = r.holder
        db.execute(
            "INSERT INTO holders (token, host, pid, started, kind, capacity, load, heartbeat, "
            "opened) VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT (token) DO UPDATE SET "
            + (
                "heartbeat = excluded.heartbeat, load = excluded.load"
                if load
                else "heartbeat = excluded.heartbeat"
            ),
            (h.token, h.host, h.pid, h.started, r.kind, r.capacity, r.load, now, now),
        )

    def renew(self, registration: Registration) -> frozenset[str]:
        with self.conn.tx() as db:
            self._upsert(db, registration, time.time())
            rows = db.execute(
                "SELECT id FROM sessions WHERE lease_token = ?", (registration.holder.token,)
            ).fetchall()
        return frozenset(r[0] for r in rows)

    def unregister(self, token: str) -> None:
        self._all_held_at = None  # its leases change: see them again
        with self.conn.tx() as db:
            # A lease it still names (its release failed) has lapsed from now on.
            db.execute("UPDATE holders SET heartbeat = 0 WHERE token = ?", (token,))
            db.execute(
                "DELETE FROM holders WHERE token = ?1 AND NOT EXISTS "
                "(SELECT 1 FROM sessions WHERE lease_token = ?1)",
                (token,),
            )

    def workers(self) -> list[WorkerRecord]:
        if self._holder is NO_HOLDERS:
            return []
        rows = self.conn.fetch(
            "SELECT token, host, pid, started, kind, capacity, load, heartbeat, opened "
            "FROM holders ORDER BY opened DESC",
            (),
        )
        now = time.time()
        out = []
        for token, host, pid, started, kind, capacity, load, beat, opened in rows:
            age = max(0.0, now - beat)
            alive = lease.is_alive(LeaseHolder(pid, host, token, started), age < self.lapse)
            out.append(WorkerRecord(token, host, pid, kind, capacity, load, age, alive, opened))
        return out

    def waiting_roots(self, limit: int) -> list[WaitingRoot]:
        if self._holder is NO_HOLDERS:
            return []
        since = time.time() - self.lapse
        # With min(), SQLite gives the other bare columns of the row holding the minimum.
        rows = self.conn.fetch(
            "SELECT i.root_id, i.id, r.lease_token, min(i.seq) FROM inputs i "
            "JOIN sessions r ON r.id = i.root_id JOIN sessions t ON t.id = i.recipient_id "
            "LEFT JOIN holders rh ON rh.token = r.lease_token "
            "LEFT JOIN holders th ON th.token = t.lease_token "
            "WHERE i.status = 'outstanding' AND i.kind <> 'control' AND r.owner_id IS NULL "
            "AND (r.lease_token IS NULL OR rh.heartbeat IS NULL OR rh.heartbeat <= ?) "
            "AND (t.id = r.id OR t.lease_token IS NULL OR th.heartbeat IS NULL "
            "OR th.heartbeat <= ?) GROUP BY i.root_id ORDER BY min(i.seq) LIMIT ?",
            (since, since, limit),
        )
        return [WaitingRoot(root, first, lapsed) for root, first, lapsed, _ in rows]

    # ---- leases -------------------------------------------------------------------

    def acquire(self, session_id: str, holder: LeaseHolder) -> None:
        self._all_held_at = None  # its leases change: see them again
        with self.conn.tx() as db:
            now = time.time()
            row = db.execute(f"SELECT {self._holder} WHERE s.id = ?", (session_id,)).fetchone()
            if row is None:
                raise SessionNotFound(f"No session {session_id}")
            if row[0] is not None:
                current, alive = self._lease(row, now)
                if current.token != holder.token and alive:
                    raise SessionInUse(session_id, current)
            # Taking a lease is a sign of life: the holder's heartbeat is renewed with it.
            self._upsert(db, Registration(holder), now, load=False)
            db.execute(
                "UPDATE sessions SET lease_pid=?, lease_host=?, lease_token=?, lease_started=? "
                "WHERE id = ?",
                (holder.pid, holder.host, holder.token, holder.started, session_id),
            )
        if holder.token == self._fence:
            self._held.add(session_id)

    def release(self, session_id: str, holder: LeaseHolder) -> None:
        self._all_held_at = None  # its leases change: see them again
        with self.conn.tx() as db:
            db.execute(
                "UPDATE sessions SET lease_pid=NULL, lease_host=NULL, lease_token=NULL, "
                "lease_started=NULL WHERE id = ? AND lease_token = ?",
                (session_id, holder.token),
            )
        if holder.token == self._fence:
            self._held.discard(session_id)

    def holder(self, session_id: str) -> LeaseHolder | None:
        row = self.conn.read(
            lambda db: db.execute(f"SELECT {self._holder} WHERE s.id = ?", (session_id,)).fetchone()
        )
        if row is None or row[0] is None:
            return None
        holder, alive = self._lease(row, time.time())
        return holder if alive else None

    def _all_held(self, db: sqlite3.Connection) -> bool:
        """Inside a write: whether the holder still has every lease it took (then no
        fence can fail). Read again only once another connection committed or this one
        undid a write; a lease can change hands only by one of those, or through this
        table, which forgets the answer."""
        seen = (self.conn.outside_version(), self.conn.rolled_back)
        if seen == self._all_held_at:
            return True
        held = sorted(self._held)
        row = db.execute(
            f"SELECT 1 FROM sessions WHERE id IN ({','.join('?' * len(held))}) "
            "AND lease_token IS NOT ? LIMIT 1",
            (*held, self._fence),
        ).fetchone()
        if row is not None:
            return False  # one was taken over: each write asks for its own tree
        self._all_held_at = seen
        return True

    def fence(self, db: sqlite3.Connection, session_id: str) -> None:
        """Inside a write to `session_id`: refuse it (LeaseLost) when the session, or its
        tree's root, is one this store's holder took and another holder now has."""
        if self._fence is None or not self._held or self._all_held(db):
            return
        held = sorted(self._held)
        marks = ",".join("?" * len(held))
        row = db.execute(
            "SELECT f.id FROM sessions s JOIN sessions f ON f.id = s.id OR f.id = s.root_id "
            f"WHERE s.id = ? AND f.id IN ({marks}) AND f.lease_token IS NOT ? LIMIT 1",
            (session_id, *held, self._fence),
        ).fetchone()
        if row is not None:
            raise LeaseLost(str(self.conn.path), row[0])

    def fence_inputs(self, db: sqlite3.Connection, input_ids: Sequence[str]) -> None:
        """Inside a write ending these inputs: refuse it (LeaseLost) when the tree of one
        of them (its root, or its recipient's own lease) is one this store's holder took
        and another holder now has: their ends are that holder's to record."""
        if self._fence is None or not self._held or self._all_held(db):
            return
        held = sorted(self._held)
        ids = list(input_ids)
        row = db.execute(
            "SELECT f.id FROM inputs i JOIN sessions f ON f.id = i.root_id OR f.id = "
            f"i.recipient_id WHERE i.id IN ({','.join('?' * len(ids))}) AND i.status = "
            f"'outstanding' AND f.id IN ({','.join('?' * len(held))}) AND f.lease_token IS NOT ? "
            "LIMIT 1",
            (*ids, *held, self._fence),
        ).fetchone()
        if row is not None:
            raise LeaseLost(str(self.conn.path), row[0])

    def set_state(self, session_id: str, state: str) -> None:
        with self.conn.tx() as db:
            self.fence(db, session_id)
            db.execute("UPDATE sessions SET state = ? WHERE id = ?", (state, session_id))

    def states(self, session_ids: Sequence[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        now = time.time()
        for chunk in chunks(list(session_ids), 500):
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT s.id, s.state, {self._holder} WHERE s.id IN ({marks})"
            for row in self.conn.fetch(sql, chunk):
                held = row[2] is not None and self._lease(row[2:], now)[1]
                out[row[0]] = row[1] if held else "offline"
        return out
