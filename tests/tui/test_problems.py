"""Settings, extension and definition problems reach the user, not only stderr or the model."""

from __future__ import annotations

from tui_support import make_app, runtime, screen_text, started, submit, until

from piagents.supervision.trust import trust
from piagents.tui.app import PiAgentsApp
from piagents.tui.blocks import Notice
from piagents.tui.problems import Problem, definition_problems
from piagents.tui.supervision_screen import SupervisionScreen
from piagents.tui.trust_screen import TrustScreen

BROKEN_THINKING = "---\nname: broken\ndescription: d\nthinking: loud\n---\nBody.\n"


def notices(app) -> list[str]:
    return [str(n.render()) for n in app.transcript.query(Notice)]


def lead_app(home, work, script) -> PiAgentsApp:
    rt = runtime(home, script, spawnPlacement="inline")
    return PiAgentsApp(rt, lambda r: r.open_root(cwd=work, agent_api="supervision"))


def broken_global_definition(home):
    (home / "agents").mkdir()
    (home / "agents" / "broken.md").write_text(BROKEN_THINKING)


def broken_project_definition(work):
    folder = work / ".pi-agents" / "agents"
    folder.mkdir(parents=True)
    (folder / "odd.md").write_text("---\nname: odd\ndescription: d\ntools: 5\n---\nBody.\n")


async def test_a_settings_warning_stays_in_the_transcript_once_the_session_opens(
    home, work, script
):
    app = make_app(home, work, script, maxConcurrent=0)
    async with app.run_test(size=(120, 30)) as pilot:
        await started(pilot)
        [warning] = [n for n in notices(app) if "maxConcurrent" in n]
        assert warning.startswith("Warning: ") and "using the default" in warning
        await submit(pilot, "hello")
        await until(pilot, lambda: "root done" in screen_text(app), what="the answer")
        assert warning in notices(app)
        assert app.transcript.query(Notice).first().has_class("-warning")


async def test_an_extension_that_does_not_load_is_a_warning_in_the_transcript(home, work, script):
    app = make_app(home, work, script, extensions=["nowhere/missing_extension.py"])
    async with app.run_test(size=(120, 30)) as pilot:
        await started(pilot)
        assert any("missing_extension.py" in n and "not loaded" in n for n in notices(app))


async def test_the_warnings_are_shown_again_in_a_new_session(home, work, script):
    app = make_app(home, work, script, maxConcurrent=0)
    async with app.run_test(size=(120, 30)) as pilot:
        await started(pilot)
        first = app.root
        await submit(pilot, "/new")
        await until(pilot, lambda: app.root is not first, what="the new session")
        await pilot.pause()
        assert any("maxConcurrent" in n for n in notices(app))


async def test_a_leads_unusable_definitions_are_shown_in_the_transcript(home, work, script):
    broken_global_definition(home)
    trust(home, work)  # trusted earlier: no trust question comes first
    app = lead_app(home, work, script)
    async with app.run_test(size=(140, 30)) as pilot:
        await started(pilot)
        [error] = [n for n in notices(app) if "broken.md" in n]
        assert error.startswith("Agent definitions cannot be used until fixed: ")
        assert "`thinking`" in error and "loud" in error
        assert any(n.has_class("-error") for n in app.transcript.query(Notice))


async def test_the_definitions_section_lists_the_problems_of_an_untrusted_project(
    home, work, script
):
    broken_project_definition(work)
    app = lead_app(home, work, script)
    async with app.run_test(size=(140, 32)) as pilot:
        await started(pilot)
        assert not isinstance(app.screen, TrustScreen)  # its only definition cannot be read
        await submit(pilot, "/agents")
        await until(pilot, lambda: isinstance(app.screen, SupervisionScreen), what="/agents")
        app.screen.query_one("TabbedContent").active = "definitions"
        await pilot.pause()
        shown = str(app.screen.query_one("#definition-problems").render())
        assert "odd.md" in shown and "`tools`" in shown and "not trusted" in shown


async def test_a_root_of_the_agents_face_is_not_told_about_definitions(home, work, script):
    broken_global_definition(home)
    app = make_app(home, work, script)
    async with app.run_test(size=(120, 30)) as pilot:
        await started(pilot)
        assert not any("broken.md" in n for n in notices(app))


async def test_definition_problems_are_errors_when_discovery_stops_and_else_warnings(
    home, work, script
):
    broken_project_definition(work)
    async with runtime(home, script) as rt:
        [warning] = definition_problems(rt.read_model, str(work))
        assert warning.severity == "warning" and "odd.md" in warning.text
        broken_global_definition(home)
        assert definition_problems(rt.read_model, str(work)) == (
            Problem(
                "error",
                "Agent definitions cannot be used until fixed: "
                f"{home / 'agents' / 'broken.md'}: `thinking`: expected one of off, minimal, "
                "low, medium, high, xhigh, max or false, got 'loud'",
            ),
        )


async def test_trusting_a_project_shows_the_problems_its_definitions_now_cause(home, work, script):
    broken_project_definition(work)
    (work / ".pi-agents" / "agents" / "fixer.md").write_text(
        "---\nname: fixer\ndescription: fixes\n---\nFix.\n"
    )
    app = lead_app(home, work, script)
    async with app.run_test(size=(140, 32)) as pilot:
        await started(pilot)
        await until(pilot, lambda: isinstance(app.screen, TrustScreen), what="the question")
        assert any("odd.md" in n and "not trusted" in n for n in notices(app))
        await pilot.press("y")
        await until(pilot, lambda: any("Trusted" in n for n in notices(app)), what="trusted")
        [error] = [n for n in notices(app) if n.startswith("Agent definitions cannot be used")]
        assert "odd.md" in error and "`tools`" in error


async def test_a_definition_naming_a_tool_no_one_provides_is_a_warning_for_the_user(
    home, work, script
):
    (home / "agents").mkdir()
    (home / "agents" / "typo.md").write_text(
        "---\nname: typo\ndescription: d\ntools: [raed]\n---\nBody.\n"
    )
    app = lead_app(home, work, script)
    async with app.run_test(size=(120, 30)) as pilot:
        await started(pilot)
        [warning] = [n for n in notices(app) if "raed" in n]
        assert warning.startswith("Warning: ") and "typo.md" in warning
