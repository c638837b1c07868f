"""The sandbox runs a script as the body of an async function, in a worker process,
with host functions, print capture and limits, and ends it when asked."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from piagents.programs.sandbox import (
    Limits,
    Prelude,
    SandboxError,
    SandboxPool,
    ScriptOutcome,
    run_script,
)
from support import TIMEOUT_S, until


@pytest.fixture
async def pool() -> AsyncIterator[SandboxPool]:
    async with SandboxPool() as pool:
        yield pool


async def run(
    pool: SandboxPool,
    code: str,
    *,
    externals: dict[str, object] | None = None,
    limits: Limits | None = None,
    printed: list[str] | None = None,
    prelude: Prelude | None = None,
) -> ScriptOutcome:
    sink = printed if printed is not None else []
    return await asyncio.wait_for(
        run_script(
            code,
            pool=pool,
            externals=externals or {},  # type: ignore[arg-type]
            limits=limits or Limits(),
            on_print=sink.append,
            prelude=prelude,
        ),
        TIMEOUT_S,
    )


def busy_workers() -> list[int]:
    """This process's monty workers with a thread running (not waiting) right now."""
    return [pid for pid in _workers() if any(_stat(t)[1] == "R" for t in _threads(pid))]


async def the_spinning_worker() -> int:
    """The one worker found running in five samples in a row: the script's loop (a worker
    the pool is starting beside it runs only for a moment, and must not be taken)."""
    streak: dict[int, int] = {}

    def spinning() -> list[int] | None:
        busy = set(busy_workers())
        for pid in [p for p in streak if p not in busy]:
            del streak[pid]
        for pid in busy:
            streak[pid] = streak.get(pid, 0) + 1
        hot = [pid for pid, n in streak.items() if n >= 5]
        return hot if len(hot) == 1 else None

    [worker] = await until(spinning, "the worker spinning in the script's loop")
    return worker


def _workers() -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        fields = _stat(stat)
        if fields[0] == "monty" and fields[2] == str(os.getpid()):
            found.append(int(stat.parent.name))
    return found


def _threads(pid: int) -> list[Path]:
    return list(Path(f"/proc/{pid}/task").glob("*/stat"))


def _stat(path: Path) -> tuple[str, str, str]:
    """(command, state, parent pid) of a /proc stat file; empty once it is gone."""
    try:
        text = path.read_text()
    except OSError:
        return ("", "", "")
    end = text.rindex(")")
    state, ppid = text[end + 2 :].split()[:2]
    return (text[text.index("(") + 1 : end], state, ppid)


async def test_a_script_returns_its_value_as_json(pool: SandboxPool) -> None:
    outcome = await run(pool, 'return {"pair": (1, 2), "set": {3}, "n": None, "f": 1.5}')

    assert outcome.state == "completed"
    assert outcome.value == {"pair": [1, 2], "set": [3], "n": None, "f": 1.5}
    assert outcome.error is None
    assert outcome.wall_time_s > 0


async def test_a_script_that_ends_without_return_returns_none_like_a_function_body(
    pool: SandboxPool,
) -> None:
    outcome = await run(pool, "x = 41\nx + 1")

    assert (outcome.state, outcome.value) == ("completed", None)


async def test_top_level_await_calls_a_host_coroutine_with_json_arguments(
    pool: SandboxPool,
) -> None:
    received: list[object] = []

    async def echo(*args: object, **kwargs: object) -> object:
        received.append((args, kwargs))
        return {"got": len(args) + len(kwargs)}

    outcome = await run(
        pool,
        'r = await echo((1, 2), {"k": {3}}, flag=True)\nreturn r["got"]',
        externals={"echo": echo},
    )

    assert outcome.value == 3
    assert received == [(([1, 2], {"k": [3]}), {"flag": True})]


async def test_a_plain_host_function_is_called_without_await(pool: SandboxPool) -> None:
    seen: list[str] = []

    outcome = await run(
        pool, 'note("a")\nnote("b")\nreturn len("ab")', externals={"note": seen.append}
    )

    assert (outcome.value, seen) == (2, ["a", "b"])


async def test_plain_host_functions_and_print_run_on_the_event_loops_thread(
    pool: SandboxPool,
) -> None:
    # Monty calls them from a thread of its own; host code may use asyncio objects.
    threads: list[int] = []
    called = asyncio.Event()

    def note() -> None:
        threads.append(threading.get_ident())
        called.set()

    outcome = await run(
        pool,
        'note()\nprint("x")',
        externals={"note": note},
        printed=Recorder(lambda: threads.append(threading.get_ident())),
    )

    assert outcome.state == "completed"
    assert called.is_set()
    assert threads == [threading.get_ident()] * 2


class Recorder(list[str]):
    def __init__(self, on_append: Callable[[], object]) -> None:
        super().__init__()
        self._on_append = on_append

    def append(self, text: str) -> None:
        self._on_append()
        super().append(text)


