"""A Program's script API in the sandbox: `tools.*`, `agent()` handles, `text()`,
`store()` / `load()`, `ToolError` and `asyncio.gather(..., return_exceptions=True)`,
each forwarded to one method of the host."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from piagents.programs.sandbox import Limits, SandboxPool, ScriptOutcome, run_script
from piagents.programs.script_api import (
    ToolError,
    script_externals,
    script_prelude,
)
from piagents.programs.script_values import JsonValue
from support import TIMEOUT_S, until


class Host:
    """A ScriptHost that records what the script asked for."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, JsonValue]]] = []
        self.created: list[dict[str, JsonValue]] = []
        self.sent: list[tuple[str, str, str, JsonValue]] = []
        self.aborted: list[str] = []
        self.texts: list[str] = []
        self.stored: dict[str, JsonValue] = {}
        self.answers: dict[str, asyncio.Event] = {}

    async def call_tool(self, name: str, args: dict[str, JsonValue]) -> JsonValue:
        self.calls.append((name, args))
        if name == "bash":
            return {"output": "ok\n", "exit_code": 0}
        if args.get("path") == "missing":
            raise ToolError(f"{name}: no such file: missing")
        return f"{name} of {args.get('path')}"

    def create_agent(self, options: dict[str, JsonValue]) -> dict[str, JsonValue]:
        self.created.append(options)
        name = options.get("name") or f"agent-{len(self.created)}"
        return {"id": f"id-{name}", "name": name}

    async def send(
        self, agent_id: str, message: str, deliver_as: str, schema: JsonValue
    ) -> JsonValue:
        self.sent.append((agent_id, message, deliver_as, schema))
        if agent_id in self.answers:
            await self.answers[agent_id].wait()
        if message == "fail":
            raise ToolError(f"the input to {agent_id} was aborted")
        return 3 if schema is not None else f"{agent_id} answered {message}"

    async def abort(self, agent_id: str) -> None:
        self.aborted.append(agent_id)

    def text(self, value: str) -> None:
        self.texts.append(value)

    def store(self, key: str, value: JsonValue) -> None:
        self.stored[key] = value

    def load(self, key: str) -> JsonValue:
        return self.stored.get(key)


@pytest.fixture
async def pool() -> AsyncIterator[SandboxPool]:
    async with SandboxPool() as pool:
        yield pool


async def program(
    pool: SandboxPool, host: Host, code: str, tools: tuple[str, ...] = ("bash", "read")
) -> ScriptOutcome:
    return await asyncio.wait_for(
        run_script(
            code,
            pool=pool,
            externals=script_externals(host),
            limits=Limits(),
            on_print=lambda text: None,
            prelude=script_prelude(tools),
        ),
        TIMEOUT_S,
    )


async def test_tools_calls_the_callers_tool_with_its_keyword_arguments(pool: SandboxPool) -> None:
    host = Host()

    outcome = await program(
        pool,
        host,
        'r = await tools.bash(command="pytest -q")\n'
        'text = await tools.read(path="README.md", offset=2)\n'
        'return [r["exit_code"], r["output"], text]',
    )

    assert outcome.value == [0, "ok\n", "read of README.md"]
    assert host.calls == [
        ("bash", {"command": "pytest -q"}),
        ("read", {"path": "README.md", "offset": 2}),
    ]


async def test_a_tool_the_script_was_not_given_is_an_attribute_error(pool: SandboxPool) -> None:
    outcome = await program(pool, Host(), 'await tools.write(path="x")', tools=("read",))

    assert outcome.error is not None
    assert (
        outcome.error.splitlines()[-1] == "AttributeError: 'tools' object has no attribute 'write'"
    )
    assert outcome.error.splitlines()[1] == '  File "<program>", line 1, in <module>'


async def test_a_failed_tool_call_raises_tool_error_which_the_script_can_catch(
    pool: SandboxPool,
) -> None:
    outcome = await program(
        pool,
        Host(),
        'try:\n    await tools.read(path="missing")\nexcept ToolError as e:\n    return str(e)',
    )

    assert outcome.value == "read: no such file: missing"


