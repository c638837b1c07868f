"""The in-process SDK contract (../shared/SDK-CONTRACT.md) of `piagents.Runtime`."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import piagents
from piagents.config import SettingsError
from piagents.store.base import SessionInUse, SessionNotFound
from piagents.store.postgres import PostgresStore
from piagents.store.sqlite import SQLiteStore
from piagents.store.url import location_of
from piagents.testing import FunctionModel, Message, ModelCall, Reply, ToolCall

BUILT_IN_TOOLS = {"read", "write", "edit", "bash", "grep", "find", "ls"}


class Recorder:
    """A route that records every call and answers with a fixed text."""

    def __init__(self, answer: str = "the answer") -> None:
        self.answer = answer
        self.calls: list[ModelCall] = []

    def __call__(self, call: ModelCall) -> str:
        self.calls.append(call)
        return self.answer


def lease_columns(home: Path, session_id: str) -> tuple[Any, ...]:
    """The lease as written in the database file, read with a connection of our own."""
    with sqlite3.connect(home / "store.db") as db:
        row = db.execute(
            "SELECT lease_pid, lease_host, lease_token FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
    assert row is not None
    return tuple(row)


@pytest.fixture(params=["sqlite", "postgres"])
def stored(request: pytest.FixtureRequest) -> dict[str, Any] | None:
    """The settings choosing the store: none (the home's SQLite file), or a PostgreSQL
    database of the test's own (SDK-CONTRACT.md, "Another store")."""
    if request.param == "sqlite":
        return None
    return {"store": request.getfixturevalue("postgres_url")}


# ---- opening and prompting ------------------------------------------------------


@pytest.mark.parametrize("as_str", [True, False], ids=["str", "Path"])
async def test_home_and_cwd_may_be_given_as_str_or_path(
    home: Path, work: Path, as_str: bool
) -> None:
    h: str | Path = str(home) if as_str else home
    w: str | Path = str(work) if as_str else work

    async with piagents.Runtime(home=h, model=FunctionModel(lambda call: "hi")) as rt:
        root = await rt.open_root(cwd=w)
        assert await root.prompt("hello") == "hi"

    assert root.cwd == str(work.resolve())
    assert (home / "store.db").exists()


async def test_open_root_records_the_root_in_the_store_at_once(home: Path, work: Path) -> None:
    async with piagents.Runtime(home=home, model=FunctionModel(Recorder())) as rt:
        root = await rt.open_root(cwd=work, name="boss")

        other = SQLiteStore(home / "store.db")
        try:
            record = other.get_session(root.id)
        finally:
            other.close()

    assert isinstance(root.id, str) and len(root.id) >= 32
    assert record is not None
    assert record.cwd == str(work.resolve())
    assert record.name == "boss"
    assert record.owner_id is None
    assert record.model == "faux/function"


async def test_prompt_returns_the_models_answer(home: Path, work: Path) -> None:
    async with piagents.Runtime(home=home, model=FunctionModel(Recorder("42"))) as rt:
        root = await rt.open_root(cwd=work)

        assert await root.prompt("what is the answer?") == "42"


async def test_an_async_route_answers_too(home: Path, work: Path) -> None:
    async def route(call: ModelCall) -> str:
        await asyncio.sleep(0)  # the route really suspends: an async route is awaited
        return "async " + call.messages[-1].text

    async with piagents.Runtime(home=home, model=FunctionModel(route)) as rt:
        root = await rt.open_root(cwd=work)

        assert await root.prompt("hi") == "async hi"


async def test_a_route_that_reports_an_error_fails_the_prompt(home: Path, work: Path) -> None:
    model = FunctionModel(lambda call: Reply(text="boom", stop_reason="error"))
    async with piagents.Runtime(home=home, model=model) as rt:
        root = await rt.open_root(cwd=work)

        with pytest.raises(piagents.RunFailed, match="boom"):
            await root.prompt("hi")


async def test_a_route_that_raises_fails_the_prompt_without_crashing_the_runtime(
    home: Path, work: Path
) -> None:
    def route(call: ModelCall) -> str:
        if call.messages[-1].text == "crash":
            raise RuntimeError("route bug")
        return "fine"

    async with piagents.Runtime(home=home, model=FunctionModel(route)) as rt:
        root = await rt.open_root(cwd=work)

        with pytest.raises(piagents.RunFailed, match="route bug"):
            await root.prompt("crash")
        assert await root.prompt("again") == "fine"


async def test_the_model_can_call_tools_before_answering(home: Path, work: Path) -> None:
    def route(call: ModelCall) -> str | Reply:
        if call.messages[-1].role == "user":
            return Reply(tool_calls=[ToolCall("write", {"path": "a.txt", "content": "A"})])
        return "wrote: " + call.messages[-1].text

    async with piagents.Runtime(home=home, model=FunctionModel(route)) as rt:
        root = await rt.open_root(cwd=work)
        answer = await root.prompt("write it")

    assert (work / "a.txt").read_text() == "A"
    assert answer.startswith("wrote: ")


# ---- what the route sees -----------------------------------------------------------


async def test_call_messages_exclude_the_system_prompt_and_run_oldest_first(
    home: Path, work: Path
) -> None:
    rec = Recorder("ok")
    async with piagents.Runtime(home=home, model=FunctionModel(rec)) as rt:
        root = await rt.open_root(cwd=work)
        await root.prompt("first")
        await root.prompt("second")

    last = rec.calls[-1]
    assert [(m.role, m.text) for m in last.messages] == [
        ("user", "first"),
        ("assistant", "ok"),
        ("user", "second"),
    ]
    assert last.system_prompt
    assert all(last.system_prompt not in m.text for m in last.messages)
    assert last.agent_id == root.id
    assert last.agent_name is None
    assert isinstance(last.aborted, asyncio.Event)


async def test_messages_have_role_text_and_tool_calls(home: Path, work: Path) -> None:
    seen: list[list[Message]] = []

    def route(call: ModelCall) -> str | Reply:
        seen.append(list(call.messages))
        if len(call.messages) == 1:
            return Reply(text="looking", tool_calls=[ToolCall("ls", {})])
        return "done"

    async with piagents.Runtime(home=home, model=FunctionModel(route)) as rt:
        root = await rt.open_root(cwd=work)
        await root.prompt("list")

    user, assistant, result = seen[-1]
    assert (user.role, user.text, user.tool_calls) == ("user", "list", [])
    assert (assistant.role, assistant.text) == ("assistant", "looking")
    assert [(c.name, c.args) for c in assistant.tool_calls] == [("ls", {})]
    assert result.role == "toolResult" and result.tool_calls == []


async def test_a_root_is_offered_the_seven_built_in_tools_and_agent(home: Path, work: Path) -> None:
    rec = Recorder()
    async with piagents.Runtime(home=home, model=FunctionModel(rec)) as rt:
        root = await rt.open_root(cwd=work)
        await root.prompt("hi")

    assert len(rec.calls[0].tools) == 8
    assert set(rec.calls[0].tools) == BUILT_IN_TOOLS | {"agent"}


async def test_tools_narrow_what_a_root_is_offered(home: Path, work: Path) -> None:
    rec = Recorder()
    async with piagents.Runtime(home=home, model=FunctionModel(rec), tools=["read", "ls"]) as rt:
        root = await rt.open_root(cwd=work)
        await root.prompt("hi")
        not_offered = await root.call_tool("bash", {"command": "echo no"})

    assert sorted(rec.calls[0].tools) == ["ls", "read"]
    assert not_offered.is_error


async def test_the_system_prompt_can_be_replaced_and_extended(home: Path, work: Path) -> None:
    rec = Recorder()
    async with piagents.Runtime(
        home=home,
        model=FunctionModel(rec),
        system_prompt="You are TEST-BOT.",
        append_system_prompt="EXTRA-RULE",
    ) as rt:
        root = await rt.open_root(cwd=work)
        await root.prompt("hi")

    assert rec.calls[0].system_prompt.startswith("You are TEST-BOT.")
    assert "EXTRA-RULE" in rec.calls[0].system_prompt


@pytest.mark.parametrize("custom", [None, "You are TEST-BOT."], ids=["default", "replaced"])
async def test_agents_md_or_claude_md_of_each_directory_down_to_the_cwd_reach_the_prompt(
    home: Path, tmp_path: Path, custom: str | None
) -> None:
    # What the README says: the home's AGENTS.md, then per directory AGENTS.md, else
    # CLAUDE.md, outermost first; kept when --system-prompt replaces the default body.
    project = tmp_path / "project"
    package = project / "package"
    package.mkdir(parents=True)
    (project / "AGENTS.md").write_text("OUTER-AGENTS")
    (project / "CLAUDE.md").write_text("OUTER-CLAUDE")  # shadowed by AGENTS.md beside it
    (package / "CLAUDE.md").write_text("INNER-CLAUDE")
    (home / "AGENTS.md").write_text("HOME-AGENTS")
    rec = Recorder()

    async with piagents.Runtime(home=home, model=FunctionModel(rec), system_prompt=custom) as rt:
        root = await rt.open_root(cwd=package)
        await root.prompt("hi")

    prompt = rec.calls[0].system_prompt
    assert "OUTER-AGENTS" in prompt and "INNER-CLAUDE" in prompt
    assert prompt.index("OUTER-AGENTS") < prompt.index("INNER-CLAUDE")
    assert prompt.index("HOME-AGENTS") < prompt.index("OUTER-AGENTS")
    assert "OUTER-CLAUDE" not in prompt


# ---- call_tool -----------------------------------------------------------------------


async def test_call_tool_runs_built_in_tools_as_the_model_would(home: Path, work: Path) -> None:
    async with piagents.Runtime(home=home, model=FunctionModel(Recorder())) as rt:
        root = await rt.open_root(cwd=work)
        wrote = await root.call_tool("write", {"path": "sub/hello.txt", "content": "hi\n"})
        listed = await root.call_tool("ls", {})
        read = await root.call_tool("read", {"path": "sub/hello.txt"})
        ran = await root.call_tool("bash", {"command": "cat sub/hello.txt && echo done"})

    assert (work / "sub" / "hello.txt").read_text() == "hi\n"
    for res in (wrote, listed, read, ran):
        assert isinstance(res.text, str)
        assert res.is_error is False
        json.dumps(res.details)  # JSON-serialisable
    assert "sub/" in listed.text
    assert "hi" in read.text
    assert "hi" in ran.text and "done" in ran.text


async def test_call_tool_reports_a_failing_command_as_an_error(home: Path, work: Path) -> None:
    async with piagents.Runtime(home=home, model=FunctionModel(Recorder())) as rt:
        root = await rt.open_root(cwd=work)
        res = await root.call_tool("bash", {"command": "echo oops >&2; exit 3"})

    assert res.is_error
    assert "oops" in res.text


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("no_such_tool", {}),
        ("read", {}),
        ("read", {"path": 42}),
        ("write", {"path": "x"}),
        ("bash", {"command": "ls", "bogus": True}),
        ("edit", {"path": "missing.txt", "oldText": "a", "newText": "b"}),
        ("read", {"path": "does/not/exist.txt"}),
        ("ls", None),
        ("ls", ["."]),
        ("agent", {}),
        ("agent", {"action": "no-such-action"}),
    ],
)
async def test_a_malformed_call_comes_back_as_an_error_and_never_raises(
    home: Path, work: Path, name: str, args: Any
) -> None:
    async with piagents.Runtime(home=home, model=FunctionModel(Recorder())) as rt:
        root = await rt.open_root(cwd=work)
        res = await root.call_tool(name, args)

    assert res.is_error is True
    assert isinstance(res.text, str) and res.text


