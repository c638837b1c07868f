"""The embedded model's worked examples: which are shown for which tools (no model needed)."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import jsonschema
import pytest

import piagents
from piagents.agents import texts
from piagents.agents.tool import parameters as agent_parameters
from piagents.ai.faux import FunctionModel, ModelCall
from piagents.ai.local_examples import agent_face, examples, face
from piagents.ai.local_format import NARROWED, NO_CALLS, chatml
from piagents.ai.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from piagents.ai.provider import ToolSpec
from piagents.programs import calls as program_calls
from piagents.programs import texts as program_texts
from piagents.supervision import texts as supervision_texts
from piagents.supervision.requests import parameters as supervision_parameters
from piagents.supervision.requests import parse_request

AGENT = ToolSpec("agent", "Create, message, and coordinate Agents.", agent_parameters())
SUPERVISION = ToolSpec("agent", supervision_texts.DESCRIPTION, supervision_parameters())
READ = ToolSpec(
    "read",
    "Read the contents of a file.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
ASK_OWNER = ToolSpec(
    "ask_owner",
    supervision_texts.ASK_OWNER_DESCRIPTION,
    {"type": "object", "properties": {"question": {"type": "string"}}, "required": ["question"]},
)
PROGRAM = ToolSpec("program", program_texts.description(), program_calls.parameters())
OTHER_AGENT = ToolSpec(
    "agent",
    "Someone else's agent tool.",
    {"type": "object", "properties": {"action": {"type": "string", "enum": ["run", "stop"]}}},
)


def test_the_face_is_read_from_the_actions_the_agent_tool_offers() -> None:
    assert agent_face([READ, AGENT]) == "agents"
    assert agent_face([READ, SUPERVISION]) == "supervision"
    assert agent_face([READ, ASK_OWNER]) == "none"
    assert agent_face([OTHER_AGENT]) == "none"
    assert agent_face([]) == "none"


@pytest.mark.parametrize("tool", [AGENT, SUPERVISION], ids=["agents", "supervision"])
def test_every_example_call_is_one_the_offered_agent_tool_accepts(tool: ToolSpec) -> None:
    calls = [
        c for m in examples([READ, tool]) if isinstance(m, AssistantMessage) for c in m.tool_calls
    ]

    assert calls
    for call in calls:
        assert call.name == "agent"
        jsonschema.validate(call.args, tool.parameters)
        if tool is SUPERVISION:
            parse_request(call.args)  # the face's own reading, stricter than the schema


def test_one_faces_examples_are_never_shown_with_the_other_faces_tool() -> None:
    supervision = chatml("", examples([READ, SUPERVISION]))
    agents = chatml("", examples([READ, AGENT]))

    assert '"spawn"' not in supervision and '"wait"' not in supervision
    assert "0a1b2c3d" not in supervision and "<agent-result" not in supervision
    assert '"delegate"' not in agents and "Delegated:" not in agents


@pytest.mark.parametrize("tools", [[READ], [READ, ASK_OWNER], [OTHER_AGENT]])
def test_without_a_known_agent_tool_only_questions_are_shown(tools: list[ToolSpec]) -> None:
    shown = examples(tools)

    assert not any(isinstance(m, AssistantMessage) and m.tool_calls for m in shown)
    assert NO_CALLS + "Two plus two is four." in chatml("", shown)


def test_the_agents_face_examples_show_exactly_the_texts_the_agent_tool_returns() -> None:
    shown = chatml("", examples([AGENT]))

    started = texts.spawned(texts.Shown("fox", "0a1b2c3d"), None)
    result = texts.agent_result(texts.Shown("fox", "0a1b2c3d"), "completed", "Hat.")
    assert f"<tool_response>\n{started}\n</tool_response>" in shown
    assert result in shown
    assert '{"name": "agent", "arguments": {"action": "wait"}}\n]</tool_call>' in shown


def test_the_supervision_examples_show_exactly_the_texts_the_supervision_face_returns() -> None:
    shown = examples([SUPERVISION])
    delegated = [m.text for m in shown if isinstance(m, ToolResultMessage)]
    arrived = [m.text for m in shown if isinstance(m, UserMessage) and "status=" in m.text]

    assert delegated[0] == supervision_texts.delegated(
        agent="researcher-1",
        definition="researcher",
        session="0b6e2f4c-8d1a-4e7b-9c3f-5a2d6e8b1f4a",
        request="3f9c1a7e-2b5d-4c8f-a6e1-7d4b9f2c5e8a",
    )
    assert arrived[0] == supervision_texts.terminal_result(
        agent="researcher-1",
        definition="researcher",
        session="0b6e2f4c-8d1a-4e7b-9c3f-5a2d6e8b1f4a",
        request="3f9c1a7e-2b5d-4c8f-a6e1-7d4b9f2c5e8a",
        status="completed",
        final_answer="The cache is in cache.py; store.py and api.py use it.",
    )
    assert len(delegated) == len(arrived) == 4


def test_a_lead_is_shown_two_agents_delegated_at_once_and_each_result_reported() -> None:
    shown = examples([SUPERVISION])
    replies = [m for m in shown if isinstance(m, AssistantMessage)]
    delegations = [r for r in replies if r.tool_calls]

    assert [[c.args["definition"] for c in r.tool_calls] for r in delegations] == [
        ["researcher", "generalist"],
        ["reviewer", "researcher"],
    ]
    # Each result (a message, not a tool result) is answered in prose, never by a call.
    for before, after in itertools.pairwise(shown):
        if isinstance(before, UserMessage) and "status=completed" in before.text:
            assert isinstance(after, AssistantMessage) and not after.tool_calls
    # The delegations come last (measured), and the last report names both agents.
    assert shown[-1].text == (
        "researcher-1 did: Sessions are kept in Redis for one hour and renewed on each "
        "request.\nreviewer-1 found: The login code is fine: passwords are hashed and "
        "compared in constant time."
    )
    assert "two plus two" in shown[0].text and "rain" in shown[2].text


# ---- the program face -------------------------------------------------------------


def test_the_program_face_is_chosen_whenever_the_program_tool_is_offered() -> None:
    assert face([READ, AGENT, PROGRAM]) == "program"
    assert face([PROGRAM]) == "program"  # --program-only
    assert face([READ, AGENT]) == "agents"
    assert face([READ, SUPERVISION]) == "supervision"
    assert face([READ]) == "none"


def program_runs(shown: list[Message]) -> list[tuple[ToolCall, str]]:
    """Each example `program` call with the result shown for it."""
    results = {m.tool_call_id: m.text for m in shown if isinstance(m, ToolResultMessage)}
    return [
        (c, results[c.id]) for m in shown if isinstance(m, AssistantMessage) for c in m.tool_calls
    ]


def test_the_program_examples_are_one_line_runs_the_tool_and_the_narrowed_grammar_accept() -> None:
    shown = examples([READ, AGENT, PROGRAM])
    runs = program_runs(shown)
    pattern = NARROWED["program", "code"]["pattern"]

    assert len(runs) >= 2
    for call, _ in runs:
        assert call.name == "program"
        jsonschema.validate(call.args, PROGRAM.parameters)
        request = program_calls.parse(call.args)
        assert isinstance(request, program_calls.Run) and not request.background
        assert re.fullmatch(pattern, request.code)  # one line, no braces, quotes or escapes
        assert request.code.startswith("return await asyncio.gather(agent(name='")
    # No other face's examples: no agent tool calls, no spawn IDs.
    rendered = chatml("", shown)
    assert '"spawn"' not in rendered and "<agent-result" not in rendered
    assert "Delegated:" not in rendered


def test_questions_and_an_agents_tasks_stand_between_the_programs_two_programs_last() -> None:
    shown = examples([PROGRAM])
    replies = [m for m in shown if isinstance(m, AssistantMessage)]
    asked = [m for m in shown if isinstance(m, UserMessage)]

    # Each request is answered by a call or in prose; a Program's result only in prose.
    kinds = ["call" if r.tool_calls else "prose" for r in replies]
    assert kinds == [
        "prose", "prose", "call", "prose", "prose", "call", "prose", "prose",
        "call", "prose", "call", "prose",
    ]  # fmt: skip
    wrapped = [m.text for m in asked if m.text.startswith("<agent-message")]
    assert [w.split("\n")[1] for w in wrapped] == ["Name a bird", "Say a greeting"]
    assert shown[-1].text == "river: The Nile.\nmountain: Everest."


async def test_each_program_example_shows_what_the_program_tool_returns_for_its_code(
    tmp_path: Path,
) -> None:
    shown = examples([PROGRAM])
    for n, (call, shown_result) in enumerate(program_runs(shown)):
        names = re.findall(r"agent\(name='(\w+)'\)", call.args["code"])
        answers = json.loads(shown_result.partition("\nOutput:\n")[2])
        said = dict(zip(names, answers, strict=True))

        def answer(c: ModelCall, said: dict[str, str] = said) -> str:
            return said[c.agent_name or ""]

        rt = piagents.Runtime(
            home=tmp_path / f"h{n}", model=FunctionModel(answer), tools=["+program"]
        )
        async with rt:
            root = await rt.open_root(cwd=tmp_path)
            result = await root.call_tool("program", call.args)

        assert not result.is_error
        real_time = result.text.split("\n")[1]
        assert real_time.startswith("Wall time ")
        shown_time = shown_result.split("\n")[1]
        assert result.text.replace(real_time, shown_time, 1) == shown_result
