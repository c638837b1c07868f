"""What `list` reads from the SQLite store: searchable documents matched by query,
and when each session last got a request."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from piagents.store.records import SearchHit
from piagents.store.sqlite_connection import Connection

_SCOPE = "(s.root_id = ? OR s.id = ? OR (? AND s.owner_id IS NULL))"


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
        # Terms hold no spaces, so a term found in "ID name cwd text" is found in one
        # of those fields: one LIKE per field, no string building per row.
        fields = ("s.id", "s.name", "s.cwd")
        meta_term = "(" + " OR ".join(f"{f} LIKE ?1 ESCAPE '\\'" for f in fields) + ")"
        doc_term = "(d.text LIKE ?1 ESCAPE '\\' OR " + meta_term[1:]

        def condition(term_sql: str) -> tuple[str, list[str]]:
            parts: list[str] = []
            args: list[str] = []
            for g in groups:
                ands = []
                for t in g:
                    ands.append(term_sql.replace("?1", f"?{len(args) + 4}"))
                    args.append(_like(t))
                parts.append("(" + " AND ".join(ands) + ")")
            return " OR ".join(parts), args

        doc_cond, patterns = condition(doc_term)
        meta_cond, _ = condition(meta_term)
        scope = (root_id, root_id, int(include_roots))
        scope_sql = "(s.root_id = ?1 OR s.id = ?2 OR (?3 AND s.owner_id IS NULL))"
        rows = self.conn.fetch(
            f"SELECT d.session_id, d.text, max(d.ts) FROM search_docs d "
            f"JOIN sessions s ON s.id = d.session_id "
            f"WHERE {scope_sql} AND ({doc_cond}) GROUP BY d.session_id",
            (*scope, *patterns),
        ) + self.conn.fetch(
            f"SELECT s.id, NULL, coalesce(s.latest_request_at, s.created) FROM sessions s "
            f"WHERE {scope_sql} AND ({meta_cond})",
            (*scope, *patterns),
        )
        hits: dict[str, SearchHit] = {}
        for sid, text, ts in rows:
            current = hits.get(sid)
            if (
                current is None
                or ts > current.timestamp
                or (ts == current.timestamp and text is not None)
            ):
                hits[sid] = SearchHit(sid, text, int(ts))
        return list(hits.values())

    def request_times(self, root_id: str, include_roots: bool) -> dict[str, int]:
        """When each session of a tree (and of all roots) last got a request, or was created."""
        rows = self.conn.fetch(
            f"SELECT s.id, coalesce(s.latest_request_at, s.created) FROM sessions s WHERE {_SCOPE}",
            (root_id, root_id, int(include_roots)),
        )
        return {sid: int(ts) for sid, ts in rows}

    def latest_requests(self, session_ids: Sequence[str]) -> dict[str, tuple[int, str]]:
        out: dict[str, tuple[int, str]] = {}
        for chunk in chunks(list(session_ids), 500):
            marks = ",".join("?" * len(chunk))
            sql = (
                f"SELECT id, latest_request_at, latest_request FROM sessions "
                f"WHERE id IN ({marks}) AND latest_request IS NOT NULL"
            )
            rows = self.conn.fetch(sql, chunk)
            for sid, ts, text in rows:
                out[sid] = (int(ts), text)
        return out


def _like(term: str) -> str:
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def chunks(items: list[str], size: int) -> Iterator[list[str]]:
    """`items` in lists of at most `size` (SQLite limits the parameters of a statement)."""
    for i in range(0, len(items), size):
        yield items[i : i + size]
