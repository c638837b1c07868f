"""Tools' blocking calls run in reused daemon threads, and a stuck one holds up no other."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

import pytest

from piagents.harness.tools import threads
from piagents.harness.tools.threads import DaemonPool, run_blocking
from support import until


async def test_calls_one_after_another_reuse_a_thread() -> None:
    await run_blocking(lambda: None)  # a thread exists and is idle again
    before = threads._pool.threads
    for n in range(20):
        assert await run_blocking(lambda n=n: n * 2) == n * 2
    assert threads._pool.threads == before


async def test_a_stuck_call_holds_up_no_other_and_errors_reach_the_caller() -> None:
    stuck = threading.Event()
    hanging = asyncio.ensure_future(run_blocking(stuck.wait))
    assert await run_blocking(lambda: "other") == "other"
    with pytest.raises(ZeroDivisionError):
        await run_blocking(lambda: 1 / 0)
    stuck.set()
    assert await hanging is True


async def test_a_cancelled_caller_stops_waiting_and_the_thread_finishes_on_its_own() -> None:
    entered, release = threading.Event(), threading.Event()

    def hold() -> bool:
        entered.set()
        return release.wait()

    call = asyncio.ensure_future(run_blocking(hold))
    await until(entered.is_set, what="the call's thread to start")
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    release.set()
    assert await run_blocking(lambda: "still serving") == "still serving"


def test_the_pool_is_calm_once_its_jobs_end() -> None:
    pool = DaemonPool()
    go = threading.Event()

    def job() -> None:
        go.wait()

    pool.submit(job)
    assert not pool.wait_calm(0.01)
    go.set()
    assert pool.wait_calm(10)


def test_a_job_submitted_as_soon_as_a_result_is_handed_over_finds_its_thread_free() -> None:
    """The hand-over runs once the thread counts as idle: a caller that submits its next
    job the moment it has a result reuses the thread (had the result been handed over
    first, each next job would have found every thread busy and started another)."""
    pool = DaemonPool()
    finished = threading.Event()
    handed = 0

    def job() -> Callable[[], None]:
        def hand_over() -> None:
            nonlocal handed
            handed += 1
            if handed < 20:
                pool.submit(job)
            else:
                finished.set()

        return hand_over

    pool.submit(job)
    assert finished.wait(10)
    assert pool.threads == 1