# ---- sessions and leases -------------------------------------------------------------


async def test_a_second_runtime_cannot_open_a_session_the_first_holds(
    home: Path, work: Path
) -> None:
    async with piagents.Runtime(home=home, model=FunctionModel(Recorder())) as first:
        root = await first.open_root(cwd=work)
        async with piagents.Runtime(home=home, model=FunctionModel(Recorder())) as second:
            with pytest.raises(SessionInUse) as info:
                await second.open_root(session=root.id)

    assert info.value.session_id == root.id
    assert root.id in str(info.value)
    assert f"pid {info.value.holder.pid}" in str(info.value)


async def test_a_second_runtime_can_open_the_session_once_the_first_closes(
    home: Path, work: Path, stored: dict[str, Any] | None
) -> None:
    rec = Recorder("two")
    async with piagents.Runtime(home=home, model=FunctionModel(rec), settings=stored) as second:
        async with piagents.Runtime(
            home=home, model=FunctionModel(Recorder("one")), settings=stored
        ) as first:
            root = await first.open_root(cwd=work)
            await root.prompt("hello")
            with pytest.raises(SessionInUse):
                await second.open_root(session=root.id)

        reopened = await second.open_root(session=root.id)
        assert await reopened.prompt("again") == "two"

    assert reopened.id == root.id
    assert [m.text for m in rec.calls[0].messages] == ["hello", "one", "again"]