async def test_an_uncaught_tool_error_fails_the_program_at_the_scripts_line(
    pool: SandboxPool,
) -> None:
    outcome = await program(pool, Host(), 'x = 1\nawait tools.read(path="missing")')

    assert outcome.error == (
        "Traceback (most recent call last):\n"
        '  File "<program>", line 2, in <module>\n'
        '    await tools.read(path="missing")\n'
        "ToolError: read: no such file: missing"
    )


async def test_agent_handles_send_and_abort_through_the_host(pool: SandboxPool) -> None:
    host = Host()

    outcome = await program(
        pool,
        host,
        'w = agent(name="tests", cwd="pkg")\n'
        'answer = await w.send("Run the tests")\n'
        'count = await w.send("Count them", schema={"type": "integer"})\n'
        'none = await w.send("FYI", deliver_as="write")\n'
        "await w.abort()\n"
        "return [w.id, w.name, answer, count, agent().name]",
    )

    assert outcome.value == ["id-tests", "tests", "id-tests answered Run the tests", 3, "agent-2"]
    assert host.created == [{"name": "tests", "cwd": "pkg"}, {}]
    assert host.sent == [
        ("id-tests", "Run the tests", "followUp", None),
        ("id-tests", "Count them", "followUp", {"type": "integer"}),
        ("id-tests", "FYI", "write", None),
    ]
    assert host.aborted == ["id-tests"]


async def test_gathered_sends_run_concurrently(pool: SandboxPool) -> None:
    host = Host()
    host.answers = {"id-a": asyncio.Event(), "id-b": asyncio.Event()}
    running = asyncio.ensure_future(
        program(
            pool,
            host,
            'a, b = agent(name="a"), agent(name="b")\n'
            'return await asyncio.gather(a.send("x"), b.send("y"))',
        )
    )
    # Each answer is held until both inputs have been sent.
    await until(lambda: len(host.sent) == 2, "both sends in flight")
    for event in host.answers.values():
        event.set()

    assert (await running).value == ["id-a answered x", "id-b answered y"]


async def test_gather_with_return_exceptions_returns_failures_in_place_on_the_same_lines(
    pool: SandboxPool,
) -> None:
    outcome = await program(
        pool,
        Host(),
        "w = agent()\n"
        "results = await asyncio.gather(\n"
        '    w.send("fail"), tools.read(path="a"), return_exceptions=True\n'
        ")\n"
        "kinds = [type(r).__name__ for r in results]\n"
        "assert kinds == ['RuntimeError', 'str'], kinds\n"
        "raise ValueError(str(results[0]))",
    )

    assert outcome.error is not None
    assert '  File "<program>", line 7, in <module>' in outcome.error
    assert outcome.error.splitlines()[-1] == "ValueError: the input to id-agent-1 was aborted"


async def test_an_uncaught_failure_of_a_gathered_call_points_at_the_gather_as_written(
    pool: SandboxPool,
) -> None:
    outcome = await program(
        pool,
        Host(),
        "w = agent()\n\n"
        'await asyncio.gather(w.send("ok"), w.send("fail"), return_exceptions=False)',
    )

    assert outcome.error == (
        "Traceback (most recent call last):\n"
        '  File "<program>", line 3, in <module>\n'
        '    await asyncio.gather(w.send("ok"), w.send("fail"), return_exceptions=False)\n'
        "ToolError: the input to id-agent-1 was aborted"
    )


async def test_text_store_and_load_reach_the_host_without_await(pool: SandboxPool) -> None:
    host = Host()

    outcome = await program(
        pool,
        host,
        'text("progress")\ntext(42)\nstore("k", {"n": [1, 2]})\nreturn load("k"), load("nope")',
    )

    assert outcome.value == [{"n": [1, 2]}, None]
    assert host.texts == ["progress", "42"]
    assert host.stored == {"k": {"n": [1, 2]}}


async def test_asyncio_json_and_re_need_no_import(pool: SandboxPool) -> None:
    outcome = await program(
        pool,
        Host(),
        'await asyncio.sleep(0)\nreturn json.dumps(re.findall(r"\\d", "a1b2"))',
    )

    assert outcome.value == '["1", "2"]'


@pytest.mark.parametrize("name", ["not-a-name", "class", "_private"])
def test_a_tool_name_a_script_cannot_call_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match="tool name"):
        script_prelude(["read", name])
