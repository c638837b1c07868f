"""A lead opened in a project with untrusted definitions asks whether to trust it."""

from __future__ import annotations

import pytest
from tui_support import runtime, started, until

from piagents.supervision.trust import is_trusted
from piagents.tui.app import PiAgentsApp
from piagents.tui.trust_screen import TrustScreen, trust_question


def test_the_question_names_the_project_and_its_definitions():
    assert trust_question("/src/app", ["fixer", "linter"]) == (
        "The project /src/app has agent definitions of its own (fixer, linter) in "
        ".pi-agents/agents/. They are not used until you trust this project: they set "
        "managed agents' instructions and tools.\n\nTrust this project?"
    )


def project_with_definitions(work):
    folder = work / ".pi-agents" / "agents"
    folder.mkdir(parents=True)
    (folder / "fixer.md").write_text("---\nname: fixer\ndescription: fixes\n---\nFix.\n")
    return work


def lead_app(home, work, script, api="supervision") -> PiAgentsApp:
    rt = runtime(home, script, spawnPlacement="inline")
    return PiAgentsApp(rt, lambda r: r.open_root(cwd=work, agent_api=api))


@pytest.mark.parametrize(("key", "trusted"), [("y", True), ("n", False)])
async def test_the_user_answers_the_trust_prompt(home, work, script, key, trusted):
    project = project_with_definitions(work)
    script.on(None, lambda call: "ok")
    app = lead_app(home, project, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await until(pilot, lambda: isinstance(app.screen, TrustScreen), what="the prompt")
        await pilot.press(key)
        await until(pilot, lambda: not isinstance(app.screen, TrustScreen), what="the answer")
        assert is_trusted(home, project) is trusted
        listed = await app.root.call_tool("agent", {"action": "list"})
        fixer = next(d for d in listed.details["agent_definitions"] if d["name"] == "fixer")
        assert fixer["trusted"] is trusted


async def test_no_prompt_without_project_definitions_or_for_the_agents_face(home, work, script):
    script.on(None, lambda call: "ok")
    for api, make_project in (("supervision", False), ("agents", True)):
        if make_project:
            project_with_definitions(work)
        app = lead_app(home, work, script, api=api)
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot)
            await pilot.pause()  # idle: whatever the app would do by itself is done
            assert not isinstance(app.screen, TrustScreen)
