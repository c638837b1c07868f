"""The runtime when its store fails: a full disk, a lock another process holds, a
damaged or misplaced home. The turn or call that met the fault fails with a clear
error naming its cause; the Runtime and its other Agents go on, and work resumes
once the store can be written again."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

import piagents
from piagents.agent import RunFailed
from piagents.agents.mailbox import poke
from piagents.ai.messages import AssistantMessage
from piagents.harness.events import LoopEvent, MessageCommitted, RunEnded, ToolStarted
from piagents.store.base import (
    StoreBusy,
    StoreDamaged,
    StoreError,
    StoreFull,
    StoreReadOnly,
    StoreUnavailable,
)
from piagents.store.records import InputRecord, SessionRecord, new_id
from piagents.store.sqlite import SQLiteStore
from piagents.testing import FunctionModel, ModelCall, Reply, ToolCall
from support import eventually

LIMIT = 1 << 20


def fill(path: Path) -> sqlite3.Connection:
    """Another connection grows the store past LIMIT; dropping `filler` frees it."""
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("CREATE TABLE filler (b BLOB)")
    other.execute("INSERT INTO filler VALUES (randomblob(?))", (LIMIT + (64 << 10),))
    return other


def lock_once_answered(blocker: sqlite3.Connection) -> Callable[[LoopEvent], None]:
    """A loop listener: once the model's answer is committed, another connection takes
    the store's write lock, so what the run records at its end cannot be written."""

    def listener(event: LoopEvent) -> None:
        answered = isinstance(event, MessageCommitted) and isinstance(
            event.message, AssistantMessage
        )
        if answered and not blocker.in_transaction:
            blocker.execute("BEGIN IMMEDIATE")

    return listener


async def until(rt: piagents.Runtime, condition: Callable[[], bool]) -> None:
    """Wait (on the runtime's change notices, not a clock) until `condition` holds."""
    reached = asyncio.Event()

    def check() -> None:
        if condition():
            reached.set()

    rt.coordinator.listeners.append(check)
    try:
        check()
        async with asyncio.timeout(30):
            await reached.wait()
    finally:
        rt.coordinator.listeners.remove(check)


async def test_a_store_locked_when_a_run_ends_fails_that_prompt_not_the_runtime(
    home: Path, work: Path
) -> None:
    store = SQLiteStore(home / "store.db", busy_timeout=0.05)
    blocker = sqlite3.connect(home / "store.db", isolation_level=None)
    async with piagents.Runtime(home, model=FunctionModel(lambda c: "answer"), store=store) as rt:
        first = await rt.open_root(cwd=work)
        second = await rt.open_root(cwd=work)
        lock = lock_once_answered(blocker)
        first.loop.listeners.append(lock)

        with pytest.raises(RunFailed, match="store is locked by another process"):
            await first.prompt("hello")

        first.loop.listeners.remove(lock)
        blocker.execute("ROLLBACK")
        assert await second.prompt("are you still there?") == "answer"
        assert await first.prompt("and again") == "answer"
    blocker.close()


async def test_a_spawn_the_store_refuses_is_an_error_result_and_can_be_made_again(
    home: Path, work: Path
) -> None:
    path = home / "store.db"
    store = SQLiteStore(path, busy_timeout=0.05)
    blocker = sqlite3.connect(path, isolation_level=None)
    async with piagents.Runtime(home, model=FunctionModel(lambda c: "done"), store=store) as rt:
        root = await rt.open_root(cwd=work)
        spawn = {"action": "spawn", "name": "w", "message": "work"}
        blocker.execute("BEGIN IMMEDIATE")

        refused = await root.call_tool("agent", spawn)

        assert refused.is_error
        assert refused.text.startswith(f"{path}: the store is locked by another process")
        blocker.execute("ROLLBACK")
        made = await root.call_tool("agent", spawn)
        assert not made.is_error, made.text
    blocker.close()


class FirstInputRefused(SQLiteStore):
    """The real store, but the disk fills between a new session and its first input."""

    refuse = True

    def add_input(self, record: InputRecord) -> InputRecord:
        if self.refuse:
            self.refuse = False
            raise StoreFull(f"{self.location}: the disk is full")
        return super().add_input(record)