async def test_reopening_a_session_continues_its_history(
    home: Path, work: Path, stored: dict[str, Any] | None
) -> None:
    first = FunctionModel(Recorder("first answer"))
    async with piagents.Runtime(home=home, model=first, settings=stored) as rt:
        root = await rt.open_root(cwd=work)
        await root.prompt("first question")

    rec = Recorder("second answer")
    async with piagents.Runtime(home=str(home), model=FunctionModel(rec), settings=stored) as rt:
        again = await rt.open_root(session=root.id)
        answer = await again.prompt("second question")

    assert again.id == root.id
    assert again.cwd == root.cwd
    assert answer == "second answer"
    assert [(m.role, m.text) for m in rec.calls[0].messages] == [
        ("user", "first question"),
        ("assistant", "first answer"),
        ("user", "second question"),
    ]


async def test_a_postgresql_store_holds_everything_and_the_home_no_store_file(
    home: Path, work: Path, postgres_url: str
) -> None:
    settings = {"store": postgres_url}
    async with piagents.Runtime(
        home=home, model=FunctionModel(Recorder()), settings=settings
    ) as rt:
        root = await rt.open_root(cwd=work, name="lead")
        await root.prompt("hello")
        assert rt.store.location == location_of(postgres_url)

    assert not (home / "store.db").exists()
    store = PostgresStore(postgres_url)
    try:
        assert [s.name for s in store.list_sessions(roots_only=True)] == ["lead"]
        assert store.lease_of(root.id) is None  # released when the runtime closed
        assert [m.text for m in store.context_items(root.id)[0]] == ["hello", "the answer"]
    finally:
        store.close()


