"""A standby process's preparation (`supervision.standby`): the stages run in order
until work arrives, a store that cannot be opened yet is left for after the
handover, the providers' SDKs are imported on a thread of their own that begins no
more once work came, and the worker's stdin is looked at without being read."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import psycopg

from piagents.store.postgres import PostgresStore
from piagents.supervision import standby

UNREACHABLE = "postgresql://u@127.0.0.1:1/nowhere"  # nothing listens: refused at once


def test_everything_is_prepared_while_no_work_comes(home: Path, postgres_url: str) -> None:
    prepared = standby.prepare(home, postgres_url, lambda: False)
    try:
        assert prepared.done == ("store", "writes", "first turn")
        store = prepared.take_store()
        assert isinstance(store, PostgresStore) and prepared.store is None
        try:
            assert store.workers() == []  # open, on the database given
        finally:
            store.close()
        assert prepared.providers is not None
    finally:
        prepared.finish()
    assert not prepared.providers.is_alive()
    installed = [m for m in standby.PROVIDER_MODULES if m in sys.modules]
    assert "piagents.ai.openai_completions" in installed  # the dev install has openai


def test_work_that_arrives_stops_the_stages_and_nothing_more_is_begun(
    home: Path, postgres_url: str
) -> None:
    asked: list[int] = []

    def arrived() -> bool:
        asked.append(1)
        return len(asked) > 1  # after the first stage

    prepared = standby.prepare(home, postgres_url, arrived)
    try:
        assert prepared.done == ("store",)
        assert prepared.store is not None
        assert prepared.providers is None  # no SDK import begun
    finally:
        prepared.close()
        prepared.finish()
    assert prepared.store is None


def test_a_store_not_reachable_yet_is_left_for_after_the_handover(home: Path, caplog) -> None:
    prepared = standby.prepare(home, UNREACHABLE, lambda: False)
    try:
        assert prepared.store is None
        assert prepared.done == ("first turn",)
        assert "the store is not open yet" in caplog.text and "127.0.0.1:1" in caplog.text
    finally:
        prepared.work_came()
        prepared.finish()


def test_the_stdin_is_looked_at_without_being_read() -> None:
    read_end, write_end = os.pipe()
    with os.fdopen(read_end) as stream:
        assert not standby.work_arrived(stream)
        os.write(write_end, b"g1\n")
        assert standby.work_arrived(stream)
        assert standby.work_arrived(stream)  # still there: nothing was taken
        assert stream.readline() == "g1\n"
        assert not standby.work_arrived(stream)
        os.close(write_end)
        assert standby.work_arrived(stream)  # its end: the worker let it go
        assert stream.readline() == ""


async def test_a_store_opened_ahead_takes_the_lease_lapse_of_the_leads_settings(
    home: Path, postgres_url: str
) -> None:
    from piagents.supervision import placement, worker_main

    lead = PostgresStore(postgres_url)
    try:
        placement.offer(lead, "g1", {"settings": {"pi-agents": {"leaseLapseMs": 2000}}})
    finally:
        lead.close()
    ahead = PostgresStore(postgres_url)
    assert ahead.lease_lapse == 15.0  # opened before the lead's settings were read
    # A standby waits long: its connection may be gone by the handover (a server
    # restarted, an idle timeout). The options are read on a new one.
    with psycopg.connect(postgres_url, autocommit=True) as db:
        db.execute("SELECT pg_terminate_backend(%s)", (ahead.backend_pid,))
    # No generation g1 waits (only its options are there): the run ends at once.
    assert await worker_main.run_worker(home, "g1", postgres_url, ahead) == 1
    assert ahead.lease_lapse == 2.0
    log = (placement.run_dir(home, "g1") / placement.LOG_FILE).read_text()
    assert "cannot start" not in log  # it started; only its generation was not there
    assert "generation g1 is not waiting for a worker" in log
