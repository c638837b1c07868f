"""Which store a home uses: its SQLite file by default, or the PostgreSQL database a
`postgresql://` URL names (the `store` setting, `--store` on the command line).

Nothing of PostgreSQL (nor psycopg) is imported unless such a URL is given.
"""

from __future__ import annotations

from pathlib import Path

from piagents.store import lease
from piagents.store.base import Store, StoreUnavailable
from piagents.store.url import location_of, url_problem


def open_store(
    home: Path,
    url: str | None = None,
    *,
    read_only: bool = False,
    lease_lapse: float = lease.LAPSE_S,
) -> Store:
    """The store: the PostgreSQL database at `url`, or else `<home>/store.db`; a lease
    in it whose holder's heartbeat is older than `lease_lapse` seconds counts as gone."""
    if url is None:
        from piagents.store.sqlite import SQLiteStore

        return SQLiteStore(home / "store.db", read_only=read_only, lease_lapse=lease_lapse)
    problem = url_problem(url)
    if problem is not None:
        raise StoreUnavailable(f"store {location_of(url)!r}: {problem}.")
    try:
        from piagents.store.postgres import PostgresStore
    except ImportError as exc:  # psycopg is an optional dependency
        raise StoreUnavailable(
            f"the PostgreSQL store needs psycopg ({exc}): install pi-agents[postgres]."
        ) from exc
    return PostgresStore(url, read_only=read_only, lease_lapse=lease_lapse)
