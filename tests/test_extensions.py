import pytest

import piagents
from piagents.extensions import load_extensions
from piagents.testing import FunctionModel, Reply, ToolCall

EXTENSION = """
from piagents.harness.tools.base import ToolResult


class Shout:
    name = "shout"
    description = "Upper-case the text."
    parameters = {"type": "object", "properties": {"text": {"type": "string"}},
                  "required": ["text"], "additionalProperties": False}
    prompt_snippet = "shout text"
    prompt_guidelines = ()

    async def execute(self, args, ctx):
        return ToolResult(args["text"].upper())


def register(api):
    api.add_tool(Shout())
"""


def test_an_extension_file_adds_its_tools(tmp_path):
    (tmp_path / "ext.py").write_text(EXTENSION)
    tools, warnings = load_extensions(["ext.py"], tmp_path)
    assert [t.name for t in tools] == ["shout"] and warnings == []


def test_a_broken_extension_gives_a_warning_and_loads_nothing(tmp_path):
    (tmp_path / "bad.py").write_text("raise RuntimeError('nope')")
    tools, warnings = load_extensions(["bad.py", "missing.py"], tmp_path)
    assert tools == []
    assert warnings[0].startswith("extension bad.py: RuntimeError: nope")
    assert warnings[1].startswith("extension missing.py: FileNotFoundError")


async def test_owned_agents_get_extension_tools_their_owner_can_use(home, work):
    (home / "ext.py").write_text(EXTENSION)
    seen = {}

    def route(call):
        seen[call.agent_name] = call.tools
        if call.agent_name == "w" and len(call.messages) == 1:
            return Reply(tool_calls=[ToolCall("shout", {"text": "hi"})])
        return call.messages[-1].text

    settings = {"pi-agents": {"extensions": ["ext.py"]}}
    async with piagents.Runtime(home=home, model=FunctionModel(route), settings=settings) as rt:
        root = await rt.open_root(cwd=work)
        assert "shout" in root.tool_names
        await root.call_tool("agent", {"action": "spawn", "name": "w", "message": "go"})
        res = await root.call_tool("agent", {"action": "wait", "target": "w", "timeout": 10})
        assert res.text == "HI"
    assert "shout" in seen["w"]
    async with piagents.Runtime(
        home=home, model=FunctionModel(route), settings=settings, tools=["read", "agent"]
    ) as rt:
        root = await rt.open_root(cwd=work)
        await root.call_tool("agent", {"action": "spawn", "name": "v", "message": "go"})
        await root.call_tool("agent", {"action": "wait", "target": "v", "timeout": 10})
    assert sorted(seen["v"]) == ["agent", "read"]


def tool_source(name="shout", parameters=None, extra=""):
    parameters = parameters or (
        '{"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}'
    )
    return (
        "from piagents.harness.tools.base import ToolResult\n"
        "class T:\n"
        f"    name = {name!r}\n"
        "    description = 'A tool.'\n"
        f"    parameters = {parameters}\n"
        "    prompt_snippet = 'a tool'\n"
        "    prompt_guidelines = ()\n"
        "    async def execute(self, args, ctx):\n"
        "        return ToolResult('ran ' + self.name)\n"
        f"{extra}"
    )


def test_an_extension_that_exits_in_register_is_a_warning_not_the_end(tmp_path):
    (tmp_path / "bye.py").write_text("import sys\ndef register(api):\n    sys.exit(3)\n")
    (tmp_path / "quit.py").write_text("raise SystemExit('at import')\n")
    (tmp_path / "ext.py").write_text(EXTENSION)
    tools, warnings = load_extensions(["bye.py", "quit.py", "ext.py"], tmp_path)
    assert [t.name for t in tools] == ["shout"]
    assert warnings == [
        "extension bye.py: it tried to exit the program (SystemExit: 3); not loaded.",
        "extension quit.py: it tried to exit the program (SystemExit: at import); not loaded.",
    ]