async def test_a_closed_pool_leaves_no_worker_process_behind() -> None:
    before = set(_workers())
    async with SandboxPool(warm_workers=2) as pool:
        assert (await run(pool, "return 1")).value == 1
        assert set(_workers()) - before

    assert not set(_workers()) - before


async def test_print_reaches_on_print_in_order_even_when_the_script_fails(
    pool: SandboxPool,
) -> None:
    printed: list[str] = []

    outcome = await run(
        pool,
        'import sys\nprint("one", 1)\nprint("two", file=sys.stderr)\nprint("a", "b", sep="-")\n'
        'raise ValueError("late")',
        printed=printed,
    )

    assert outcome.state == "failed"
    assert "".join(printed) == "one 1\ntwo\na-b\n"


async def test_gathered_host_calls_run_concurrently(pool: SandboxPool) -> None:
    started: list[int] = []
    release = asyncio.Event()

    async def slow(n: int) -> int:
        started.append(n)
        await release.wait()
        return n * 10

    running = asyncio.ensure_future(
        run(
            pool,
            "import asyncio\nreturn await asyncio.gather(slow(1), slow(2), slow(3))",
            externals={"slow": slow},
        )
    )
    # Each call waits for the release, which comes only once all three are running.
    await until(lambda: len(started) == 3, "all three calls running at once")
    release.set()
    outcome = await running

    assert outcome.value == [10, 20, 30]
    assert sorted(started) == [1, 2, 3]


async def test_a_host_exception_is_catchable_in_the_script_as_its_builtin_class(
    pool: SandboxPool,
) -> None:
    async def check(value: int) -> int:
        raise ValueError(f"bad value {value}")

    outcome = await run(
        pool,
        "try:\n    await check(3)\nexcept ValueError as e:\n    return 'caught ' + str(e)",
        externals={"check": check},
    )

    assert outcome.value == "caught bad value 3"


class Refused(RuntimeError):
    pass


async def test_an_uncaught_host_exception_fails_the_script_at_its_line_under_the_hosts_name(
    pool: SandboxPool,
) -> None:
    async def fetch(path: str) -> str:
        raise Refused(f"no access to {path}")

    outcome = await run(
        pool, 'x = 1\n\ntext = await fetch("secret")\nreturn text', externals={"fetch": fetch}
    )

    assert outcome.state == "failed"
    assert outcome.error == (
        "Traceback (most recent call last):\n"
        '  File "<program>", line 3, in <module>\n'
        '    text = await fetch("secret")\n'
        "Refused: no access to secret"
    )


async def test_a_script_error_has_the_scripts_own_line_numbers_and_no_prelude_frames(
    pool: SandboxPool,
) -> None:
    prelude = Prelude("x = 0\n\n\ndef helper(d):\n    return d['missing']\n")

    outcome = await run(pool, "def f():\n    return helper({})\n\nf()", prelude=prelude)

    assert outcome.error == (
        "Traceback (most recent call last):\n"
        '  File "<program>", line 4, in <module>\n'
        "    f()\n"
        '  File "<program>", line 2, in f\n'
        "    return helper({})\n"
        "KeyError: missing"
    )


async def test_a_syntax_error_names_its_line(pool: SandboxPool) -> None:
    outcome = await run(pool, "x = 1\nif x\n    return 2")

    assert outcome.state == "failed"
    assert outcome.error is not None
    assert '  File "<program>", line 2' in outcome.error
    assert outcome.error.splitlines()[-1].startswith("SyntaxError: ")


@pytest.mark.parametrize(
    ("code", "construct"),
    [
        ("x = 1\nclass E(Exception):\n    pass", "class inheritance"),
        ("def g():\n    yield 1", "yield expressions"),
        ("x = 1\ndel x", "the 'del' statement"),
    ],
)
async def test_a_construct_monty_lacks_fails_with_a_message_naming_it_and_its_line(
    pool: SandboxPool, code: str, construct: str
) -> None:
    outcome = await run(pool, code)

    assert outcome.state == "failed"
    assert outcome.error is not None
    last = outcome.error.splitlines()[-1]
    assert last.startswith("NotImplementedError: ") and construct in last
    assert '  File "<program>", line 2' in outcome.error


@pytest.mark.parametrize(
    ("code", "error"),
    [
        ('return open("/etc/hostname").read()', "PermissionError: Permission denied"),
        ('open("/tmp/written-by-a-script", "w").write("x")', "PermissionError: Permission denied"),
        ("import subprocess", "ModuleNotFoundError: No module named 'subprocess'"),
        ("import socket", "ModuleNotFoundError: No module named 'socket'"),
        ('import os\nos.system("true")', "AttributeError: module 'os' has no attribute 'system'"),
        ("import os\nreturn dict(os.environ)", "'os.environ' is not supported"),
        ('import os\nreturn os.listdir("/")', "PermissionError: Permission denied"),
    ],
)
async def test_files_processes_the_network_and_the_environment_are_refused(
    pool: SandboxPool, code: str, error: str
) -> None:
    outcome = await run(pool, code)

    assert outcome.state == "failed"
    assert outcome.error is not None and error in outcome.error.splitlines()[-1]
    assert not Path("/tmp/written-by-a-script").exists()