async def test_a_spawn_whose_first_input_the_store_refuses_leaves_no_agent_behind(
    home: Path, work: Path
) -> None:
    store = FirstInputRefused(home / "store.db")
    async with piagents.Runtime(home, model=FunctionModel(lambda c: "done"), store=store) as rt:
        root = await rt.open_root(cwd=work)
        spawn = {"action": "spawn", "name": "w", "message": "work"}

        refused = await root.call_tool("agent", spawn)

        assert refused.is_error and "the disk is full" in refused.text
        assert rt.store.list_sessions(owner_id=root.id) == []
        assert [a.id for a in rt.agents.values()] == [root.id]
        made = await root.call_tool("agent", spawn)
        assert not made.is_error, made.text
        assert [s.name for s in rt.store.list_sessions(owner_id=root.id)] == ["w"]


def test_a_session_that_took_part_is_never_discarded(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "store.db")
    store.create_session(SessionRecord(id="root", cwd="/"))
    store.create_session(SessionRecord(id="w", cwd="/", owner_id="root", root_id="root"))
    with pytest.raises(StoreError, match="it is kept"):
        store.discard_session("root")  # it has an Agent of its own
    store.discard_session("w")
    assert [s.id for s in store.list_sessions()] == ["root"]
    store.close()


async def test_a_full_disk_fails_the_turn_and_work_resumes_once_space_is_freed(
    home: Path, work: Path
) -> None:
    def route(call: ModelCall) -> str:
        return "y" * 20_000 if call.messages[-1].text == "a long answer, please" else "answer"

    store = SQLiteStore(home / "store.db", max_bytes=LIMIT)
    async with piagents.Runtime(home, model=FunctionModel(route), store=store) as rt:
        first = await rt.open_root(cwd=work)
        second = await rt.open_root(cwd=work)
        other = fill(home / "store.db")

        with pytest.raises(StoreFull, match="the store cannot be written, the disk is full"):
            await first.prompt("x" * 20_000)  # not even accepted: nothing of it is kept
        with pytest.raises(RunFailed, match="the store cannot be written, the disk is full"):
            await first.prompt("a long answer, please")  # accepted; its answer is not kept
        listed = await second.call_tool("agent", {"action": "list"})
        assert not listed.is_error

        other.execute("DROP TABLE filler")
        assert await first.prompt("x" * 20_000) == "answer"
        assert await first.prompt("a long answer, please") == "y" * 20_000
        assert await second.prompt("and you?") == "answer"
    other.close()


async def test_a_result_the_store_could_not_record_reaches_the_owner_once_it_can(
    home: Path, work: Path
) -> None:
    def route(call: ModelCall) -> str:
        return "the child's answer" if call.agent_name == "w" else "noted"

    store = SQLiteStore(home / "store.db", busy_timeout=0.05)
    blocker = sqlite3.connect(home / "store.db", isolation_level=None)
    async with piagents.Runtime(home, model=FunctionModel(route), store=store) as rt:
        root = await rt.open_root(cwd=work)
        spawned = await root.call_tool(
            "agent", {"action": "spawn", "name": "w", "message": "do it"}
        )
        child = rt.agents[spawned.details["id"]]
        run_ended = asyncio.Event()
        child.loop.listeners.append(lock_once_answered(blocker))
        child.loop.listeners.append(lambda e: isinstance(e, RunEnded) and run_ended.set())
        await run_ended.wait()  # its result could not be recorded: the store was locked

        blocker.execute("ROLLBACK")
        waited = await root.call_tool("agent", {"action": "wait", "target": "w", "timeout": 30})

        assert "the child's answer" in waited.text
    blocker.close()


async def test_an_input_to_a_root_another_runtime_continued_meanwhile_reaches_it(
    home: Path, work: Path
) -> None:
    seen: list[tuple[str, str]] = []

    def route(call: ModelCall) -> str:
        seen.append((call.agent_id, call.messages[-1].text))
        return "ok"

    model = FunctionModel(route)
    async with piagents.Runtime(home, model=model) as first_rt:
        target = (await first_rt.open_root(cwd=work)).id
    async with piagents.Runtime(home, model=model) as rt:
        sender = await rt.open_root(cwd=work)
        send = {"action": "send", "target": target, "message": "first"}
        assert not (await sender.call_tool("agent", send)).is_error
        await until(rt, lambda: target not in rt.agents)  # it woke, answered, went offline

        async with piagents.Runtime(home, model=model) as elsewhere:  # `--session X`
            assert await (await elsewhere.open_root(session=target)).prompt("meanwhile") == "ok"

        send["message"] = "second"
        assert not (await sender.call_tool("agent", send)).is_error
        await until(rt, lambda: target not in rt.agents)

    asked = [text for agent_id, text in seen if agent_id == target]
    assert len(asked) == 3
    assert "first" in asked[0] and asked[1] == "meanwhile" and "second" in asked[2]