async def test_a_store_setting_that_is_not_a_postgresql_url_stops_the_runtime(home: Path) -> None:
    with pytest.raises(SettingsError, match="store: unknown store 'mysql'"):
        piagents.Runtime(home=home, settings={"store": "mysql://db/agents"})


async def test_opening_the_same_session_twice_in_one_runtime_gives_the_same_agent(
    home: Path, work: Path
) -> None:
    async with piagents.Runtime(home=home, model=FunctionModel(Recorder())) as rt:
        root = await rt.open_root(cwd=work)

        assert await rt.open_root(session=root.id) is root


async def test_opening_an_unknown_session_raises_session_not_found(home: Path) -> None:
    async with piagents.Runtime(home=home, model=FunctionModel(Recorder())) as rt:
        with pytest.raises(SessionNotFound):
            await rt.open_root(session="no-such-session")


async def test_a_model_given_to_the_runtime_answers_for_a_reopened_session(
    home: Path, work: Path
) -> None:
    async with piagents.Runtime(home=home, model="openai/gpt-5") as rt:
        root = await rt.open_root(cwd=work)  # recorded at once, never prompted: no key needed

    async with piagents.Runtime(home=home, model=FunctionModel(Recorder("from b"), "b")) as rt:
        again = await rt.open_root(session=root.id)
        answer = await again.prompt("hello")
        record = rt.store.get_session(root.id)

    assert answer == "from b"
    assert str(again.model) == "faux/b"
    assert record is not None and record.model == "faux/b"


