"""What a front end reads of a runtime and changes in it (`Runtime.read_model`): saved
sessions, an export, the warnings, the `pi-agents` settings in use and the agent
definitions a lead uses. Every change is used at once and announced as an event."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import piagents
from piagents.events import DefinitionsChanged, RuntimeEvent, SettingsChanged
from piagents.harness.session import Session
from piagents.store.base import SessionNotFound
from piagents.supervision.definitions import DefinitionError
from piagents.supervision.trust import trust
from piagents.testing import FunctionModel
from support import until

BROKEN_THINKING = "---\nname: broken\ndescription: d\nthinking: loud\n---\nBody.\n"


def runtime(home: Path, **agents_settings: object) -> piagents.Runtime:
    settings = {"pi-agents": agents_settings} if agents_settings else None
    return piagents.Runtime(home=home, model=FunctionModel(lambda call: "done"), settings=settings)


def recorded(rt: piagents.Runtime) -> list[RuntimeEvent]:
    events: list[RuntimeEvent] = []
    rt.read_model.subscribe(events.append)
    return events


# ---- sessions -------------------------------------------------------------------------


async def test_root_sessions_are_the_saved_roots_but_the_one_shown_newest_first(home, work):
    async with runtime(home) as rt:
        older = await rt.open_root(cwd=work)
        await older.prompt("first question")
        await older.prompt("second question")
        quiet = await rt.open_root(cwd=work)
        shown = await rt.open_root(cwd=work)
        owned = Session.create(
            rt.store,
            cwd=str(work),
            model="faux/x",
            thinking="off",
            owner_id=shown.id,
            root_id=shown.id,
        )
        page = rt.read_model.root_sessions(exclude=shown.id)
        ids = [r.id for r in page.records]
        assert sorted(ids) == sorted([older.id, quiet.id])
        assert owned.id not in ids and shown.id not in ids
        updated = [r.updated for r in page.records]
        assert updated == sorted(updated, reverse=True)
        assert page.latest_requests == {older.id: "second question"}
        every = rt.read_model.root_sessions()
        assert {r.id for r in every.records} == {older.id, quiet.id, shown.id}


async def test_export_writes_the_session_as_jsonl_and_counts_its_entries(home, work):
    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)
        await root.prompt("hello")
        path = work / "out.jsonl"
        n = rt.read_model.export(root.id, path)
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        assert n == len(lines) - 1 == len(root.session.entries) == 2
        assert lines[0]["type"] == "session" and lines[0]["id"] == root.id
        with pytest.raises(SessionNotFound):
            rt.read_model.export("no-such-session", work / "none.jsonl")
        with pytest.raises(OSError):
            rt.read_model.export(root.id, work / "missing" / "out.jsonl")


# ---- settings -------------------------------------------------------------------------


async def test_warnings_name_the_settings_and_extensions_that_are_not_used(home):
    rt = runtime(home, maxConcurrent=0, extensions=["nowhere/missing_extension.py"])
    warnings = rt.read_model.warnings()
    assert any("maxConcurrent" in w and "using the default" in w for w in warnings)
    assert any("missing_extension.py" in w and "not loaded" in w for w in warnings)
    assert runtime(home / "quiet").read_model.warnings() == ()


async def test_a_changed_agents_setting_is_used_from_now_on_and_announced(home):
    async with runtime(home, contextRetirement=False) as rt:
        model = rt.read_model
        assert not model.agents_settings().context_retirement
        events = recorded(rt)
        model.use_agents_setting("contextRetirement", True)
        model.use_agents_setting("mailboxPayloadLimitBytes", 4096)
        assert model.agents_settings().context_retirement
        assert model.agents_settings().mailbox_payload_limit_bytes == 4096
        assert rt.settings.agents.mailbox_payload_limit_bytes == 4096  # what the parts read
        await until(lambda: len(events) >= 2, what="the announcements")
        assert events == [
            SettingsChanged("contextRetirement", True),
            SettingsChanged("mailboxPayloadLimitBytes", 4096),
        ]
        assert not (home / "settings.json").exists()  # writing the file is the caller's


async def test_a_setting_that_cannot_change_while_running_is_refused_unchanged(home):
    async with runtime(home) as rt:
        events = recorded(rt)
        before = rt.read_model.agents_settings()
        with pytest.raises(ValueError, match=r"pi-agents\.maxConcurrent cannot be changed"):
            rt.read_model.use_agents_setting("maxConcurrent", 1)
        assert rt.read_model.agents_settings() == before
        assert events == []


# ---- definitions ----------------------------------------------------------------------


async def test_the_survey_reports_the_definitions_problems_and_never_raises(home, work):
    async with runtime(home) as rt:
        found = rt.read_model.definition_survey(str(work))
        assert found.trust_error is None and found.report.roster is not None
        assert found.report.roster.get("generalist") is not None  # a bundled one
        (home / "agents").mkdir()
        (home / "agents" / "broken.md").write_text(BROKEN_THINKING)
        found = rt.read_model.definition_survey(str(work))
        assert found.report.roster is None
        [error] = found.report.errors
        assert "broken.md" in error.text and "loud" in error.text


async def test_a_damaged_trust_file_is_reported_and_trusts_no_project(home, work):
    folder = work / ".pi-agents" / "agents"
    folder.mkdir(parents=True)
    (folder / "fixer.md").write_text("---\nname: fixer\ndescription: fixes\n---\nFix.\n")
    async with runtime(home) as rt:
        trust(home, work)
        roster = rt.read_model.definition_survey(str(work)).report.roster
        assert roster is not None and roster.get("fixer") is not None
        (home / "trusted-projects.json").write_text("{not json")
        found = rt.read_model.definition_survey(str(work))
        assert found.trust_error is not None and "trusted-projects.json" in found.trust_error
        assert found.report.roster is not None and found.report.roster.get("fixer") is None


async def test_a_definition_override_is_written_to_the_global_layer_and_announced(home, work):
    async with runtime(home) as rt:
        model = rt.read_model
        roster = model.definitions(str(work))
        generalist = roster.get("generalist")
        assert generalist is not None and generalist.enabled
        events = recorded(rt)
        written = model.set_definition_enabled(str(work), generalist, roster, False)
        assert not written.enabled
        assert written.path == str(home / "agents" / "generalist.md")
        roster = model.definitions(str(work))
        generalist = roster.get("generalist")
        assert generalist is not None and not generalist.enabled
        written = model.set_definition_model(str(work), generalist, roster, "faux/other")
        assert written.model == "faux/other"
        roster = model.definitions(str(work))
        generalist = roster.get("generalist")
        assert generalist is not None
        written = model.set_definition_thinking(str(work), generalist, roster, "high")
        assert (written.thinking, written.model, written.enabled) == ("high", "faux/other", False)
        project = str(model.project_of(str(work)))
        await until(lambda: len(events) >= 3, what="the announcements")
        assert events == [DefinitionsChanged(project, "generalist")] * 3


async def test_a_refused_override_writes_nothing_and_announces_nothing(home, work):
    async with runtime(home) as rt:
        model = rt.read_model
        roster = model.definitions(str(work))
        generalist = roster.get("generalist")
        assert generalist is not None
        events = recorded(rt)
        with pytest.raises(DefinitionError):
            model.set_definition_thinking(str(work), generalist, roster, "loud")  # type: ignore[arg-type]
        assert not (home / "agents" / "generalist.md").exists()
        assert events == []
