"""Which tools an Agent is offered: `program` only when chosen (defaultTools, --tools,
`+program`), and `--program-only` offering it alone with the others inside it."""

import piagents
from piagents.programs import texts
from piagents.testing import FunctionModel
from piagents.tool_choice import ToolChoice

DEFAULTS = ["agent", "bash", "edit", "find", "grep", "ls", "read", "write"]


def offered(choice, default_tools=()):
    names = ["read", "bash", "edit", "write", "grep", "find", "ls", "agent", "program"]
    return sorted(n for n in names if choice.offers(default_tools)(n))


def test_program_is_not_offered_by_default():
    assert offered(ToolChoice()) == DEFAULTS


def test_plus_program_adds_it_to_the_defaults_from_the_command_line_or_settings():
    assert offered(ToolChoice(("+program",))) == sorted([*DEFAULTS, "program"])
    assert offered(ToolChoice(), ["+program"]) == sorted([*DEFAULTS, "program"])


def test_plus_program_on_the_command_line_adds_it_to_the_settings_defaults():
    assert offered(ToolChoice(("+program",)), ["read", "bash"]) == ["bash", "program", "read"]


def test_a_list_of_names_is_exactly_those_tools():
    assert offered(ToolChoice(("read", "program"))) == ["program", "read"]
    assert offered(ToolChoice(), ["read"]) == ["read"]
    assert offered(ToolChoice(("read",)), ["bash", "+program"]) == ["read"]


def test_no_tools_offers_none_and_program_only_adds_program():
    assert offered(ToolChoice(())) == []
    assert offered(ToolChoice((), program_only=True)) == ["program"]
    assert offered(ToolChoice(program_only=True)) == sorted([*DEFAULTS, "program"])


def rt(home, **options):
    return piagents.Runtime(home=home, model=FunctionModel(lambda call: "ok"), **options)


async def test_settings_default_tools_offer_program_to_a_root(home, work):
    async with rt(home, settings={"defaultTools": ["+program"]}) as runtime:
        root = await runtime.open_root(cwd=work)
        assert "program" in root.loop.tools
    async with rt(home) as runtime:
        root = await runtime.open_root(cwd=work)
        assert "program" not in root.loop.tools


async def test_program_only_offers_program_alone_with_the_other_tools_in_its_description(
    home, work
):
    async with rt(home, tools=["read", "ls"], program_only=True) as runtime:
        root = await runtime.open_root(cwd=work)
        (work / "f.txt").write_text("hello")
        offered_now = list(root.loop.tools)
        tool = root.loop.tools["program"]
        code = "return await tools.read(path='f.txt')"
        res = await root.call_tool("program", {"action": "run", "code": code})
    assert offered_now == ["program"]
    assert tool.description == texts.description(
        [
            ("read", "Read file contents"),
            ("ls", "List directory contents"),
        ]
    )
    assert res.text.endswith("Output:\nhello")


async def test_an_owned_agent_of_a_program_only_caller_is_offered_program_alone(home, work):
    async with rt(home, tools=["read", "agent"], program_only=True) as runtime:
        root = await runtime.open_root(cwd=work)
        spawned = await root.call_tool(
            "program",
            {
                "action": "run",
                "code": "r = await tools.agent(action='spawn', name='w', message='hi')\nreturn r",
            },
        )
        child = next(a for a in runtime.agents.values() if a.name == "w")
        child_tools = list(child.loop.tools)
        reachable = sorted(child.loop.tools["program"].reachable)
    assert not spawned.is_error, spawned.text
    assert child_tools == ["program"]
    assert reachable == ["agent", "read"]


def test_default_tools_that_are_not_a_list_of_names_warn_and_use_the_defaults(home):
    from piagents.config import parse_settings

    settings = parse_settings({"defaultTools": "program"}, "s.json")
    assert settings.default_tools == ()
    assert settings.warnings == (
        's.json: defaultTools: expected a list of tool names, got "program"; using the default.',
    )
    assert parse_settings({"defaultTools": ["+program"]}).default_tools == ("+program",)
