"""Agent definitions: parsing, layers, trust, the bundled roster and global overrides."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from piagents.harness.tools import BUILTIN_TOOL_NAMES
from piagents.supervision.definitions import (
    FIELDS,
    NAME_PATTERN,
    AgentDefinition,
    DefinitionError,
    DefinitionRefused,
    discover,
    parse_definition,
    write_global_override,
)

BUNDLED = ("generalist", "implementer", "researcher", "reviewer", "scout")
READ_ONLY = ("read", "grep", "find", "ls")


def parse(front: str, body: str = "Do the work.\n", path: str = "x.md") -> AgentDefinition:
    return parse_definition(f"---\n{front}---\n{body}", path=path, layer="project")


def problems_of(front: str) -> str:
    with pytest.raises(DefinitionError) as caught:
        parse(front)
    return str(caught.value)


def write(folder: Path, file_name: str, front: str, body: str = "Prompt.\n") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / file_name
    path.write_text(f"---\n{front}---\n{body}", encoding="utf-8")
    return path


@pytest.fixture
def project(work: Path) -> Path:
    return work


def project_agents(project: Path) -> Path:
    return project / ".pi-agents" / "agents"


def global_agents(home: Path) -> Path:
    return home / "agents"


# ---- parsing: every field ---------------------------------------------------


def test_every_field_is_accepted_and_the_body_becomes_the_system_prompt() -> None:
    d = parse(
        "name: helper\n"
        "description: Helps.\n"
        "enabled: false\n"
        "model: anthropic/claude-sonnet-4-5\n"
        "thinking: high\n"
        "tools: [read, bash]\n"
        "excludeTools: [bash]\n"
        "noTools: false\n"
        "systemPromptMode: replace\n"
        "agents: [scout]\n",
        body="\nYou help.\n\nCarefully.\n",
        path="/p/helper.md",
    )
    assert d == AgentDefinition(
        name="helper",
        description="Helps.",
        enabled=False,
        model="anthropic/claude-sonnet-4-5",
        thinking="high",
        tools=("read", "bash"),
        exclude_tools=("bash",),
        no_tools=False,
        system_prompt_mode="replace",
        agents=("scout",),
        system_prompt="You help.\n\nCarefully.",
        layer="project",
        path="/p/helper.md",
    )
    assert set(FIELDS) == {
        "name",
        "description",
        "enabled",
        "model",
        "thinking",
        "tools",
        "excludeTools",
        "noTools",
        "systemPromptMode",
        "agents",
    }


def test_only_name_is_required_and_the_rest_has_defaults() -> None:
    d = parse("name: bare\n")
    assert d == AgentDefinition(
        name="bare", system_prompt="Do the work.", layer="project", path="x.md"
    )
    assert (d.description, d.enabled, d.model, d.thinking, d.tools) == ("", True, None, None, None)


@pytest.mark.parametrize("spelling", ["false", "off", "no", "'off'"])
def test_thinking_false_means_off(spelling: str) -> None:
    assert parse(f"name: a\nthinking: {spelling}\n").thinking == "off"


@pytest.mark.parametrize("level", ["minimal", "low", "medium", "high", "xhigh", "max"])
def test_every_thinking_level_is_accepted(level: str) -> None:
    assert parse(f"name: a\nthinking: {level}\n").thinking == level


def test_null_model_thinking_and_tools_mean_absent() -> None:
    d = parse("name: a\nmodel: null\nthinking:\ntools: ~\n")
    assert (d.model, d.thinking, d.tools) == (None, None, None)


def test_a_model_id_with_a_colon_is_kept_whole() -> None:
    assert parse("name: a\nmodel: ollama/qwen3:8b\n").model == "ollama/qwen3:8b"


def test_names_follow_the_documented_pattern() -> None:
    assert NAME_PATTERN.pattern == "^[a-z][a-z0-9_-]{0,31}$"
    assert parse("name: a_b-9\n").name == "a_b-9"


# ---- parsing: each rejection names the file and the field ----------------------


def test_an_unknown_field_is_rejected_naming_file_and_field() -> None:
    message = problems_of("name: a\ncolor: blue\n")
    assert "x.md" in message and "`color`" in message and "unknown field" in message


def test_a_missing_name_is_rejected() -> None:
    message = problems_of("description: nameless\n")
    assert "x.md: `name`: missing" in message


def test_an_empty_front_matter_is_a_missing_name() -> None:
    assert "`name`: missing" in problems_of("")


@pytest.mark.parametrize("name", ["Scout", "1st", "has space", "a" * 33, "-x"])
def test_a_name_outside_the_pattern_is_rejected(name: str) -> None:
    message = problems_of(f"name: {json.dumps(name)}\n")
    assert "`name`" in message and NAME_PATTERN.pattern in message


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ("name: 7", "name"),
        ("description: [a]", "description"),
        ("enabled: 'yes please'", "enabled"),
        ("enabled: 1", "enabled"),
        ("model: 5", "model"),
        ("model: just-a-model", "model"),
        ("thinking: true", "thinking"),
        ("thinking: extreme", "thinking"),
        ("thinking: 3", "thinking"),
        ("tools: read, grep", "tools"),
        ("tools: [read, 4]", "tools"),
        ("excludeTools: bash", "excludeTools"),
        ("excludeTools: null", "excludeTools"),
        ("noTools: 'true'", "noTools"),
        ("systemPromptMode: prepend", "systemPromptMode"),
        ("agents: scout", "agents"),
        ("agents: [Scout]", "agents"),
        ("agents: [scout, scout]", "agents"),
    ],
)
def test_a_wrong_type_or_value_is_rejected_naming_the_field(line: str, key: str) -> None:
    front = f"{line}\n" if line.startswith("name:") else f"name: a\n{line}\n"
    message = problems_of(front)
    assert message.startswith("x.md: ") and f"`{key}`" in message


def test_a_definition_cannot_delegate_to_itself() -> None:
    assert "`agents`" in problems_of("name: loop\nagents: [loop]\n")


def test_all_problems_of_one_file_are_reported_together() -> None:
    with pytest.raises(DefinitionError) as caught:
        parse("name: a\ncolor: red\nthinking: loud\n")
    assert len(caught.value.problems) == 2


def test_malformed_yaml_is_rejected_with_its_line() -> None:
    with pytest.raises(DefinitionError, match=r"x\.md: front matter is not valid YAML \(line 3\)"):
        parse("name: a\ntools: [read, grep}\n")


def test_a_field_given_twice_is_rejected() -> None:
    assert "`model`: given more than once" in problems_of("name: a\nmodel: a/b\nmodel: c/d\n")


def test_front_matter_that_is_not_a_mapping_is_rejected() -> None:
    assert "must be a mapping" in problems_of("- name: a\n")


def test_a_file_without_front_matter_is_rejected() -> None:
    with pytest.raises(DefinitionError, match=r"y\.md: no front matter"):
        parse_definition("You are a helper.\n", path="y.md", layer="global")


def test_front_matter_that_is_never_closed_is_rejected() -> None:
    with pytest.raises(DefinitionError, match=r"never closed"):
        parse_definition("---\nname: a\n", path="y.md", layer="global")


# ---- tools ------------------------------------------------------------------


def test_without_tools_a_definition_gets_every_available_tool() -> None:
    assert parse("name: a\n").effective_tools(BUILTIN_TOOL_NAMES) == BUILTIN_TOOL_NAMES


def test_tools_is_an_allowlist_of_the_available_tools_in_its_order() -> None:
    d = parse("name: a\ntools: [ls, read, telepathy]\n")
    assert d.effective_tools(BUILTIN_TOOL_NAMES) == ("ls", "read")


def test_exclude_tools_wins_over_tools() -> None:
    d = parse("name: a\ntools: [read, bash, edit]\nexcludeTools: [bash]\n")
    assert d.effective_tools(BUILTIN_TOOL_NAMES) == ("read", "edit")


def test_exclude_tools_alone_removes_from_every_available_tool() -> None:
    d = parse("name: a\nexcludeTools: [bash, write, edit]\n")
    assert d.effective_tools(BUILTIN_TOOL_NAMES) == ("read", "grep", "find", "ls")


def test_no_tools_gives_no_tools_whatever_else_is_said() -> None:
    d = parse("name: a\ntools: [read]\nnoTools: true\n")
    assert d.effective_tools(BUILTIN_TOOL_NAMES) == ()


# ---- the bundled roster -------------------------------------------------------


def test_the_bundled_roster_loads_with_the_documented_shape(home: Path) -> None:
    roster = discover(home, None, trusted=False)
    assert sorted(roster.definitions) == list(BUNDLED)
    for d in roster.definitions.values():
        assert d.layer == "bundled" and d.enabled and d.path.endswith(f"{d.name}.md")
        assert len(d.description) > 80, d.name  # tells a lead model when to pick it
        assert d.system_prompt.count("\n\n") >= 2, d.name  # a few paragraphs
        assert "ask_owner" in d.system_prompt, d.name
    reviewer = roster.definitions["reviewer"]
    assert reviewer.agents == ("scout", "researcher") and reviewer.is_delegating
    assert "write" not in reviewer.effective_tools(BUILTIN_TOOL_NAMES)
    assert "edit" not in reviewer.effective_tools(BUILTIN_TOOL_NAMES)
    for leaf in ("scout", "researcher"):
        d = roster.definitions[leaf]
        assert not d.is_delegating
        assert d.effective_tools(BUILTIN_TOOL_NAMES) == READ_ONLY
    for worker in ("generalist", "implementer"):
        d = roster.definitions[worker]
        assert not d.is_delegating
        assert d.effective_tools(BUILTIN_TOOL_NAMES) == BUILTIN_TOOL_NAMES


# ---- layers and trust -----------------------------------------------------------


def test_a_trusted_project_definition_overrides_a_bundled_one(home: Path, project: Path) -> None:
    write(project_agents(project), "scout.md", "name: scout\ndescription: Project scout.\n")
    write(project_agents(project), "tester.md", "name: tester\n")
    roster = discover(home, project, trusted=True)
    assert roster.definitions["scout"].description == "Project scout."
    assert roster.definitions["scout"].layer == "project"
    assert roster.definitions["tester"].layer == "project"
    assert dict(roster.untrusted) == {}


def test_an_edited_definition_is_read_again_at_the_next_discovery(home: Path) -> None:
    write(global_agents(home), "mine.md", "name: tester\ndescription: First.\n")
    assert discover(home, None, trusted=True).definitions["tester"].description == "First."
    write(global_agents(home), "mine.md", "name: tester\ndescription: Second.\n")
    assert discover(home, None, trusted=True).definitions["tester"].description == "Second."
    write(global_agents(home), "mine.md", "name: tester\nthinking: lots\n")
    with pytest.raises(DefinitionError, match="thinking"):
        discover(home, None, trusted=True)
    (global_agents(home) / "mine.md").unlink()
    assert "tester" not in discover(home, None, trusted=True).definitions


def test_a_global_definition_overrides_project_and_bundled(home: Path, project: Path) -> None:
    write(project_agents(project), "s.md", "name: scout\ndescription: Project.\n")
    write(global_agents(home), "mine.md", "name: scout\ndescription: Global.\n")
    roster = discover(home, project, trusted=True)
    assert roster.definitions["scout"].description == "Global."
    assert roster.definitions["scout"].layer == "global"
    assert roster.definitions["scout"].path == str(global_agents(home) / "mine.md")


def test_an_untrusted_projects_definitions_are_listed_but_not_used(
    home: Path, project: Path
) -> None:
    write(project_agents(project), "scout.md", "name: scout\ndescription: Project.\n")
    write(project_agents(project), "tester.md", "name: tester\n")
    roster = discover(home, project, trusted=False)
    assert roster.definitions["scout"].layer == "bundled"
    assert "tester" not in roster.definitions
    assert sorted(roster.untrusted) == ["scout", "tester"]
    records = roster.records()
    untrusted = [r for r in records if not r["trusted"]]
    assert [(r["name"], r["layer"]) for r in untrusted] == [
        ("scout", "project"),
        ("tester", "project"),
    ]


def test_delegating_to_an_untrusted_project_definition_is_refused_clearly(
    home: Path, project: Path
) -> None:
    write(project_agents(project), "tester.md", "name: tester\n")
    roster = discover(home, project, trusted=False)
    with pytest.raises(DefinitionRefused) as caught:
        roster.resolve("tester", None)
    message = str(caught.value)
    assert "not trusted" in message and "pi-agents trust" in message
    assert os.path.realpath(project) in message


def test_an_untrusted_project_shadowed_by_a_global_definition_is_not_listed(
    home: Path, project: Path
) -> None:
    write(project_agents(project), "t.md", "name: tester\n")
    write(global_agents(home), "t.md", "name: tester\n")
    assert dict(discover(home, project, trusted=False).untrusted) == {}


def test_broken_files_of_an_untrusted_project_do_not_break_discovery(
    home: Path, project: Path
) -> None:
    write(project_agents(project), "bad.md", "name: bad\ncolor: red\n")
    roster = discover(home, project, trusted=False)
    assert sorted(roster.definitions) == list(BUNDLED)
    assert any("`color`" in p for p in roster.untrusted_problems)
    with pytest.raises(DefinitionError, match="`color`"):
        discover(home, project, trusted=True)


def test_duplicate_names_in_one_layer_are_rejected_naming_both_files(home: Path) -> None:
    first = write(global_agents(home), "a.md", "name: twin\n")
    second = write(global_agents(home), "b.md", "name: twin\n")
    with pytest.raises(DefinitionError) as caught:
        discover(home, None, trusted=False)
    message = str(caught.value)
    assert str(first) in message and str(second) in message and "`name`" in message


def test_the_same_name_in_two_layers_is_an_override_not_a_duplicate(
    home: Path, project: Path
) -> None:
    write(project_agents(project), "twin.md", "name: twin\n")
    write(global_agents(home), "twin.md", "name: twin\n")
    assert discover(home, project, trusted=True).definitions["twin"].layer == "global"


def test_discovery_reports_every_problem_at_once_and_returns_no_roster(
    home: Path, project: Path
) -> None:
    write(project_agents(project), "a.md", "name: a\ncolor: red\n")
    write(global_agents(home), "c.md", "name: c\nthinking: loud\n")
    (global_agents(home) / "b.md").write_text("no front matter\n", encoding="utf-8")
    with pytest.raises(DefinitionError) as caught:
        discover(home, project, trusted=True)
    assert len(caught.value.problems) == 3
    assert str(caught.value).startswith("3 problems in agent definitions:")


def test_files_other_than_markdown_and_hidden_files_are_ignored(home: Path) -> None:
    write(global_agents(home), "notes.txt", "name: notes\n")
    write(global_agents(home), ".draft.md", "name: draft\n")
    assert sorted(discover(home, None, trusted=False).definitions) == list(BUNDLED)


def test_a_project_whose_pi_agents_is_the_home_has_no_separate_project_layer(
    tmp_path: Path,
) -> None:
    home = tmp_path / ".pi-agents"
    write(global_agents(home), "mine.md", "name: mine\n")
    roster = discover(home, tmp_path, trusted=False)
    assert roster.definitions["mine"].layer == "global"
    assert dict(roster.untrusted) == {}


# ---- the agents allowlist --------------------------------------------------------


def test_agents_naming_a_missing_definition_is_an_error_on_the_agents_field(home: Path) -> None:
    path = write(global_agents(home), "boss.md", "name: boss\nagents: [ghost]\n")
    with pytest.raises(DefinitionError) as caught:
        discover(home, None, trusted=False)
    assert str(caught.value) == f"{path}: `agents`: 'ghost' is not defined in any layer"


def test_agents_naming_a_disabled_definition_is_an_error(home: Path) -> None:
    write(global_agents(home), "scout.md", "name: scout\nenabled: false\n")
    with pytest.raises(DefinitionError, match=r"reviewer\.md: `agents`: 'scout' is disabled"):
        discover(home, None, trusted=False)


def test_agents_naming_a_delegating_definition_is_an_error(home: Path) -> None:
    write(global_agents(home), "boss.md", "name: boss\nagents: [reviewer]\n")
    with pytest.raises(DefinitionError, match="depth is fixed"):
        discover(home, None, trusted=False)


def test_agents_naming_an_untrusted_project_definition_is_an_error(
    home: Path, project: Path
) -> None:
    write(project_agents(project), "tester.md", "name: tester\n")
    write(global_agents(home), "boss.md", "name: boss\nagents: [tester]\n")
    with pytest.raises(DefinitionError, match="only by the untrusted project"):
        discover(home, project, trusted=False)
    assert discover(home, project, trusted=True).definitions["boss"].agents == ("tester",)


def test_a_disabled_delegating_definition_may_name_anything(home: Path) -> None:
    write(global_agents(home), "boss.md", "name: boss\nenabled: false\nagents: [ghost]\n")
    assert not discover(home, None, trusted=False).definitions["boss"].enabled


def test_the_lead_may_delegate_to_every_enabled_definition(home: Path) -> None:
    write(global_agents(home), "generalist.md", "name: generalist\nenabled: false\n")
    roster = discover(home, None, trusted=False)
    names = [d.name for d in roster.delegatable_by(None)]
    assert names == ["implementer", "researcher", "reviewer", "scout"]
    with pytest.raises(DefinitionRefused, match="disabled"):
        roster.resolve("generalist", None)
    assert roster.resolve("reviewer", None).name == "reviewer"


def test_a_delegating_agent_may_delegate_only_to_its_allowlist(home: Path) -> None:
    roster = discover(home, None, trusted=False)
    reviewer = roster.definitions["reviewer"]
    assert [d.name for d in roster.delegatable_by(reviewer)] == ["scout", "researcher"]
    assert roster.resolve("scout", reviewer).name == "scout"
    with pytest.raises(DefinitionRefused, match="may delegate to: scout, researcher"):
        roster.resolve("implementer", reviewer)


def test_a_leaf_may_delegate_to_nothing(home: Path) -> None:
    roster = discover(home, None, trusted=False)
    scout = roster.definitions["scout"]
    assert roster.delegatable_by(scout) == ()
    with pytest.raises(DefinitionRefused, match="leaf"):
        roster.resolve("researcher", scout)


def test_an_unknown_definition_is_refused_naming_the_choices(home: Path) -> None:
    roster = discover(home, None, trusted=False)
    with pytest.raises(DefinitionRefused, match="no agent definition named 'wizard'; available"):
        roster.resolve("wizard", None)


def test_get_returns_the_effective_definition_or_none(home: Path) -> None:
    roster = discover(home, None, trusted=False)
    scout = roster.get("scout")
    assert scout is not None and scout.name == "scout"
    assert roster.get("wizard") is None


# ---- list records --------------------------------------------------------------


def test_list_records_are_json_ready_snake_case_dicts(home: Path) -> None:
    roster = discover(home, None, trusted=False)
    records = roster.records()
    json.dumps(records)
    assert [r["name"] for r in records] == sorted(BUNDLED)
    reviewer = next(r for r in records if r["name"] == "reviewer")
    assert reviewer == {
        "name": "reviewer",
        "description": roster.definitions["reviewer"].description,
        "enabled": True,
        "model": None,
        "thinking": None,
        "tools": ["read", "bash", "grep", "find", "ls"],
        "exclude_tools": [],
        "no_tools": False,
        "system_prompt_mode": "append",
        "delegates_to": ["scout", "researcher"],
        "layer": "bundled",
        "path": roster.definitions["reviewer"].path,
        "trusted": True,
    }


def test_the_lead_sees_disabled_definitions_a_delegating_agent_its_leaves_a_leaf_none(
    home: Path,
) -> None:
    write(global_agents(home), "generalist.md", "name: generalist\nenabled: false\n")
    roster = discover(home, None, trusted=False)
    lead = {r["name"]: r["enabled"] for r in roster.records()}
    assert lead["generalist"] is False
    assert [r["name"] for r in roster.records(roster.definitions["reviewer"])] == [
        "scout",
        "researcher",
    ]
    assert roster.records(roster.definitions["scout"]) == []


# ---- overrides in the global layer ---------------------------------------------


def test_overriding_a_bundled_definition_copies_it_to_the_global_layer(home: Path) -> None:
    generalist = discover(home, None, trusted=False).definitions["generalist"]
    written = write_global_override(home, generalist, enabled=False, model="openai/gpt-5")
    assert written.path == str(global_agents(home) / "generalist.md")
    again = discover(home, None, trusted=False).definitions["generalist"]
    assert again == written
    assert (again.layer, again.enabled, again.model) == ("global", False, "openai/gpt-5")
    assert (again.description, again.tools, again.system_prompt) == (
        generalist.description,
        generalist.tools,
        generalist.system_prompt,
    )


def test_a_leaf_cannot_be_disabled_while_an_enabled_definition_delegates_to_it(
    home: Path,
) -> None:
    roster = discover(home, None, trusted=False)
    with pytest.raises(DefinitionError, match="'scout' cannot be disabled while reviewer"):
        write_global_override(home, roster.definitions["scout"], enabled=False, roster=roster)
    assert not global_agents(home).exists()
    write_global_override(home, roster.definitions["reviewer"], enabled=False, roster=roster)
    roster = discover(home, None, trusted=False)
    write_global_override(home, roster.definitions["scout"], enabled=False, roster=roster)
    assert not discover(home, None, trusted=False).definitions["scout"].enabled


def test_overriding_copies_every_field_of_the_effective_definition(
    home: Path, project: Path
) -> None:
    write(
        project_agents(project),
        "t.md",
        "name: tester\ndescription: 'Runs: tests'\nthinking: 'off'\ntools: [read, bash]\n"
        "excludeTools: [bash]\nnoTools: true\nsystemPromptMode: replace\nagents: [scout]\n",
        body="Line one.\n\nLine two.\n",
    )
    tester = discover(home, project, trusted=True).definitions["tester"]
    write_global_override(home, tester, model="openai/gpt-5")
    again = discover(home, project, trusted=True).definitions["tester"]
    fields = ("description", "thinking", "tools", "exclude_tools", "no_tools")
    assert [getattr(again, f) for f in fields] == [getattr(tester, f) for f in fields]
    assert (again.system_prompt_mode, again.agents) == ("replace", ("scout",))
    assert (again.system_prompt, again.model, again.layer) == (
        "Line one.\n\nLine two.",
        "openai/gpt-5",
        "global",
    )


def test_overriding_a_global_definition_edits_only_those_fields_of_its_file(home: Path) -> None:
    path = write(
        global_agents(home),
        "helper.md",
        "# my helper\nname: helper\nmodel: openai/gpt-4o  # cheap\nagents: [scout]\n",
        body="\nHelp.\n",
    )
    helper = discover(home, None, trusted=False).definitions["helper"]
    write_global_override(home, helper, thinking="off", model="anthropic/claude-sonnet-4-5")
    assert path.read_text(encoding="utf-8") == (
        "---\n# my helper\nname: helper\nmodel: anthropic/claude-sonnet-4-5  # cheap\n"
        'agents: [scout]\nthinking: "off"\n---\n\nHelp.\n'
    )
    again = discover(home, None, trusted=False).definitions["helper"]
    assert (again.thinking, again.model) == ("off", "anthropic/claude-sonnet-4-5")


def test_an_override_of_none_removes_the_model(home: Path) -> None:
    write(global_agents(home), "helper.md", "name: helper\nmodel: openai/gpt-4o\n")
    helper = discover(home, None, trusted=False).definitions["helper"]
    write_global_override(home, helper, model=None, enabled=False)
    again = discover(home, None, trusted=False).definitions["helper"]
    assert (again.model, again.enabled) == (None, False)


def test_an_override_with_an_invalid_value_writes_nothing(home: Path) -> None:
    scout = discover(home, None, trusted=False).definitions["scout"]
    with pytest.raises(DefinitionError, match="`model`"):
        write_global_override(home, scout, model="not a model")
    assert not global_agents(home).exists() or list(global_agents(home).iterdir()) == []


def test_an_override_never_overwrites_a_global_file_defining_another_name(home: Path) -> None:
    other = write(global_agents(home), "scout.md", "name: pathfinder\n")
    scout = discover(home, None, trusted=False).definitions["scout"]
    with pytest.raises(DefinitionError, match="does not define 'scout'"):
        write_global_override(home, scout, enabled=False)
    assert other.read_text(encoding="utf-8") == "---\nname: pathfinder\n---\nPrompt.\n"


def test_an_override_leaves_no_temporary_files(home: Path) -> None:
    scout = discover(home, None, trusted=False).definitions["scout"]
    written = write_global_override(home, scout, thinking="low")
    write_global_override(home, written, thinking="high")
    assert [p.name for p in global_agents(home).iterdir()] == ["scout.md"]


def test_an_override_of_a_flow_style_front_matter_keeps_every_field(home: Path) -> None:
    path = global_agents(home) / "helper.md"
    path.parent.mkdir(parents=True)
    path.write_text("---\n{name: helper, tools: [read]}\n---\nHelp.\n", encoding="utf-8")
    helper = discover(home, None, trusted=False).definitions["helper"]
    write_global_override(home, helper, thinking="medium")
    again = discover(home, None, trusted=False).definitions["helper"]
    assert (again.tools, again.thinking, again.system_prompt) == (("read",), "medium", "Help.")


def test_an_overridden_description_with_quotes_and_unicode_survives(
    home: Path, project: Path
) -> None:
    text = 'Says "hi": naïve, → then #done'
    write(project_agents(project), "t.md", f"name: tester\ndescription: {json.dumps(text)}\n")
    tester = discover(home, project, trusted=True).definitions["tester"]
    write_global_override(home, tester, enabled=False)
    assert discover(home, project, trusted=True).definitions["tester"].description == text


def test_a_file_that_is_not_utf8_is_reported(home: Path) -> None:
    global_agents(home).mkdir()
    (global_agents(home) / "bad.md").write_bytes(b"---\nname: bad\ndescription: \xff\n---\n")
    with pytest.raises(DefinitionError, match=r"bad\.md: is not UTF-8 text"):
        discover(home, None, trusted=False)


def test_a_long_unknown_definition_name_is_not_echoed_whole(home: Path) -> None:
    roster = discover(home, None, trusted=False)
    with pytest.raises(DefinitionRefused) as caught:
        roster.resolve("x" * 100_000, None)
    assert len(str(caught.value)) < 300
