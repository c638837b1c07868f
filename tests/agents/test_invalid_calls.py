"""Calls whose arguments break validation come back as error results and leave nothing
half-made: NaN and infinities, unpaired surrogates, deep nesting, on every tool."""

import math

import pytest
from agent_support import agent_calls, runtime, spawn, tool_results

import piagents
from piagents.testing import FunctionModel, Reply, ToolCall


def nested(depth):
    value = "x"
    for _ in range(depth):
        value = [value]
    return value


NON_FINITE = [math.nan, math.inf, -math.inf]
NUMERIC = [  # every numeric parameter of the agents face and of the built-in tools
    ("agent", {"action": "wait"}, "timeout"),
    ("agent", {"action": "wait"}, "history"),
    ("agent", {"action": "list"}, "limit"),
    ("agent", {"action": "list"}, "offset"),
    ("bash", {"command": "echo hi"}, "timeout"),
    ("read", {"path": "notes.txt"}, "offset"),
    ("read", {"path": "notes.txt"}, "limit"),
    ("ls", {}, "limit"),
    ("find", {"pattern": "*"}, "limit"),
    ("grep", {"pattern": "x"}, "context"),
    ("grep", {"pattern": "x"}, "limit"),
]
EVERY_TOOL = [
    ("agent", {"action": "list"}),
    ("bash", {"command": "echo hi"}),
    ("read", {"path": "notes.txt"}),
    ("write", {"path": "out.txt", "content": "x"}),
    ("edit", {"path": "notes.txt", "oldText": "a", "newText": "b"}),
    ("ls", {}),
    ("find", {"pattern": "*"}),
    ("grep", {"pattern": "x"}),
]


@pytest.mark.parametrize("value", NON_FINITE, ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize(("tool", "args", "field"), NUMERIC, ids=lambda v: str(v))
async def test_a_non_finite_number_is_an_error_naming_its_field(
    home, work, script, tool, args, field, value
):
    (work / "notes.txt").write_text("a\n")
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        res = await root.call_tool(tool, {**args, field: value})
    assert res.is_error
    assert (
        res.text
        == f"Invalid arguments for {tool}: field '{field}': {value} is not a finite number."
    )


@pytest.mark.parametrize(("tool", "args"), EVERY_TOOL, ids=lambda v: str(v))
async def test_arguments_nested_thousands_deep_are_an_error_not_an_exception(
    home, work, script, tool, args
):
    (work / "notes.txt").write_text("a\n")
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        res = await root.call_tool(tool, {**args, "extra": nested(5000)})
    assert res.is_error
    assert res.text == f"Invalid arguments for {tool}: values are nested deeper than 64 levels."
    assert not (work / "out.txt").exists()


@pytest.mark.parametrize("field", ["name", "message", "cwd"])
async def test_a_spawn_with_an_unpaired_surrogate_leaves_no_agent_and_frees_the_name(
    home, work, script, field
):
    args = {"action": "spawn", "name": "w", "message": "go", "cwd": str(work)}
    args[field] += "\ud800"
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        res = await root.call_tool("agent", args)
        assert res.is_error
        assert res.text.startswith(f"Invalid arguments for agent: field '{field}': the text has")
        assert rt.store.list_sessions(owner_id=root.id) == []
        assert len(rt.agents) == 1
        await spawn(root, "w")  # the name is free


async def test_a_send_with_an_unpaired_surrogate_is_an_error_and_delivers_nothing(
    home, work, script
):
    seen = []
    script.on("w", lambda call: seen.append(call.messages[-1].text) or "ok")
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        w_id = (await spawn(root, "w")).details["id"]
        await root.call_tool("agent", {"action": "wait", "timeout": 10})
        res = await root.call_tool(
            "agent", {"action": "send", "target": "w", "message": "more\udcff"}
        )
        assert res.is_error
        assert len(rt.store.inputs(recipient_ids=[w_id])) == 1
    assert len(seen) == 1 and "more" not in seen[0]


async def test_a_models_call_with_unusable_arguments_gets_an_error_and_the_run_goes_on(
    home, work, script
):
    def root_turn(call):
        results = tool_results(call)
        if not results:
            return agent_calls(
                {"action": "wait", "timeout": math.nan},
                {"action": "list", "query": nested(5000)},
                {"action": "spawn", "name": "w\ud800", "message": "go"},
            )
        return " | ".join(results)

    script.on(None, root_turn)
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        answer = await root.prompt("go")
        assert answer == (
            "Invalid arguments for agent: field 'timeout': nan is not a finite number. | "
            "Invalid arguments for agent: values are nested deeper than 64 levels. | "
            "Invalid arguments for agent: field 'name': the text has an unpaired surrogate "
            "code point, which is not valid text."
        )
        assert rt.store.list_sessions(owner_id=root.id) == []
        session = root.id
    # What was recorded can be read back and sent again.
    async with runtime(home, script) as rt:
        again = await rt.open_root(session=session)
        assert await again.prompt("again") == answer


SUPERVISION = {"pi-agents": {"spawnPlacement": "inline"}}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {"action": "delegate", "definition": "generalist", "task": "go", "timeoutMs": math.nan},
            "Field `timeoutMs`: nan is not a finite number.",
        ),
        (
            {"action": "delegate", "definition": "generalist", "task": "go\ud800"},
            "Field `task`: the text has an unpaired surrogate code point, which is not valid text.",
        ),
        (
            {"action": "delegate", "definition": "generalist", "task": "go", "cwd": "/\ud800"},
            "Field `cwd`: the text has an unpaired surrogate code point, which is not valid text.",
        ),
        (
            {"action": "steer", "agent": "x", "message": "hi", "files": nested(5000)},
            "Values are nested deeper than 64 levels.",
        ),
    ],
    ids=["nan", "task", "cwd", "deep"],
)
async def test_the_supervision_face_reports_unusable_arguments_as_invalid_requests(
    home, work, args, message
):
    model = FunctionModel(lambda call: "done")
    async with piagents.Runtime(home=home, model=model, settings=SUPERVISION) as rt:
        lead = await rt.open_root(cwd=work, agent_api="supervision")
        res = await lead.call_tool("agent", args)
        assert res.is_error
        assert res.details["error"]["category"] == "invalid_request"
        assert res.details["error"]["message"] == message
        assert res.text.startswith(f"Error [invalid_request] {args['action']}: {message}")
        assert rt.store.list_sessions(owner_id=lead.id) == []


async def test_tool_calls_a_model_makes_with_nan_do_not_run(home, work, script):
    calls = []

    def root_turn(call):
        calls.append(1)
        if len(calls) == 1:
            return Reply(
                tool_calls=[ToolCall("bash", {"command": "touch ran", "timeout": math.nan})]
            )
        return tool_results(call)[0]

    script.on(None, root_turn)
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        answer = await root.prompt("go")
    assert answer == "Invalid arguments for bash: field 'timeout': nan is not a finite number."
    assert not (work / "ran").exists()
