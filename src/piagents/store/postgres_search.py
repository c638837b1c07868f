"""What `list` reads from the PostgreSQL store: searchable documents matched by
query (ILIKE, as the SQLite store's LIKE), and when each session last got a request."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from piagents.store.postgres_connection import Connection
from piagents.store.records import SearchHit

SCOPE = "(s.root_id = %(root)s OR s.id = %(root)s OR (%(roots)s AND s.owner_id IS NULL))"
META_FIELDS = ("s.id", "s.name", "s.cwd")


class SearchIndex:
    """The `search_docs` rows and the sessions' latest requests."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def search(
        self, root_id: str, include_roots: bool, groups: Sequence[Sequence[str]]
    ) -> list[SearchHit]:
        """Latest match per session of a tree (and of all roots): every term of some
        group found, case-insensitively, in one document together with the session's
        ID, name and cwd, or in those alone."""
        if not groups:
            return []
        args: dict[str, Any] = {"root": root_id, "roots": include_roots}
        doc_groups: list[str] = []
        meta_groups: list[str] = []
        for g in groups:
            doc_terms: list[str] = []
            meta_terms: list[str] = []
            for t in g:
                name = f"p{len(args)}"
                args[name] = _like(t)
                meta = " OR ".join(f"{f} ILIKE %({name})s" for f in META_FIELDS)
                meta_terms.append(f"({meta})")
                doc_terms.append(f"(d.text ILIKE %({name})s OR {meta})")
            doc_groups.append("(" + " AND ".join(doc_terms) + ")")
            meta_groups.append("(" + " AND ".join(meta_terms) + ")")
        rows = self.conn.fetch(
            # The latest matching document of each session.
            f"SELECT DISTINCT ON (d.session_id) d.session_id, d.text, d.ts FROM search_docs d "
            f"JOIN sessions s ON s.id = d.session_id "
            f"WHERE {SCOPE} AND ({' OR '.join(doc_groups)}) ORDER BY d.session_id, d.ts DESC",
            args,
        ) + self.conn.fetch(
            f"SELECT s.id, NULL, coalesce(s.latest_request_at, s.created) FROM sessions s "
            f"WHERE {SCOPE} AND ({' OR '.join(meta_groups)})",
            args,
        )
        hits: dict[str, SearchHit] = {}
        for sid, found, ts in rows:
            current = hits.get(sid)
            if (
                current is None
                or ts > current.timestamp
                or (ts == current.timestamp and found is not None)
            ):
                hits[sid] = SearchHit(sid, found, int(ts))
        return list(hits.values())

    def request_times(self, root_id: str, include_roots: bool) -> dict[str, int]:
        """When each session of a tree (and of all roots) last got a request, or was created."""
        rows = self.conn.fetch(
            f"SELECT s.id, coalesce(s.latest_request_at, s.created) FROM sessions s WHERE {SCOPE}",
            {"root": root_id, "roots": include_roots},
        )
        return {sid: int(ts) for sid, ts in rows}

    def latest_requests(self, session_ids: Sequence[str]) -> dict[str, tuple[int, str]]:
        rows = self.conn.fetch(
            "SELECT id, latest_request_at, latest_request FROM sessions "
            "WHERE id = ANY(%s) AND latest_request IS NOT NULL",
            (list(session_ids),),
        )
        return {sid: (int(ts), t) for sid, ts, t in rows}


def _like(term: str) -> str:
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"