@pytest.mark.parametrize(
    ("parameters", "problem"),
    [
        ("['not', 'a', 'dict']", "`parameters` must be a JSON schema object, got list"),
        ("{'type': 'object', 'properties': 5}", "`parameters` is not a valid JSON schema: "),
        ("{'type': 'string'}", '`parameters` must have "type": "object"'),
        ("{'type': 'object', 'default': object()}", "`parameters` is not JSON"),
    ],
)
def test_a_tool_with_bad_parameters_is_a_warning_naming_the_extension(
    tmp_path, parameters, problem
):
    source = tool_source(parameters=parameters, extra="def register(api):\n    api.add_tool(T())\n")
    (tmp_path / "bad.py").write_text(source)
    tools, warnings = load_extensions(["bad.py"], tmp_path)
    assert tools == []
    [warning] = warnings
    assert warning.startswith(f"extension bad.py: tool 'shout': {problem}")
    assert warning.endswith("; not loaded.")


@pytest.mark.parametrize("name", ["agent", "read", "bash", "ask_owner"])
def test_an_extension_cannot_shadow_a_built_in_tool(tmp_path, name):
    source = tool_source(name=name, extra="def register(api):\n    api.add_tool(T())\n")
    (tmp_path / "shadow.py").write_text(source)
    tools, warnings = load_extensions(["shadow.py"], tmp_path)
    assert tools == []
    assert warnings == [
        f"extension shadow.py: tool {name!r}: the name of a built-in tool, which an "
        "extension cannot replace; not loaded."
    ]


def test_two_extensions_cannot_give_the_same_tool(tmp_path):
    (tmp_path / "a.py").write_text(EXTENSION)
    (tmp_path / "b.py").write_text(EXTENSION)
    tools, warnings = load_extensions(["a.py", "b.py"], tmp_path)
    assert [t.name for t in tools] == ["shout"]
    assert warnings == [
        "extension b.py: tool 'shout': already given by extension a.py; not loaded."
    ]


async def test_the_built_in_agent_tool_stays_and_bad_tools_never_reach_a_call(home, work):
    (home / "shadow.py").write_text(
        tool_source(name="agent", extra="def register(api):\n    api.add_tool(T())\n")
    )
    (home / "bad.py").write_text(
        tool_source(
            name="broken",
            parameters="{'type': 'object', 'properties': 5}",
            extra="def register(api):\n    api.add_tool(T())\n",
        )
    )
    settings = {"pi-agents": {"extensions": ["shadow.py", "bad.py"]}}
    async with piagents.Runtime(
        home=home, model=FunctionModel(lambda call: "hi"), settings=settings
    ) as rt:
        root = await rt.open_root(cwd=work)
        assert "broken" not in root.tool_names
        res = await root.call_tool("agent", {"action": "list"})
        assert not res.is_error and not res.text.startswith("ran ")
        assert len(rt.warnings) == 2 and all(w.startswith("extension ") for w in rt.warnings)


async def test_a_tool_that_exits_or_returns_nonsense_fails_its_call_only(tmp_path, work):
    source = (
        "import sys\n"
        "from piagents.harness.tools.base import ToolResult\n"
        "class Exit:\n"
        "    name = 'bye'\n"
        "    description = 'Exits.'\n"
        "    parameters = {'type': 'object'}\n"
        "    async def execute(self, args, ctx):\n"
        "        sys.exit(1)\n"
        "class Sync:\n"
        "    name = 'sync'\n"
        "    description = 'Not async, returns a string.'\n"
        "    parameters = {'type': 'object'}\n"
        "    def execute(self, args, ctx):\n"
        "        return 'plain'\n"
        "def register(api):\n"
        "    api.add_tool(Exit())\n"
        "    api.add_tool(Sync())\n"
    )
    (tmp_path / "rude.py").write_text(source)
    settings = {"pi-agents": {"extensions": [str(tmp_path / "rude.py")]}}
    async with piagents.Runtime(
        home=tmp_path / "home", model=FunctionModel(lambda call: "hi"), settings=settings
    ) as rt:
        root = await rt.open_root(cwd=work)
        bye = await root.call_tool("bye", {})
        assert bye.is_error and "tried to exit the program (SystemExit: 1)" in bye.text
        sync = await root.call_tool("sync", {})
        assert sync.is_error and "returned str, not a ToolResult" in sync.text
        assert await root.prompt("still here?") == "hi"
