"""Who holds each session in the PostgreSQL store (its lease), what it is doing
there (its recorded state), and the registry of holders whose heartbeats keep
their leases alive: the SQLite store's rules, the session's row locked while a
lease is taken, and every heartbeat timed by the server's clock (so the clocks of
the machines that share the database do not matter)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

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
from piagents.store.postgres_connection import Connection, Db
from piagents.store.postgres_values import TextArray

# A session's lease, and whether its holder's heartbeat is within the lapse (NULL:
# none recorded).
HOLDER = (
    "s.lease_pid, s.lease_host, s.lease_token, s.lease_started, "
    "h.heartbeat > clock_timestamp() - make_interval(secs => %(lapse)s) "
    "FROM sessions s LEFT JOIN holders h ON h.token = s.lease_token"
)

# Roots whose tree has open inputs that no live holder takes: neither the root's
# holder nor (a managed agent in a worker process) the recipient's own.
WAITING = (
    "SELECT i.root_id, (array_agg(i.id ORDER BY i.seq))[1], r.lease_token FROM inputs i "
    "JOIN sessions r ON r.id = i.root_id JOIN sessions t ON t.id = i.recipient_id "
    "LEFT JOIN holders rh ON rh.token = r.lease_token "
    "LEFT JOIN holders th ON th.token = t.lease_token "
    "WHERE i.status = 'outstanding' AND i.kind <> 'control' AND r.owner_id IS NULL "
    "AND (r.lease_token IS NULL OR rh.heartbeat IS NULL OR rh.heartbeat <= %(since)s) "
    "AND (t.id = r.id OR t.lease_token IS NULL OR th.heartbeat IS NULL "
    "OR th.heartbeat <= %(since)s) "
    "GROUP BY i.root_id, r.lease_token ORDER BY min(i.seq) LIMIT %(limit)s"
)

UPSERT = (
    "INSERT INTO holders (token, host, pid, started, kind, capacity, load) "
    "VALUES (%(token)s, %(host)s, %(pid)s, %(started)s, %(kind)s, %(capacity)s, %(load)s) "
    "ON CONFLICT (token) DO UPDATE SET heartbeat = clock_timestamp()"
)


def _args(r: Registration) -> dict[str, Any]:
    h = r.holder
    return {
        "token": h.token,
        "host": h.host,
        "pid": h.pid,
        "started": h.started,
        "kind": r.kind,
        "capacity": r.capacity,
        "load": r.load,
    }


class LeaseTable:
    """The lease and state columns of `sessions`, and the `holders` table."""

    def __init__(self, conn: Connection, lapse: float = lease.LAPSE_S) -> None:
        self.conn = conn
        self.lapse = lapse
        self._fence: str | None = None  # the registered holder: whose writes these are
        # Sessions it took through this store; replaced, never changed in place, since
        # the store's write thread reads it while the loop's thread takes leases.
        self._held: frozenset[str] = frozenset()
        self._held_array = TextArray()  # the same, as a statement's argument

    @staticmethod
    def _lease(row: Sequence[Any]) -> tuple[LeaseHolder, bool]:
        holder = LeaseHolder(row[0], row[1], row[2], row[3] or "")
        return holder, lease.is_alive(holder, row[4])

    # ---- the registry of holders --------------------------------------------------

    def register(self, registration: Registration) -> None:
        self._fence = registration.holder.token  # even if this write fails: it is retried

        def register(db: Db) -> None:
            db.execute(UPSERT + ", load = excluded.load", _args(registration))
            # Holders long gone, with no lease left, leave the registry.
            db.execute(
                "DELETE FROM holders WHERE heartbeat < clock_timestamp() - "
                "make_interval(secs => %s) AND NOT EXISTS "
                "(SELECT 1 FROM sessions WHERE lease_token = holders.token)",
                (lease.FORGOTTEN_S,),
            )

        self.conn.write(register, idempotent=True)

    def renew(self, registration: Registration) -> frozenset[str]:
        # One statement: the heartbeat (the row made again if it went) and the leases.
        sql = (
            f"WITH beat AS ({UPSERT}, load = excluded.load) "
            "SELECT id FROM sessions WHERE lease_token = %(token)s"
        )
        rows = self.conn.write(
            lambda db: db.execute(sql, _args(registration)).fetchall(),
            idempotent=True,
            single=True,
        )
        return frozenset(r[0] for r in rows)

    def unregister(self, token: str) -> None:
        def unregister(db: Db) -> None:
            # A lease it still names (its release failed) has lapsed from now on.
            db.execute("UPDATE holders SET heartbeat = 'epoch' WHERE token = %s", (token,))
            db.execute(
                "DELETE FROM holders WHERE token = %(t)s AND NOT EXISTS "
                "(SELECT 1 FROM sessions WHERE lease_token = %(t)s)",
                {"t": token},
            )

        self.conn.write(unregister, idempotent=True)

    def workers(self) -> list[WorkerRecord]:
        rows = self.conn.fetch(
            "SELECT token, host, pid, started, kind, capacity, load, "
            "extract(epoch FROM clock_timestamp() - heartbeat)::float8, "
            "extract(epoch FROM opened)::float8 FROM holders ORDER BY opened DESC"
        )
        out = []
        for token, host, pid, started, kind, capacity, load, age, opened in rows:
            age = max(0.0, age)
            alive = lease.is_alive(LeaseHolder(pid, host, token, started), age < self.lapse)
            out.append(WorkerRecord(token, host, pid, kind, capacity, load, age, alive, opened))
        return out

    def waiting_roots(self, limit: int) -> list[WaitingRoot]:
        since = "clock_timestamp() - make_interval(secs => %(lapse)s)"
        rows = self.conn.fetch(
            WAITING.replace("%(since)s", since), {"lapse": self.lapse, "limit": limit}
        )
        return [WaitingRoot(root, first, lapsed) for root, first, lapsed in rows]

    # ---- leases -------------------------------------------------------------------

    def acquire(self, session_id: str, holder: LeaseHolder) -> None:
        def acquire(db: Db) -> None:
            row = db.execute(
                f"SELECT {HOLDER} WHERE s.id = %(id)s FOR UPDATE OF s",
                {"id": session_id, "lapse": self.lapse},
            ).fetchone()
            if row is None:
                raise SessionNotFound(f"No session {session_id}")
            if row[0] is not None:
                current, alive = self._lease(row)
                if current.token != holder.token and alive:
                    raise SessionInUse(session_id, current)
            # Taking a lease is a sign of life: the holder's heartbeat is renewed with it.
            db.execute(UPSERT, _args(Registration(holder)))
            db.execute(
                "UPDATE sessions SET lease_pid = %s, lease_host = %s, lease_token = %s, "
                "lease_started = %s WHERE id = %s",
                (holder.pid, holder.host, holder.token, holder.started, session_id),
            )

        # Done again by the same holder, it finds its own lease: idempotent.
        self.conn.write(acquire, idempotent=True)
        if holder.token == self._fence:
            self._hold(self._held | {session_id})

    def _hold(self, held: frozenset[str]) -> None:
        self._held, self._held_array = held, TextArray(sorted(held))

    def release(self, session_id: str, holder: LeaseHolder) -> None:
        self.conn.write(
            lambda db: db.execute(
                "UPDATE sessions SET lease_pid = NULL, lease_host = NULL, lease_token = NULL, "
                "lease_started = NULL WHERE id = %s AND lease_token = %s",
                (session_id, holder.token),
            ),
            idempotent=True,
            single=True,
        )
        if holder.token == self._fence:
            self._hold(self._held - {session_id})

    def holder(self, session_id: str) -> LeaseHolder | None:
        rows = self.conn.fetch(
            f"SELECT {HOLDER} WHERE s.id = %(id)s", {"id": session_id, "lapse": self.lapse}
        )
        if not rows or rows[0][0] is None:
            return None
        holder, alive = self._lease(rows[0])
        return holder if alive else None

    # ---- fencing: no write by a holder whose lease was taken over -------------------

    def fence(self) -> tuple[str, str, dict[str, Any]]:
        """For a write to the session `%(id)s` (an UPDATE of its row): a CTE (`f`) locking
        its root's row when this store's holder took the root's lease, a condition for
        the UPDATE that holds while the leases it depends on that this holder took (the
        session's own, its root's) are still its, and their arguments; all empty when
        this store's holder took none. The session's own lease is checked on the row the
        UPDATE locks (so again after a takeover it waited for), its root's on the row
        `f` locks for share."""
        if self._fence is None or not self._held:
            return "", "", {}
        cte = (
            "f AS (SELECT lease_token FROM sessions WHERE id = ANY(%(held)s) AND "
            "id = (SELECT root_id FROM sessions WHERE id = %(id)s) FOR SHARE), "
        )
        condition = (
            " AND (sessions.id <> ALL(%(held)s) OR sessions.lease_token = %(fence)s)"
            " AND NOT EXISTS (SELECT 1 FROM f WHERE lease_token IS DISTINCT FROM %(fence)s)"
        )
        return cte, condition, {"held": self._held_array, "fence": self._fence}

    def check_lost(self, session_id: str) -> None:
        """After a write to `session_id` changed nothing: LeaseLost if the fence refused it."""
        if self._fence is None or not self._held:
            return
        rows = self.conn.fetch(
            "SELECT f.id FROM sessions s JOIN sessions f ON f.id IN (s.id, s.root_id) "
            "WHERE s.id = %s AND f.id = ANY(%s) AND f.lease_token IS DISTINCT FROM %s LIMIT 1",
            (session_id, self._held_array, self._fence),
        )
        if rows:
            raise LeaseLost(self.conn.location, rows[0][0])

    def input_fence(self) -> tuple[str, dict[str, Any]]:
        """For an UPDATE of `inputs` rows: a condition that holds while the trees of the
        rows (their root, or their recipient's own lease) that this store's holder took
        are still its, and its arguments; empty when it took none."""
        if self._fence is None or not self._held:
            return "", {}
        condition = (
            " AND NOT EXISTS (SELECT 1 FROM sessions f WHERE f.id = ANY(%(held)s) AND "
            "f.id IN (inputs.root_id, inputs.recipient_id) AND "
            "f.lease_token IS DISTINCT FROM %(fence)s)"
        )
        return condition, {"held": self._held_array, "fence": self._fence}

    def sender_fence(self) -> tuple[Sequence[str], str] | None:
        """For an input added by a session of this holder: the sessions it took and its
        token (`postgres_inputs.insert_input`), or None when it took none."""
        if self._fence is None or not self._held:
            return None
        return self._held_array, self._fence

    def check_lost_inputs(self, db: Db, input_ids: Sequence[str]) -> None:
        """After ending these inputs changed nothing: LeaseLost if the fence refused it."""
        condition, args = self.input_fence()
        if not condition:
            return
        rows = db.execute(
            "SELECT f.id FROM inputs i JOIN sessions f ON f.id IN (i.root_id, i.recipient_id) "
            "WHERE i.id = ANY(%(ids)s) AND i.status = 'outstanding' AND f.id = ANY(%(held)s) "
            "AND f.lease_token IS DISTINCT FROM %(fence)s LIMIT 1",
            {"ids": TextArray(input_ids), **args},
        ).fetchall()
        if rows:
            raise LeaseLost(self.conn.location, rows[0][0])

    def set_state(self, session_id: str, state: str) -> None:
        cte, condition, args = self.fence()
        sql = (
            f"{'WITH ' + cte[:-2] if cte else ''} UPDATE sessions SET state = %(state)s "
            f"WHERE id = %(id)s{condition} RETURNING 1"
        )
        rows = self.conn.write(
            lambda db: db.execute(sql, {"id": session_id, "state": state, **args}).fetchall(),
            idempotent=True,
            single=True,
        )
        if not rows:
            self.check_lost(session_id)

    def states(self, session_ids: Sequence[str]) -> dict[str, str]:
        rows = self.conn.fetch(
            f"SELECT s.id, s.state, {HOLDER} WHERE s.id = ANY(%(ids)s)",
            {"ids": list(session_ids), "lapse": self.lapse},
        )
        out: dict[str, str] = {}
        for row in rows:
            held = row[2] is not None and self._lease(row[2:])[1]
            out[row[0]] = row[1] if held else "offline"
        return out
