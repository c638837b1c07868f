"""A store's URL: a PostgreSQL URL naming a database, or a clear problem; shown in
messages without its password."""

from __future__ import annotations

from pathlib import Path

import pytest

from piagents.store.base import StoreUnavailable
from piagents.store.selection import open_store
from piagents.store.sqlite import SQLiteStore
from piagents.store.url import location_of, url_problem


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://pi@db.example:5432/agents",
        "postgres://pi:secret@127.0.0.1/agents?sslmode=require",
        "postgresql://[::1]:5432/agents",
    ],
)
def test_a_postgresql_url_naming_a_database_is_a_store_url(url: str) -> None:
    assert url_problem(url) is None


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://pi:secret@db.example:5432/agents", "postgresql://pi@db.example:5432/agents"),
        ("postgresql://pi:secret@[::1]:5432/agents", "postgresql://pi@[::1]:5432/agents"),
        (
            "postgresql://pi@db.example/agents?password=secret&sslmode=require",
            "postgresql://pi@db.example/agents?sslmode=require",
        ),
        ("postgresql://db.example/agents", "postgresql://db.example/agents"),
    ],
)
def test_a_url_is_shown_without_its_password(url: str, shown: str) -> None:
    assert location_of(url) == shown


def test_without_a_url_the_homes_sqlite_store_is_opened(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    try:
        assert isinstance(store, SQLiteStore)
        assert store.location == str(tmp_path / "store.db")
    finally:
        store.close()


def test_a_url_that_is_no_store_url_is_refused_without_its_password(tmp_path: Path) -> None:
    with pytest.raises(StoreUnavailable, match="unknown store 'mysql'") as raised:
        open_store(tmp_path, "mysql://pi:secret@db/agents")
    assert "secret" not in str(raised.value)
    assert not (tmp_path / "store.db").exists()


def test_psycopg_is_imported_only_when_a_postgresql_store_is_chosen(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = (
        "import asyncio, sys, piagents, piagents.cli\n"
        "from piagents.testing import FunctionModel\n"
        "async def main():\n"
        f"    async with piagents.Runtime(home={str(tmp_path)!r}, "
        "model=FunctionModel(lambda c: 'x')) as rt:\n"
        f"        await (await rt.open_root(cwd={str(tmp_path)!r})).prompt('hi')\n"
        "asyncio.run(main())\n"
        "print('psycopg' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