async def test_a_write_queued_while_the_store_is_locked_joins_the_conversation_later(
    home: Path, work: Path
) -> None:
    seen: list[list[str]] = []

    def route(call: ModelCall) -> str | Reply:
        seen.append([m.text for m in call.messages])
        if call.messages[-1].text == "look around":
            return Reply(tool_calls=[ToolCall("ls", {})])
        return "answer"

    store = SQLiteStore(home / "store.db", busy_timeout=0.05)
    blocker = sqlite3.connect(home / "store.db", isolation_level=None)
    async with piagents.Runtime(home, model=FunctionModel(route), store=store) as rt:
        root = await rt.open_root(cwd=work)

        def during_the_tool(event: LoopEvent) -> None:
            if isinstance(event, ToolStarted):
                root.send("a note for later", "write")  # accepted: queued for the boundary
                blocker.execute("BEGIN IMMEDIATE")

        root.loop.listeners.append(during_the_tool)
        with pytest.raises(RunFailed, match="locked by another process"):
            await root.prompt("look around")
        root.loop.listeners.remove(during_the_tool)
        blocker.execute("ROLLBACK")

        assert await root.prompt("go on") == "answer"
    assert "a note for later" in seen[-1]
    blocker.close()


async def test_inputs_another_runtime_left_are_taken_once_the_store_can_be_written(
    home: Path, work: Path
) -> None:
    arrived = asyncio.Event()

    def route(call: ModelCall) -> str:
        if call.messages[-1].text == "from afar":
            arrived.set()
        return "ok"

    refused = asyncio.Event()

    class Refusals(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "could not be taken yet" in record.getMessage():
                refused.set()

    handler = Refusals()
    logging.getLogger("piagents").addHandler(handler)
    store = SQLiteStore(home / "store.db", busy_timeout=0.05)
    blocker = sqlite3.connect(home / "store.db", isolation_level=None)
    try:
        async with piagents.Runtime(home, model=FunctionModel(route), store=store) as rt:
            root = await rt.open_root(cwd=work)
            elsewhere = SQLiteStore(home / "store.db")  # another runtime's store
            elsewhere.add_input(
                InputRecord(
                    id=new_id(),
                    root_id=root.id,
                    recipient_id=root.id,
                    sender_id=None,
                    kind="input",
                    delivery="followUp",
                    text="from afar",
                    delivered=False,
                    rendered="from afar",
                )
            )
            elsewhere.close()
            blocker.execute("BEGIN IMMEDIATE")
            assert rt.holder is not None and await poke(rt.holder.token)
            async with asyncio.timeout(30):
                await refused.wait()  # the poke came while the store was locked

            blocker.execute("ROLLBACK")
            async with asyncio.timeout(30):
                await arrived.wait()
    finally:
        logging.getLogger("piagents").removeHandler(handler)
        blocker.close()


async def test_background_work_that_fails_is_logged_and_ends_only_itself(
    home: Path, work: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async def refused() -> None:
        raise StoreBusy("the store is locked by another process")

    async def broken() -> None:
        raise ValueError("a bug")

    async with piagents.Runtime(home, model=FunctionModel(lambda c: "answer")) as rt:
        root = await rt.open_root(cwd=work)
        done = asyncio.Event()

        async def last() -> None:
            done.set()

        rt.background(refused(), "recording something")
        rt.background(broken(), "delivering something")
        rt.background(last(), "the last thing")
        await done.wait()

        assert await root.prompt("still here?") == "answer"
    messages = [r.getMessage() for r in caplog.records]
    assert "Recording something failed: the store is locked by another process" in messages
    assert "Delivering something failed" in messages


# ---- damaged and misplaced homes -------------------------------------------------


async def test_a_home_that_is_a_regular_file_is_a_store_error_naming_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.write_text("a file")
    with pytest.raises(StoreUnavailable, match=f"{home} is not a directory"):
        async with piagents.Runtime(home, model=FunctionModel(lambda c: "hi")):
            pass
    assert home.read_text() == "a file"


async def test_a_home_that_cannot_be_created_is_a_store_error_naming_it(
    tmp_path: Path, make_read_only: Callable[[Path], None]
) -> None:
    parent = tmp_path / "locked"
    parent.mkdir()
    make_read_only(parent)
    with pytest.raises(StoreError, match=f"cannot create {parent / 'home'}"):
        async with piagents.Runtime(parent / "home", model=FunctionModel(lambda c: "hi")):
            pass


async def test_a_read_only_home_is_named_as_such_not_blamed_on_the_store(
    home: Path, work: Path, make_read_only: Callable[[Path], None]
) -> None:
    async with piagents.Runtime(home, model=FunctionModel(lambda c: "hi")) as rt:
        await rt.open_root(cwd=work)
    make_read_only(home)
    with pytest.raises(StoreReadOnly, match=f"cannot write in {home}") as info:
        async with piagents.Runtime(home, model=FunctionModel(lambda c: "hi")):
            pass
    assert "store.db is" not in str(info.value)


async def test_a_damaged_store_is_store_damaged_never_a_raw_sqlite_error(
    home: Path, work: Path
) -> None:
    path = home / "store.db"
    store = SQLiteStore(path)
    for i in range(400):
        store.create_session(SessionRecord(id=f"s{i:04}", cwd="/" + "w" * 200))
    store.close()
    with sqlite3.connect(path) as db:
        (root,) = db.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'sessions'"
        ).fetchone()
    db.close()
    data = bytearray(path.read_bytes())
    data[(root - 1) * 4096 : root * 4096] = b"\xff" * 4096
    path.write_bytes(bytes(data))

    async with piagents.Runtime(home, model=FunctionModel(lambda c: "hi")) as rt:
        with pytest.raises(StoreDamaged, match=f"{path} is damaged"):
            await rt.open_root(cwd=work)
        with pytest.raises(StoreDamaged, match=f"{path} is damaged"):
            rt.latest_session(work)


def _store_is_a_directory(path: Path) -> str:
    path.mkdir()
    return "is a directory"


def _store_of_a_newer_schema(path: Path) -> str:
    SQLiteStore(path).close()
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 99")
    db.close()
    return "was written by a newer pi-agents"


def _store_with_a_damaged_header(path: Path) -> str:
    path.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 16)
    return "is damaged"


