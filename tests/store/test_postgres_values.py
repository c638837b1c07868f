"""The PostgreSQL store's own argument types: a `TextArray` reaches the server as
the `text[]` of exactly its values, whatever characters they hold."""

from __future__ import annotations

import psycopg
import pytest

from piagents.store.postgres_open import connect
from piagents.store.postgres_values import TextArray

AWKWARD = [
    "",
    "plain",
    'with "quotes"',
    "back\\slash",
    "\\",
    '"',
    "{braces},commas",
    "NULL",
    " spaces ",
    "ünïcødé ✓",
    "new\nline",
]


@pytest.fixture
def db(postgres_url):
    conn = connect(postgres_url, "test", read_only=False)
    yield conn
    conn.close()


def test_a_text_array_arrives_as_its_values(db: psycopg.Connection) -> None:
    row = db.execute("SELECT %s::text[]", (TextArray(AWKWARD),)).fetchone()
    assert row is not None and row[0] == AWKWARD


def test_a_text_array_matches_with_any(db: psycopg.Connection) -> None:
    for value in AWKWARD:
        hit = db.execute("SELECT %s = ANY(%s)", (value, TextArray(AWKWARD))).fetchone()
        assert hit == (True,), value
    miss = db.execute("SELECT %s = ANY(%s)", ("absent", TextArray(AWKWARD))).fetchone()
    assert miss == (False,)


def test_an_empty_text_array_matches_nothing(db: psycopg.Connection) -> None:
    assert db.execute("SELECT 'x' = ANY(%s)", (TextArray(),)).fetchone() == (False,)