async def test_a_reopened_session_saved_with_one_faux_model_runs_on_another(
    home: Path, work: Path
) -> None:
    async with piagents.Runtime(home=home, model=FunctionModel(Recorder("from a"), "a")) as rt:
        root = await rt.open_root(cwd=work)
        await root.prompt("first")

    async with piagents.Runtime(home=home, model=FunctionModel(Recorder("from b"), "b")) as rt:
        again = await rt.open_root(session=root.id)

        assert str(again.model) == "faux/b"
        assert await again.prompt("second") == "from b"


async def test_a_reopened_session_keeps_its_saved_model_when_none_is_given(
    home: Path, work: Path
) -> None:
    async with piagents.Runtime(home=home, model="openai/gpt-5") as rt:
        root = await rt.open_root(cwd=work)

    settings = {"defaultModel": "anthropic/claude-sonnet-4-5"}
    async with piagents.Runtime(home=home, settings=settings) as rt:
        again = await rt.open_root(session=root.id)

    assert str(again.model) == "openai/gpt-5"


async def test_a_thinking_level_given_to_the_runtime_applies_to_a_reopened_session(
    home: Path, work: Path
) -> None:
    async with piagents.Runtime(home=home, model=FunctionModel(Recorder()), thinking="low") as rt:
        root = await rt.open_root(cwd=work)

    async with piagents.Runtime(home=home, model=FunctionModel(Recorder()), thinking="high") as rt:
        again = await rt.open_root(session=root.id)
    async with piagents.Runtime(home=home, model=FunctionModel(Recorder())) as rt:
        kept = await rt.open_root(session=root.id)

    assert again.thinking == "high"
    assert kept.thinking == "high"  # recorded with the session


