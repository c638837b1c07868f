"""The SQLite store's leases on a store made before heartbeats: read as they are when
opened read-only (by their process alone), and given the registry when opened to write."""

from __future__ import annotations

import socket
import sqlite3

from piagents.store.base import LeaseHolder
from piagents.store.sqlite import SQLiteStore


def test_a_store_made_before_the_registry_is_read_without_it_and_gets_it_when_written(
    tmp_path,
) -> None:
    path = tmp_path / "store.db"
    SQLiteStore(path).close()
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE holders")
        db.execute(
            "INSERT INTO sessions (id, cwd, created, updated, lease_pid, lease_host, "
            "lease_token, lease_started) VALUES ('s', '/', 1, 1, 1, ?, 'old', '')",
            (socket.gethostname(),),
        )
    reader = SQLiteStore(path, read_only=True)
    try:
        assert reader.workers() == []
        # pid 1 lives (init) and its start time was not recorded: its process decides.
        assert reader.lease_of("s") == LeaseHolder(1, socket.gethostname(), "old", "")
        assert reader.states(["s"]) == {"s": "idle"}
    finally:
        reader.close()
    SQLiteStore(path).close()  # a writable opening lays out what is missing
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT 1 FROM sqlite_master WHERE name = 'holders'").fetchall() == [(1,)]
