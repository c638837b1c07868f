"""Opening the PostgreSQL store: the connection, what the database is (checked
before anything is written to it), and a new store laid out, or an earlier layout
upgraded in place."""

from __future__ import annotations

import contextlib
from typing import Any

import psycopg

from piagents.store import postgres_errors as errors
from piagents.store import postgres_layout as layout
from piagents.store.base import StoreIncompatible, StoreNotFound
from piagents.store.postgres_layout import VERSION_TABLE
from piagents.store.postgres_values import register_values

CONNECT_TIMEOUT_S = 10
LOCK_TIMEOUT_MS = 10_000
# Held while a store is checked and laid out, so two runtimes opening one new
# database do not both lay it out ('piAG').
LAYOUT_LOCK = 0x70694147

_USER_TABLES = (
    "SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
    "WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') "
    "AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_%%'"
)


def connect(url: str, location: str, *, read_only: bool) -> psycopg.Connection[Any]:
    """A new connection to the store's database; StoreUnavailable when there is none."""
    try:
        db = psycopg.connect(
            url,
            autocommit=True,
            connect_timeout=CONNECT_TIMEOUT_S,
            application_name="pi-agents",
            # A row another connection keeps locked fails the write (StoreBusy) after
            # as long as the SQLite store waits for its lock, instead of hanging.
            options=f"-c lock_timeout={LOCK_TIMEOUT_MS}",
        )
    except psycopg.Error as exc:
        raise errors.cannot_connect(location, exc) from exc
    register_values(db)
    try:
        if read_only:
            db.execute("SET default_transaction_read_only = on")
    except psycopg.Error as exc:
        db.close()
        raise errors.translate(location, exc) from exc
    return db


def prepare(db: psycopg.Connection[Any], location: str, *, read_only: bool) -> None:
    """Check that the database is a pi-agents store of a version this one can use (or
    an empty database), then lay it out or upgrade it; read-only, only check it."""
    try:
        if read_only:
            version = _version(db, location)
            if version == 0:
                raise StoreNotFound(f"{location}: there is no pi-agents store here yet.")
            if version < layout.schema_version():
                raise NeedsUpgrade
            return
        db.execute("BEGIN")
        try:
            db.execute("SELECT pg_advisory_xact_lock(%s)", (LAYOUT_LOCK,))
            version = _version(db, location)
            if version < layout.schema_version():
                layout.upgrade(db, version)
            db.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(psycopg.Error):
                db.execute("ROLLBACK")
            raise
    except psycopg.Error as exc:
        raise errors.translate(location, exc) from exc


class NeedsUpgrade(Exception):
    """A store opened read-only has an earlier layout."""


def _version(db: psycopg.Connection[Any], location: str) -> int:
    """The store's layout version, 0 for an empty database; StoreIncompatible for a
    database of another program, or of a newer pi-agents."""
    tables = db.execute(_USER_TABLES).fetchall()
    schema = db.execute("SELECT current_schema()").fetchone()
    ours = any(
        name == VERSION_TABLE and ns == (schema[0] if schema else None) for ns, name in tables
    )
    if not ours:
        if tables:
            shown = ", ".join(f"{ns}.{name}" for ns, name in tables[:3])
            raise StoreIncompatible(
                f"{location} is a database of another program (it has tables such as "
                f"{shown}); it was left untouched. Give pi-agents a database of its own."
            )
        return 0
    row = db.execute(f"SELECT max(version) FROM {VERSION_TABLE}").fetchone()
    version = int(row[0]) if row and row[0] is not None else 0
    if version > layout.schema_version():
        raise StoreIncompatible(
            f"{location} was written by a newer pi-agents (schema {version}, this one "
            f"uses {layout.schema_version()}); it was left untouched. Upgrade pi-agents "
            "to use it."
        )
    return version