async def test_owned_agents_of_a_reopened_tree_run_on_the_runtimes_model(
    home: Path,
    work: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    stored: dict[str, Any] | None,
) -> None:
    (tmp_path / "runtime_routes_owned.py").write_text("def r(call):\n    return 'from a'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    owned = "faux/runtime_routes_owned:r"
    async with piagents.Runtime(home=home, model=owned, settings=stored) as rt:
        root = await rt.open_root(cwd=work)
        spawned = await root.call_tool(
            "agent", {"action": "spawn", "name": "w", "message": "first"}
        )
        assert not spawned.is_error, spawned.text
        first = await root.call_tool("agent", {"action": "wait", "timeout": 10})
        assert "from a" in first.text

    rec = Recorder("from b")
    async with piagents.Runtime(home=home, model=FunctionModel(rec, "b"), settings=stored) as rt:
        again = await rt.open_root(session=root.id)
        sent = await again.call_tool("agent", {"action": "send", "target": "w", "message": "more"})
        assert not sent.is_error, sent.text
        res = await again.call_tool("agent", {"action": "wait", "target": "w", "timeout": 10})
        child = rt.store.get_session(spawned.details["id"])

    assert "from b" in res.text
    assert [c.agent_name for c in rec.calls] == ["w"]
    assert child is not None and child.model == "faux/b"


async def test_a_root_holds_its_lease_while_open_and_closing_releases_it(
    home: Path, work: Path
) -> None:
    async with piagents.Runtime(home=home, model=FunctionModel(Recorder())) as rt:
        root = await rt.open_root(cwd=work)
        await root.prompt("hi")
        pid, host, token = lease_columns(home, root.id)
        assert pid is not None and host and token

    assert lease_columns(home, root.id) == (None, None, None)
    store = SQLiteStore(home / "store.db")
    try:
        assert store.lease_of(root.id) is None
    finally:
        store.close()


async def test_a_runtime_that_closes_while_a_turn_runs_releases_its_lease(
    home: Path, work: Path
) -> None:
    started = asyncio.Event()

    async def stuck(call: ModelCall) -> str:
        started.set()
        await asyncio.sleep(60)  # a turn still running when the runtime closes
        return "never"

    async with piagents.Runtime(
        home=home, model=FunctionModel(stuck), settings={"pi-agents": {"abortTimeoutMs": 500}}
    ) as rt:
        root = await rt.open_root(cwd=work)
        root.send("take your time")
        await asyncio.wait_for(started.wait(), 5)

    assert lease_columns(home, root.id) == (None, None, None)


async def test_latest_session_is_the_newest_root_in_that_directory(
    home: Path, work: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    async with piagents.Runtime(home=home, model=FunctionModel(Recorder())) as rt:
        older = await rt.open_root(cwd=work)
        await older.prompt("old")
        newer = await rt.open_root(cwd=work)
        await newer.prompt("new")
        other = await rt.open_root(cwd=elsewhere)
        await other.prompt("elsewhere")

        assert rt.latest_session(work) == newer.id
        assert rt.latest_session(str(elsewhere)) == other.id
        assert rt.latest_session(tmp_path) is None


# ---- settings ------------------------------------------------------------------------


async def test_settings_json_in_home_is_read_and_settings_merge_over_it(home: Path) -> None:
    (home / "settings.json").write_text(
        json.dumps(
            {
                "toolExecution": "sequential",
                "pi-agents": {"maxConcurrent": 2, "maxOutstanding": 5, "abortTimeoutMs": 700},
            }
        )
    )

    rt = piagents.Runtime(
        home=home,
        model=FunctionModel(Recorder()),
        settings={"pi-agents": {"maxConcurrent": 4}},
    )

    assert rt.warnings == ()
    assert rt.settings.tool_execution == "sequential"
    agents = rt.settings.agents
    assert (agents.max_concurrent, agents.max_outstanding, agents.abort_timeout_ms) == (4, 5, 700)


async def test_a_broken_settings_file_gives_warnings_not_errors(home: Path, work: Path) -> None:
    path = home / "settings.json"
    path.write_bytes(b'{"pi-agents": {"maxConcurrent": "many"}, "nope": 1}')

    async with piagents.Runtime(home=home, model=FunctionModel(Recorder("ok"))) as rt:
        root = await rt.open_root(cwd=work)
        answer = await root.prompt("hi")

    assert answer == "ok"
    assert len(rt.warnings) == 2
    assert all(str(path) in w for w in rt.warnings)
    assert path.read_bytes() == b'{"pi-agents": {"maxConcurrent": "many"}, "nope": 1}'


async def test_settings_default_model_is_used_without_a_model_argument(
    home: Path, work: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "runtime_routes_default.py").write_text(
        "def r(call):\n    return 'from settings'\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    (home / "settings.json").write_text(
        json.dumps({"defaultModel": "faux/runtime_routes_default:r"})
    )

    async with piagents.Runtime(home=home) as rt:
        root = await rt.open_root(cwd=work)
        answer = await root.prompt("hi")

    assert answer == "from settings"
    assert str(root.model) == "faux/runtime_routes_default:r"


async def test_using_the_store_before_opening_the_runtime_is_a_clear_error(home: Path) -> None:
    rt = piagents.Runtime(home=home, model=FunctionModel(Recorder()))

    with pytest.raises(RuntimeError, match="async with"):
        _ = rt.store


async def test_an_error_raised_inside_async_with_comes_out_as_itself(home: Path) -> None:
    with pytest.raises(KeyError):
        async with piagents.Runtime(home=home, model=FunctionModel(Recorder())):
            raise KeyError("mine")


async def test_each_root_gets_the_face_chosen_for_it_or_by_settings(home: Path) -> None:
    async with piagents.Runtime(home=home, model=FunctionModel(Recorder())) as rt:
        lead = await rt.open_root(cwd=home, agent_api="supervision")
        plain = await rt.open_root(cwd=home, agent_api="agents")
        with pytest.raises(ValueError, match="unknown agent API 'both'"):
            await rt.open_root(cwd=home, agent_api="both")
        assert lead.loop.tools["agent"].parameters["properties"]["action"]["enum"][1] == "delegate"
        assert plain.loop.tools["agent"].parameters["properties"]["action"]["enum"][0] == "spawn"
    settings = {"pi-agents": {"agentApi": "supervision"}}
    async with piagents.Runtime(
        home=home, model=FunctionModel(Recorder()), settings=settings
    ) as rt:
        root = await rt.open_root(cwd=home)
        assert "delegate" in root.loop.tools["agent"].parameters["properties"]["action"]["enum"]
        again = await rt.open_root(session=plain.id)  # a saved choice is kept
        assert "spawn" in again.loop.tools["agent"].parameters["properties"]["action"]["enum"]


async def test_invalid_supervision_settings_stop_the_runtime_naming_the_key(home: Path) -> None:
    with pytest.raises(SettingsError, match=r"pi-agents\.spawnPlacement"):
        piagents.Runtime(
            home=home,
            model=FunctionModel(Recorder()),
            settings={"pi-agents": {"spawnPlacement": "moon"}},
        )


async def test_call_tool_details_are_always_a_json_serialisable_dict(home: Path) -> None:
    import json

    async with piagents.Runtime(home=home, model=FunctionModel(Recorder())) as rt:
        root = await rt.open_root(cwd=home)
        for name, args in [
            ("write", {"path": "a.txt", "content": "x"}),
            ("ls", {}),
            ("read", {"path": "missing.txt"}),
            ("agent", {"action": "send", "target": "nobody", "message": "x"}),
            ("nope", {}),
        ]:
            res = await root.call_tool(name, args)
            assert isinstance(res.details, dict)
            json.dumps(res.details)


def test_a_worker_is_given_the_options_not_in_the_homes_settings_file(home: Path) -> None:
    assert piagents.Runtime(home).worker_options() == {}
    rt = piagents.Runtime(
        home,
        model="openai/gpt-5",
        thinking="high",
        settings={"pi-agents": {"abortTimeoutMs": 900}},
        tools=["read"],
        system_prompt="Be brief.",
        append_system_prompt="RULES: none",
    )
    assert rt.worker_options() == {
        "settings": {"pi-agents": {"abortTimeoutMs": 900}},
        "tools": ["read"],
        "systemPrompt": "Be brief.",
        "appendSystemPrompt": "RULES: none",
        "thinking": "high",
    }


async def test_an_unloaded_agent_is_freed_at_once_not_by_a_later_collection(
    home: Path, work: Path
) -> None:
    import gc
    import weakref

    gc.disable()  # only reference counting frees it
    try:
        async with piagents.Runtime(home, model=FunctionModel(lambda call: "ok")) as rt:
            root = await rt.open_root(cwd=work)
            await root.prompt("hi")
            session = weakref.ref(root.session)
        with pytest.raises(RuntimeError, match="the agent is closed"):
            await root.call_tool("agent", {"action": "list"})
        del root
        assert session() is None
    finally:
        gc.enable()
