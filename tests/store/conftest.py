"""The stores the contract suite runs on: every test that takes `store` (or `backend`)
runs once on SQLite and once on PostgreSQL."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from piagents.store.base import Store


class Backend:
    """One store's database: stores opened on it, and SQL run behind their back."""

    def __init__(self, name: str, target: str) -> None:
        self.name = name
        self.target = target  # the SQLite file, or the PostgreSQL URL
        self._opened: list[Store] = []

    def open(self, **options: Any) -> Store:
        """A new store on this database (another connection, as another process has)."""
        if self.name == "sqlite":
            from piagents.store.sqlite import SQLiteStore

            store: Store = SQLiteStore(self.target, **options)
        else:
            from piagents.store.postgres import PostgresStore

            store = PostgresStore(self.target, **options)
        self._opened.append(store)
        return store

    @property
    def location(self) -> str:
        """How the store names itself in its messages."""
        if self.name == "sqlite":
            return self.target
        from piagents.store.url import location_of

        return location_of(self.target)

    def rows(self, sql: str, *args: object) -> list[tuple[Any, ...]]:
        """Run `sql` (`?` for each of `args`) as another program would; its rows."""
        if self.name == "sqlite":
            with sqlite3.connect(self.target) as db:
                return db.execute(sql, args).fetchall()
        import psycopg

        with psycopg.connect(self.target, autocommit=True) as db:
            cur = db.execute(sql.replace("?", "%s"), args)  # type: ignore[arg-type]
            got = cur.fetchall() if cur.description else []
            # As SQLite gives them: flags as 0/1, blobs as bytes.
            return [
                tuple(
                    int(v) if isinstance(v, bool) else bytes(v) if isinstance(v, memoryview) else v
                    for v in row
                )
                for row in got
            ]

    def sql(self, sql: str, *args: object) -> None:
        self.rows(sql, *args)

    def close(self) -> None:
        for store in self._opened:
            store.close()


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "sqlite":
        b = Backend("sqlite", str(tmp_path / "store.db"))
    else:
        b = Backend("postgres", request.getfixturevalue("postgres_url"))
    yield b
    b.close()


@pytest.fixture
def store(backend: Backend) -> Store:
    return backend.open()
