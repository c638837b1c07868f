"""PostgreSQL's errors as the store's own: a typed StoreError naming the database
(its URL without the password), the cause and what to do, never a raw psycopg error."""

from __future__ import annotations

import psycopg

from piagents.store.base import (
    StoreBusy,
    StoreDamaged,
    StoreError,
    StoreFull,
    StoreIncompatible,
    StoreReadOnly,
    StoreUnavailable,
)

NOTHING_SAVED = "nothing of this change was saved"
CHOOSE_STORE = "choose another store with --store or the `store` setting"


def is_lost(db: psycopg.Connection[object] | None, exc: BaseException) -> bool:
    """Whether `exc` means the connection to the server is gone (and a new one may work)."""
    if db is not None and (db.broken or db.closed):
        return True
    state = getattr(exc, "sqlstate", None) or ""
    return isinstance(exc, psycopg.OperationalError) and (
        state.startswith("08") or state in ("57P01", "57P02", "57P03")
    )


def cannot_connect(location: str, exc: psycopg.Error) -> StoreError:
    """Why a connection to the store could not be made: server down, credentials, ..."""
    cause = " ".join(str(exc).split())
    lowered = cause.lower()
    if "password authentication failed" in lowered or "authentication failed" in lowered:
        return StoreUnavailable(
            f"{location}: the PostgreSQL server refused the credentials ({cause}). "
            f"Check the user and password in the store URL, or {CHOOSE_STORE}."
        )
    if "does not exist" in lowered and "database" in lowered:
        return StoreUnavailable(
            f"{location}: there is no such database on the PostgreSQL server ({cause}). "
            f"Create it (`createdb`), or {CHOOSE_STORE}."
        )
    if "permission denied" in lowered or "not permitted" in lowered:
        return StoreUnavailable(
            f"{location}: the PostgreSQL server refused the connection ({cause}). "
            f"Check the user's rights, or {CHOOSE_STORE}."
        )
    return StoreUnavailable(
        f"{location}: cannot reach the PostgreSQL server ({cause}). "
        f"Check that it is running and the URL is right, or {CHOOSE_STORE}."
    )


def lost(location: str, what: str) -> StoreUnavailable:
    return StoreUnavailable(f"{location}: the connection to the PostgreSQL server was lost {what}.")


def damaged(location: str, cause: str) -> StoreDamaged:
    return StoreDamaged(
        f"{location} is damaged ({cause}); it was left untouched. Restore a backup, "
        f"or {CHOOSE_STORE}."
    )


def translate(location: str, exc: psycopg.Error) -> StoreError:
    """The StoreError for `exc`, raised by the server while using the store."""
    state = exc.sqlstate or ""
    cause = " ".join(str(exc).split())
    if state == "53100" or state.startswith("53"):
        return StoreFull(
            f"{location}: the PostgreSQL server has no room for this write ({cause}); "
            f"{NOTHING_SAVED}. Free some space and try again."
        )
    if state in ("40001", "40P01", "55P03", "57014"):
        return StoreBusy(
            f"{location}: the write conflicted with another one ({cause}); "
            f"{NOTHING_SAVED}. Try again."
        )
    if state == "25006":
        return StoreReadOnly(f"{location}: the store is read-only ({cause}); {NOTHING_SAVED}.")
    if state == "42501":
        return StoreReadOnly(
            f"{location}: the user may not write this store ({cause}); {NOTHING_SAVED}."
        )
    if state.startswith("XX"):
        return damaged(location, cause)
    if state in ("42P01", "42703"):  # a table or column of ours is missing
        return StoreIncompatible(
            f"{location}: the database does not have the layout of a pi-agents store "
            f"({cause}); {NOTHING_SAVED}."
        )
    if is_lost(None, exc) or isinstance(exc, psycopg.OperationalError):
        return StoreUnavailable(f"{location}: the store cannot be reached ({cause}).")
    return StoreError(f"{location}: the store refused the operation ({cause}); {NOTHING_SAVED}.")
