"""What a managed agent is given: its definition's tools, ask_owner, and its prompt."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import piagents
from piagents.supervision.briefing import MANAGED_BASH_TIMEOUT_S
from piagents.testing import FunctionModel

SETTINGS = {"pi-agents": {"spawnPlacement": "inline"}}


@pytest.fixture
async def started(tmp_path: Path) -> Any:
    """A lead, and a `delegate` that leaves the managed agent working until the end."""
    release = asyncio.Event()

    async def model(call: Any) -> str:
        if call.agent_name:
            await release.wait()
        return "noted"

    async with piagents.Runtime(
        home=tmp_path / "home", model=FunctionModel(model), settings=SETTINGS
    ) as rt:
        work = tmp_path / "work"
        work.mkdir()
        lead = await rt.open_root(cwd=work, agent_api="supervision")

        async def delegate(definition: str) -> Any:
            result = await lead.call_tool(
                "agent", {"action": "delegate", "definition": definition, "task": "Go."}
            )
            assert not result.is_error, result.text
            g = rt.store.get_generation(result.details["request"])
            return rt.agents[g.session_id]

        yield lead, delegate
        release.set()


async def test_a_managed_agent_has_its_definitions_tools_and_ask_owner(started: Any) -> None:
    _, delegate = started
    scout = await delegate("scout")
    assert sorted(scout.loop.tools) == ["ask_owner", "find", "grep", "ls", "read"]


async def test_bash_of_a_managed_agent_waits_longer_by_default(started: Any) -> None:
    _, delegate = started
    reviewer = await delegate("reviewer")
    assert reviewer.loop.tools["bash"].default_timeout == MANAGED_BASH_TIMEOUT_S


async def test_a_delegating_definition_gets_the_agent_tool_and_its_roster(started: Any) -> None:
    _, delegate = started
    reviewer = await delegate("reviewer")
    assert "agent" in reviewer.loop.tools
    prompt = reviewer.loop.system_prompt
    roster = prompt.split("Agent definitions you can delegate to", 1)[1]
    assert "- scout (" in roster and "- researcher (" in roster
    assert "- generalist (" not in roster


async def test_a_managed_agents_prompt_is_the_coding_prompt_its_body_and_its_terms(
    started: Any,
) -> None:
    lead, delegate = started
    scout = await delegate("scout")
    prompt = scout.loop.system_prompt
    coding, _, rest = prompt.partition("\n\n")
    assert coding == lead.loop.system_prompt.partition("\n\n")[0]
    assert "You are the managed agent scout-1 (definition scout)." in rest
    assert "call ask_owner (one question per assignment)" in rest
    assert "agent" not in scout.loop.tools
    assert "Agent definitions you can delegate to" not in prompt


async def test_a_lead_is_told_the_roster_it_can_delegate_to(started: Any) -> None:
    lead, _ = started
    prompt = lead.loop.system_prompt
    assert "Agent definitions you can delegate to (a snapshot; call list" in prompt
    for name in ("generalist", "implementer", "researcher", "reviewer", "scout"):
        assert f"\n- {name} (bundled" in prompt
