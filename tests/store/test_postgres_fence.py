"""The fence on PostgreSQL under concurrency: a write by the old holder that waits for a
takeover still being committed is refused once it commits, for the root's session and
for a session of its tree alike."""

from __future__ import annotations

import threading

import psycopg
import pytest

from piagents.ai.messages import UserMessage
from piagents.store import lease
from piagents.store.base import LeaseLost, Registration
from piagents.store.postgres import PostgresStore
from piagents.store.records import MessageEntry, SessionRecord, new_id
from support import eventually


@pytest.mark.parametrize("target", ["root", "owned"])
def test_a_write_waiting_for_a_takeover_is_refused_once_it_commits(postgres_url, target) -> None:
    a = lease.new_holder()
    old = PostgresStore(postgres_url)
    try:
        old.register(Registration(a))
        root = new_id()
        old.create_session(SessionRecord(id=root, cwd="/", created=1, updated=1))
        owned = new_id()
        old.create_session(
            SessionRecord(id=owned, cwd="/", created=1, updated=1, owner_id=root, root_id=root)
        )
        old.acquire_lease(root, a)
        outcome: list[BaseException | None] = []

        def write() -> None:
            try:
                old.append(root if target == "root" else owned, [MessageEntry(UserMessage.of("x"))])
                outcome.append(None)
            except BaseException as exc:
                outcome.append(exc)

        with psycopg.connect(postgres_url) as takeover:  # a transaction, not yet committed
            takeover.execute(
                "UPDATE sessions SET lease_token = 'b', lease_pid = 1, lease_host = 'h' "
                "WHERE id = %s",
                (root,),
            )
            writer = threading.Thread(target=write)
            writer.start()
            with psycopg.connect(postgres_url, autocommit=True) as watch:
                eventually(
                    lambda: (
                        watch.execute(
                            "SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s",
                            (old.backend_pid,),
                        ).fetchone()
                        == ("Lock",)
                    ),
                    "the old holder's write to wait for the takeover",
                )
            takeover.commit()
        writer.join(timeout=30)
        [refused] = outcome
        assert isinstance(refused, LeaseLost)
        assert old.entries(root) == [] and old.entries(owned) == []
    finally:
        lease.retire(a)
        old.close()
