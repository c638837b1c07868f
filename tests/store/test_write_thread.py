"""The write threads' group commit, on a resource that records what it was asked:
the writes waiting for a thread when it is free go to the group together, in the
order given; a part the group gives RERUN, and every write of a group that raised,
are told so or run alone; writes that cannot be parts run alone, in their place."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import zlib
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from piagents.store.write_thread import RERUN, Group, LaterWrite, Write, WriteThread


class Log:
    """The resource: what ran on it, in order."""

    def __init__(self) -> None:
        self.ran: list[object] = []
        self.groups: list[list[object]] = []


def grouped(log: Log, parts: Sequence[Any]) -> list[Any]:
    log.groups.append(list(parts))
    log.ran.extend(parts)
    return [RERUN if part == "rerun" else f"{part} in a group" for part in parts]


def part(name: str) -> Write[Log, str]:
    def alone(log: Log) -> str:
        log.ran.append(f"{name} alone")
        return f"{name} alone"

    return Write(alone, name, lambda _, value: value)


def held(gate: threading.Event, running: threading.Event) -> Write[Log, str]:
    """A write that keeps its thread busy until `gate` is set: the ones after it wait.
    `running` is set once the thread runs it (the writes given after that cannot be
    taken with it)."""

    def alone(log: Log) -> str:
        running.set()
        assert gate.wait(10)
        return "held"

    return Write(alone)


def values(writes: list[LaterWrite[str]]) -> list[str]:
    return [w.result() for w in writes]


@contextlib.contextmanager
def busy(
    group: Group[Log] = grouped,
) -> Iterator[tuple[Log, WriteThread[Log], threading.Event, LaterWrite[str]]]:
    """One write thread on a `Log`, grouping with `group`, kept busy by a held write
    until the gate is set: the writes given meanwhile wait for it together."""
    log = Log()
    threads = WriteThread(lambda: log, lambda _: None, "test", group=group)
    gate, running = threading.Event(), threading.Event()
    try:
        first = threads.submit("k", held(gate, running), lambda _: None)
        # Until the thread runs it, writes given now could be taken in one batch with
        # it, and those would then commit as a group of their own.
        assert running.wait(10)
        yield log, threads, gate, first
    finally:
        gate.set()
        threads.close()


def test_the_writes_waiting_for_a_thread_are_committed_as_one_group_in_their_order() -> None:
    with busy() as (log, threads, gate, first):
        later = [threads.submit("k", part(f"w{i}"), lambda _: None) for i in range(5)]
        gate.set()
        assert first.result() == "held"
        assert values(later) == [f"w{i} in a group" for i in range(5)]
        assert log.groups == [[f"w{i}" for i in range(5)]]


def test_a_part_the_group_could_not_settle_runs_alone_after_it() -> None:
    with busy() as (log, threads, gate, _):
        later = [threads.submit("k", part(name), lambda _: None) for name in ("a", "rerun", "b")]
        gate.set()
        assert values(later) == ["a in a group", "rerun alone", "b in a group"]
        assert log.ran == ["a", "rerun", "b", "rerun alone"]


def test_writes_that_cannot_be_parts_run_alone_in_their_place() -> None:
    with busy() as (log, threads, gate, _):

        def plain(log: Log) -> str:
            log.ran.append("plain")
            return "plain"

        names = ["a", "b", "plain", "c", "d", "e"]
        later = [
            threads.submit("k", plain if n == "plain" else part(n), lambda _: None) for n in names
        ]
        gate.set()
        assert values(later)[2] == "plain"
        assert log.ran == ["a", "b", "plain", "c", "d", "e"]
        assert log.groups == [["a", "b"], ["c", "d", "e"]]


def test_a_group_that_raised_fails_each_of_its_writes_and_the_thread_goes_on() -> None:
    def unknown(resource: Log, parts: Sequence[Any]) -> list[Any]:
        if len(parts) > 1:
            raise RuntimeError("lost while committing")
        return grouped(resource, parts)

    with busy(unknown) as (_, threads, gate, _):
        later = [threads.submit("k", part(n), lambda _: None) for n in ("a", "b")]
        gate.set()
        for write in later:
            with pytest.raises(RuntimeError, match="lost while committing"):
                write.result()
        assert threads.submit("k", part("c"), lambda _: None).result() == "c alone"


def test_a_single_waiting_part_runs_alone_and_settle_runs_on_the_reader() -> None:
    log = Log()
    threads = WriteThread(lambda: log, lambda _: None, "test", group=grouped)
    try:
        read: list[str] = []
        write = threads.submit("k", part("a"), read.append)
        assert write.result() == "a alone" and read == ["a alone"]
        assert log.groups == []
    finally:
        threads.close()


def test_closing_lets_the_writes_given_finish_and_refuses_later_ones() -> None:
    log = Log()
    threads = WriteThread(lambda: log, lambda _: None, "test", threads=2, group=grouped)
    writes = [threads.submit(f"k{i}", part(f"w{i}"), lambda _: None) for i in range(20)]
    threads.close()
    assert all(w.future.done() for w in writes)
    for i, value in enumerate(values(writes)):  # grouped or not, as they came; each once
        assert value in (f"w{i} in a group", f"w{i} alone")
    assert len(log.ran) == 20
    with pytest.raises(RuntimeError, match="closed"):
        threads.submit("k", part("late"), lambda _: None)


def test_a_spare_made_ahead_is_the_first_threads_resource_and_closed_if_never_used() -> None:
    made: list[tuple[int, str]] = []  # (number, the thread that made it)
    closed: list[int] = []

    def make() -> int:
        made.append((len(made), threading.current_thread().name))
        return len(made) - 1

    def used(key: str) -> int:
        return threads.submit(key, lambda resource: resource, lambda _: None).result()

    threads: WriteThread[int] = WriteThread(make, closed.append, "spare", threads=2)
    threads.make_spare()
    threads.make_spare()  # one is there: no second one
    assert made == [(0, threading.current_thread().name)]
    keys = ["a", "b", "c", "d", "e", "f"]  # keys on both threads (crc32 % 2)
    first = used(keys[0])
    assert first == 0  # the spare: nothing was made on the write thread
    other = next(k for k in keys if zlib.crc32(k.encode()) % 2 != zlib.crc32(b"a") % 2)
    assert used(other) == 1 and made[1][1].startswith("spare-")
    assert used(keys[0]) == 0  # a thread keeps its resource
    threads.close()
    assert sorted(closed) == [0, 1]

    unused: WriteThread[int] = WriteThread(make, closed.append, "unused")
    unused.make_spare()
    unused.close()
    assert closed[-1] == 2  # the spare nobody took
    unused.make_spare()  # closed: makes nothing
    assert len(made) == 3


async def test_writes_finished_together_wake_the_loop_once_and_each_is_then_done() -> None:
    loop = asyncio.get_running_loop()
    wakes = 0
    real = loop.call_soon_threadsafe

    def counted(callback: Any, *args: Any, **kw: Any) -> Any:
        nonlocal wakes
        wakes += 1
        return real(callback, *args, **kw)

    with busy() as (_, threads, gate, _first):
        later = [threads.submit("k", part(f"w{i}"), lambda _: None) for i in range(5)]
        done = [w.done_here() for w in later]
        loop.call_soon_threadsafe = counted  # type: ignore[method-assign]
        try:
            gate.set()
            await asyncio.gather(*done)
        finally:
            del loop.call_soon_threadsafe
        assert wakes == 1  # one group finished: one wake-up for its five writes
        assert values(later) == [f"w{i} in a group" for i in range(5)]


async def test_cancelling_what_waits_for_a_write_does_not_cancel_the_write() -> None:
    with busy() as (log, threads, gate, _first):
        write = threads.submit("k", part("kept"), lambda _: None)
        waiter = write.done_here()
        waiter.cancel()
        gate.set()
        assert write.result() == "kept alone" and log.ran[-1] == "kept alone"
        again = write.done_here()  # done already: done on the loop's next turn
        await asyncio.wait_for(again, 10)
