"""The supervision status widget's lines and the /agents Definitions rows (pure)."""

from __future__ import annotations

from piagents.tui.supervision_rows import (
    ManagedAgent,
    SupervisionSnapshot,
    context_use,
    counts,
    definition_row,
    elapsed,
    marker,
    running_row,
    status_rows,
)

NOW = 1_000_000_000


def agent(label, state="working", owner="lead", session=None, age_s=65, tokens=1234, **kw):
    return ManagedAgent(
        request=f"req-{label}",
        session_id=session or f"s-{label}",
        owner_id=owner,
        label=label,
        state=state,
        created=NOW - age_s * 1000,
        model=kw.get("model", "faux/function"),
        thinking=kw.get("thinking", "off"),
        tokens=tokens,
        context_window=kw.get("window", 128_000),
    )


def test_each_state_has_its_marker():
    states = ("working", "blocked", "settling", "starting", "unknown", "lost")
    assert [marker(s) for s in states] == ["●", "◐", "◌", "◌", "?", "×"]


def test_counts_show_only_the_non_zero_states_in_a_fixed_order():
    agents = [agent("a", "lost"), agent("b"), agent("c", "blocked"), agent("d")]
    assert counts(agents) == "2 working · 1 blocked · 1 lost"
    assert counts([agent("e", "starting"), agent("f", "unknown"), agent("g", "settling")]) == (
        "1 settling · 1 starting · 1 unknown"
    )


def test_elapsed_times_read_as_seconds_minutes_and_hours():
    assert [elapsed(ms) for ms in (0, 42_000, 65_000, 3_599_000, 3_720_000, -5)] == [
        "0s",
        "42s",
        "1m05s",
        "59m59s",
        "1h02m",
        "0s",
    ]


def test_context_use_is_tokens_of_the_window_with_a_percentage():
    assert context_use(1234, 128_000) == "1.2k/128k 1.0%"
    assert context_use(20_000, 200_000) == "20k/200k 10.0%"
    assert context_use(300, 0) == "300"
    assert context_use(None, 128_000) == "?"


def test_the_tree_nests_delegated_agents_under_their_owners():
    snapshot = SupervisionSnapshot(
        "lead",
        (
            agent("reviewer-1", "blocked", age_s=180, tokens=20_000, window=200_000),
            agent("generalist-1", age_s=65),
            agent("scout-1", "starting", owner="s-reviewer-1", age_s=12, tokens=300),
            agent("gone", "lost", age_s=3_720, tokens=None, thinking="high"),
        ),
    )
    assert status_rows(snapshot, NOW) == [
        "Agents: 1 working · 1 blocked · 1 starting · 1 lost (/agents to manage)",
        "◐ reviewer-1  3m00s  faux/function · off · 20k/200k 10.0%",
        "  ◌ scout-1  12s  faux/function · off · 300/128k 0.2%",
        "● generalist-1  1m05s  faux/function · off · 1.2k/128k 1.0%",
        "× gone  1h02m  faux/function · high · ?",
    ]


def test_an_agent_whose_owner_is_not_listed_hangs_under_the_lead():
    snapshot = SupervisionSnapshot("lead", (agent("orphan", owner="s-ended"),))
    assert status_rows(snapshot, NOW)[1] == "● orphan  1m05s  faux/function · off · 1.2k/128k 1.0%"


def test_no_agents_no_rows_and_too_many_rows_end_with_a_count():
    assert status_rows(SupervisionSnapshot("lead"), NOW) == []
    many = SupervisionSnapshot("lead", tuple(agent(f"a{i}", age_s=1) for i in range(5)))
    rows = status_rows(many, NOW, max_rows=3)
    assert rows == [
        "Agents: 5 working (/agents to manage)",
        "● a0  1s  faux/function · off · 1.2k/128k 1.0%",
        "● a1  1s  faux/function · off · 1.2k/128k 1.0%",
        "+3 more",
    ]


def test_a_running_row_adds_the_state_in_words():
    assert running_row(agent("x", "settling", age_s=5), 1, NOW) == (
        "  ◌ x  5s  faux/function · off · 1.2k/128k 1.0%  settling"
    )


def test_definition_rows_show_enabled_model_thinking_and_layer():
    base = {"name": "scout", "enabled": True, "model": None, "thinking": None, "layer": "bundled"}
    assert definition_row(base) == "[x] scout  model default · thinking default  bundled"
    changed = {**base, "enabled": False, "model": "openai/gpt-5", "thinking": "low"}
    changed["layer"] = "global"
    assert definition_row(changed) == (
        "[ ] scout  model openai/gpt-5 · thinking low  global  disabled"
    )
    hidden = {**base, "layer": "project", "trusted": False, "path": "/p/.pi-agents/agents/x.md"}
    assert definition_row(hidden) == (
        "[ ] scout  untrusted project: not used (/p/.pi-agents/agents/x.md)"
    )
