"""What a placement is called and where DBOS keeps it (pure functions)."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from piagents.store.base import WaitingRoot

APP_NAME = "pi-agents"
QUEUE = "roots"  # placements nobody started at once, partitioned by root
# Recovery and dequeueing match the application version: every worker of a store must
# give the same one, whatever its build (DBOS's default is a hash of the code).
APPLICATION_VERSION = "pi-agents-placement-1"
SYSTEM_DATABASE_SUFFIX = "_dbos"


QUEUED = "queue"


def workflow_id(root: WaitingRoot, by: str) -> str:
    """A placement of `root` for one need (its earliest open input, and the holder it is
    taken from: a takeover after a worker died is a new need), started `by` a worker
    (its executor id) or left on the queue (`QUEUED`). DBOS runs each id once: a
    worker that hears of the same need twice, or a need left on the queue by every
    worker that saw it, is one placement; two workers that both start theirs meet at
    the root's lease, which one of them gets."""
    lapsed = root.lapsed or "free"
    return f"root:{root.root_id}:{root.first_input}:{lapsed}:{by}"


def system_database_url(store_url: str) -> str:
    """DBOS's own database, beside the store's on the same server: `<db>_dbos`.

    Not the store's database itself: the store refuses to lay itself out in a
    database that holds another program's tables (docs/dbos-notes.md, 1)."""
    parts = urlsplit(store_url)
    name = parts.path.lstrip("/") or "postgres"
    path = "/" + name + SYSTEM_DATABASE_SUFFIX
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, parts.fragment))
