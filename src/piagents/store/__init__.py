"""Durable state: sessions and their append-only entries, inputs between Agents,
leases and supervision generations, behind one narrow interface.

Its public names, each imported on first use from the module that defines it:

- `Store` (`base`): the interface every store implements; its failures are
  `StoreError`s (`base`), among them `SessionNotFound` and `SessionInUse`.
- `SQLiteStore` (`sqlite`): the default store, one SQLite database in the home,
  each concern in a module of its own (`sqlite_open`, `sqlite_sessions`,
  `sqlite_entries`, `sqlite_inputs`, `sqlite_search`, `sqlite_leases`,
  `sqlite_generations`).
- `PostgresStore` (`postgres`): the same store in a PostgreSQL database, along the
  same seams (`postgres_*`), for homes beyond one machine; it needs psycopg.
- `open_store` (`selection`): the store a home uses, SQLite unless a
  `postgresql://` URL is given (checked by `url`).
- `SessionRecord`, `Entry`, `InputRecord`, `GenerationRecord` (`records`): the
  frozen records it keeps.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from piagents.store.base import SessionInUse, SessionNotFound, Store, StoreError
    from piagents.store.postgres import PostgresStore
    from piagents.store.records import Entry, GenerationRecord, InputRecord, SessionRecord
    from piagents.store.selection import open_store
    from piagents.store.sqlite import SQLiteStore

__all__ = [
    "Entry",
    "GenerationRecord",
    "InputRecord",
    "PostgresStore",
    "SQLiteStore",
    "SessionInUse",
    "SessionNotFound",
    "SessionRecord",
    "Store",
    "StoreError",
    "open_store",
]

_DEFINED_IN = {
    "SessionInUse": "base",
    "SessionNotFound": "base",
    "Store": "base",
    "StoreError": "base",
    "Entry": "records",
    "GenerationRecord": "records",
    "InputRecord": "records",
    "SessionRecord": "records",
    "SQLiteStore": "sqlite",
    "PostgresStore": "postgres",
    "open_store": "selection",
}


def __getattr__(name: str) -> Any:
    # Imported on first use, so importing one module of the package imports no other.
    if name not in _DEFINED_IN:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_DEFINED_IN[name]}"), name)
