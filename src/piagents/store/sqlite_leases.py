"""Who holds each session in the SQLite store (its lease) and what it is doing
there (its recorded state)."""

from __future__ import annotations

from collections.abc import Sequence

from piagents.store import lease
from piagents.store.base import LeaseHolder, SessionInUse, SessionNotFound
from piagents.store.sqlite_connection import Connection
from piagents.store.sqlite_search import chunks


class LeaseTable:
    """The lease and state columns of `sessions`."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def acquire(self, session_id: str, holder: LeaseHolder) -> None:
        with self.conn.tx() as db:
            row = db.execute(
                "SELECT lease_pid, lease_host, lease_token, lease_started FROM sessions "
                "WHERE id = ?",
                (session_id,),
            ).fetchone()
            if row is None:
                raise SessionNotFound(f"No session {session_id}")
            if row[0] is not None:
                current = LeaseHolder(row[0], row[1], row[2], row[3] or "")
                if current.token != holder.token and lease.is_alive(current):
                    raise SessionInUse(session_id, current)
            db.execute(
                "UPDATE sessions SET lease_pid=?, lease_host=?, lease_token=?, lease_started=? "
                "WHERE id = ?",
                (holder.pid, holder.host, holder.token, holder.started, session_id),
            )

    def release(self, session_id: str, holder: LeaseHolder) -> None:
        with self.conn.tx() as db:
            db.execute(
                "UPDATE sessions SET lease_pid=NULL, lease_host=NULL, lease_token=NULL, "
                "lease_started=NULL WHERE id = ? AND lease_token = ?",
                (session_id, holder.token),
            )

    def holder(self, session_id: str) -> LeaseHolder | None:
        row = self.conn.read(
            lambda db: db.execute(
                "SELECT lease_pid, lease_host, lease_token, lease_started FROM sessions "
                "WHERE id = ?",
                (session_id,),
            ).fetchone()
        )
        if row is None or row[0] is None:
            return None
        holder = LeaseHolder(row[0], row[1], row[2], row[3] or "")
        return holder if lease.is_alive(holder) else None

    def set_state(self, session_id: str, state: str) -> None:
        with self.conn.tx() as db:
            db.execute("UPDATE sessions SET state = ? WHERE id = ?", (state, session_id))

    def states(self, session_ids: Sequence[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for chunk in chunks(list(session_ids), 500):
            marks = ",".join("?" * len(chunk))
            sql = (
                f"SELECT id, state, lease_pid, lease_host, lease_token, lease_started "
                f"FROM sessions WHERE id IN ({marks})"
            )
            rows = self.conn.fetch(sql, chunk)
            for sid, state, pid, host, token, started in rows:
                held = pid is not None and lease.is_alive(
                    LeaseHolder(pid, host, token, started or "")
                )
                out[sid] = state if held else "offline"
        return out