async def test_cancelling_the_awaiting_task_ends_a_busy_loop_and_kills_its_worker(
    pool: SandboxPool,
) -> None:
    looping = asyncio.Event()
    running = asyncio.ensure_future(
        run(pool, "started()\nwhile True:\n    pass", externals={"started": looping.set})
    )
    await asyncio.wait_for(looping.wait(), TIMEOUT_S)
    await until(busy_workers, "the worker busy in its loop")

    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(running, TIMEOUT_S)

    await until(lambda: not busy_workers(), "no worker still spinning")
    assert (await run(pool, "return 1")).value == 1  # the pool serves the next script


async def test_a_worker_killed_under_a_script_fails_it_and_the_pool_goes_on(
    pool: SandboxPool,
) -> None:
    looping = asyncio.Event()
    running = asyncio.ensure_future(
        run(pool, "started()\nwhile True:\n    pass", externals={"started": looping.set})
    )
    await asyncio.wait_for(looping.wait(), TIMEOUT_S)
    worker = await the_spinning_worker()

    os.kill(worker, signal.SIGKILL)
    outcome = await running

    assert outcome.state == "failed"
    assert outcome.error is not None
    assert outcome.error.startswith("The sandbox's worker process died: ")
    assert (await run(pool, "return 1")).value == 1


async def test_a_timeout_stops_a_busy_loop(pool: SandboxPool) -> None:
    outcome = await run(pool, "while True:\n    pass", limits=Limits(timeout_s=0.5))

    assert outcome.state == "stopped"
    assert outcome.wall_time_s >= 0.5
    await until(lambda: not busy_workers(), "no worker still spinning")


async def test_a_timeout_counts_the_time_spent_waiting_on_the_host_and_cancels_the_call(
    pool: SandboxPool,
) -> None:
    cancelled = asyncio.Event()

    async def forever() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()

    outcome = await run(
        pool, "await forever()", externals={"forever": forever}, limits=Limits(timeout_s=0.3)
    )

    assert outcome.state == "stopped"
    assert cancelled.is_set()


async def test_host_calls_still_running_when_the_script_returns_are_cancelled(
    pool: SandboxPool,
) -> None:
    cancelled = asyncio.Event()

    async def slow() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()

    outcome = await run(pool, "slow()\nreturn 'done'", externals={"slow": slow})

    assert (outcome.value, outcome.abandoned_calls) == ("done", 0)
    assert cancelled.is_set()


async def test_a_host_call_that_ignores_cancellation_is_abandoned_and_counted(
    pool: SandboxPool,
) -> None:
    stuck = asyncio.Event()

    async def stubborn() -> None:
        while not stuck.is_set():
            try:
                await stuck.wait()
            except asyncio.CancelledError:
                continue

    outcome = await run(
        pool,
        "stubborn()\nreturn 1",
        externals={"stubborn": stubborn},
        limits=Limits(cleanup_timeout_s=0.1),
    )
    stuck.set()

    assert (outcome.state, outcome.abandoned_calls) == ("completed", 1)


async def test_the_memory_limit_fails_a_script_that_grows_past_it(pool: SandboxPool) -> None:
    outcome = await run(
        pool,
        "x = []\ntry:\n    while True:\n        x.append('a' * 1000)\n"
        "except MemoryError:\n    return 'kept going'",
        limits=Limits(max_memory_bytes=10_000_000),
    )

    assert outcome.state == "failed"
    assert outcome.error is not None
    assert outcome.error.splitlines()[-1].startswith("MemoryError: memory limit exceeded")


async def test_the_cpu_limit_fails_a_busy_loop_that_catches_everything(pool: SandboxPool) -> None:
    outcome = await run(
        pool,
        "while True:\n    try:\n        while True:\n            pass\n"
        "    except BaseException:\n        pass",
        limits=Limits(max_cpu_s=0.3),
    )

    assert outcome.state == "failed"
    assert outcome.error is not None
    assert outcome.error.splitlines()[-1].startswith("TimeoutError: turn time limit exceeded")


async def test_the_recursion_limit_fails_a_runaway_recursion(pool: SandboxPool) -> None:
    outcome = await run(
        pool, "def f(n):\n    return f(n + 1)\nreturn f(0)", limits=Limits(max_recursion_depth=100)
    )

    assert outcome.error is not None
    assert outcome.error.splitlines()[-1] == "RecursionError: maximum recursion depth exceeded"


async def test_a_script_may_make_more_host_calls_than_montys_default_budget(
    pool: SandboxPool,
) -> None:
    async def one() -> int:
        return 1

    outcome = await run(
        pool, "n = 0\nfor i in range(1500):\n    n += await one()\nreturn n", externals={"one": one}
    )

    assert outcome.value == 1500


async def test_a_prelude_that_fails_raises_a_sandbox_error(pool: SandboxPool) -> None:
    with pytest.raises(SandboxError, match="prelude"):
        await run(pool, "return 1", prelude=Prelude("1 / 0"))
