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