@pytest.mark.parametrize(
    "make", [_store_is_a_directory, _store_of_a_newer_schema, _store_with_a_damaged_header]
)
async def test_a_store_that_cannot_be_used_is_a_store_error_naming_it_and_left_as_it_was(
    home: Path, make: Callable[[Path], str]
) -> None:
    path = home / "store.db"
    said = make(path)
    before = sorted(p.name for p in home.iterdir())

    with pytest.raises(StoreError, match=f"{path} {said}"):
        async with piagents.Runtime(home, model=FunctionModel(lambda c: "hi")):
            pass

    assert sorted(p.name for p in home.iterdir()) == before


# ---- PostgreSQL: a connection the server drops ---------------------------------------


def end_store_connections(url: str) -> list[int]:
    """The server ends every pi-agents connection to the database at `url` (a restart,
    a network cut); returns the ended server processes once they are gone."""
    import psycopg

    database = url.rsplit("/", 1)[1]
    with psycopg.connect(url, autocommit=True) as db:
        pids = [
            r[0]
            for r in db.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = %s "
                "AND application_name = 'pi-agents'",
                (database,),
            ).fetchall()
        ]
        for pid in pids:
            db.execute("SELECT pg_terminate_backend(%s)", (pid,))
        eventually(
            lambda: (
                not db.execute(
                    "SELECT 1 FROM pg_stat_activity WHERE pid = ANY(%s)", (pids,)
                ).fetchall()
            ),
            what="the store's connections to end",
        )
    return pids


async def test_a_turn_whose_store_connection_is_dropped_mid_turn_commits_each_entry_once(
    home: Path, work: Path, postgres_url: str
) -> None:
    dropped: list[int] = []

    def route(call: ModelCall) -> str:
        if not dropped:  # while the turn runs: its user message is committed already
            dropped.extend(end_store_connections(postgres_url))
        return f"answer {len(call.messages)}"

    settings = {"store": postgres_url}
    async with piagents.Runtime(home, model=FunctionModel(route), settings=settings) as rt:
        root = await rt.open_root(cwd=work)
        assert await root.prompt("first") == "answer 1"
        assert await root.prompt("second") == "answer 3"  # the whole history, once
        texts = [e.message.text for e in rt.store.entries(root.id) if hasattr(e, "message")]

    assert dropped  # the connection did end mid-turn
    assert texts == ["first", "answer 1", "second", "answer 3"]
