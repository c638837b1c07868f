"""Who holds each session in the PostgreSQL store (its lease) and what it is doing
there (its recorded state): the SQLite store's rules, the session's row locked
while a lease is taken."""

from __future__ import annotations

from collections.abc import Sequence

from piagents.store import lease
from piagents.store.base import LeaseHolder, SessionInUse, SessionNotFound
from piagents.store.postgres_connection import Connection, Db

HOLDER = "lease_pid, lease_host, lease_token, lease_started"


class LeaseTable:
    """The lease and state columns of `sessions`."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def acquire(self, session_id: str, holder: LeaseHolder) -> None:
        def acquire(db: Db) -> None:
            row = db.execute(
                f"SELECT {HOLDER} FROM sessions WHERE id = %s FOR UPDATE", (session_id,)
            ).fetchone()
            if row is None:
                raise SessionNotFound(f"No session {session_id}")
            if row[0] is not None:
                current = LeaseHolder(row[0], row[1], row[2], row[3] or "")
                if current.token != holder.token and lease.is_alive(current):
                    raise SessionInUse(session_id, current)
            db.execute(
                "UPDATE sessions SET lease_pid = %s, lease_host = %s, lease_token = %s, "
                "lease_started = %s WHERE id = %s",
                (holder.pid, holder.host, holder.token, holder.started, session_id),
            )

        # Done again by the same holder, it finds its own lease: idempotent.
        self.conn.write(acquire, idempotent=True)

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

    def holder(self, session_id: str) -> LeaseHolder | None:
        rows = self.conn.fetch(f"SELECT {HOLDER} FROM sessions WHERE id = %s", (session_id,))
        if not rows or rows[0][0] is None:
            return None
        row = rows[0]
        holder = LeaseHolder(row[0], row[1], row[2], row[3] or "")
        return holder if lease.is_alive(holder) else None

    def set_state(self, session_id: str, state: str) -> None:
        self.conn.write(
            lambda db: db.execute(
                "UPDATE sessions SET state = %s WHERE id = %s", (state, session_id)
            ),
            idempotent=True,
            single=True,
        )

    def states(self, session_ids: Sequence[str]) -> dict[str, str]:
        rows = self.conn.fetch(
            f"SELECT id, state, {HOLDER} FROM sessions WHERE id = ANY(%s)", (list(session_ids),)
        )
        out: dict[str, str] = {}
        for sid, state, pid, host, token, started in rows:
            held = pid is not None and lease.is_alive(LeaseHolder(pid, host, token, started or ""))
            out[sid] = state if held else "offline"
        return out
