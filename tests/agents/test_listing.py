"""`list`: query parsing, matching, excerpts and the page (spec §2.4, §6 results)."""

import datetime

from piagents.agents.listing import (
    ListRow,
    excerpt,
    matches,
    one_line,
    parse_query,
    render_page,
    stamp,
    unwrap,
)
from piagents.agents.texts import Shown

ROOT_ID = "01JROOT9AAAAAAAAAAAAAAAAAA"
WORKER_ID = "01JWORKERAAAAAAAAAAAAAAAAA"
REVIEWER_ID = "01JREVIEWAAAAAAAAAAAAAAAAA"


def ms(year, month, day, hour, minute):
    """Milliseconds of a local time, as the store records times."""
    return int(datetime.datetime(year, month, day, hour, minute).timestamp() * 1000)


# ---- queries ---------------------------------------------------------------------------


def test_spaces_in_a_query_mean_and():
    assert parse_query("fix test") == [["fix", "test"]]


def test_a_bar_in_a_query_means_or():
    assert parse_query("fix test|deploy") == [["fix", "test"], ["deploy"]]


def test_a_query_is_lower_cased_and_blank_alternatives_are_dropped():
    assert parse_query("  Fix   TEST | | Deploy ") == [["fix", "test"], ["deploy"]]


def test_an_empty_query_has_no_groups():
    assert parse_query("") == []
    assert parse_query("   ") == []


def test_matching_needs_every_term_of_one_alternative():
    groups = parse_query("fix test|deploy")
    assert matches("Fix the flaky TEST", groups)
    assert matches("deploy to staging", groups)
    assert not matches("fix the build", groups)


def test_matching_is_case_insensitive():
    assert matches("README.md", parse_query("readme"))
    assert matches("readme.md", parse_query("README"))


# ---- excerpts ----------------------------------------------------------------------------


def test_a_short_text_is_its_own_excerpt_on_one_line():
    assert excerpt("Fix the\n  flaky test", parse_query("flaky")) == "Fix the flaky test"


def test_a_long_text_is_cut_around_its_first_matching_term_with_ellipses():
    text = "alpha " * 20 + "needle " + "omega " * 20
    out = excerpt(text, parse_query("needle"), width=40)
    assert len(out) == 40
    assert out.startswith("…")
    assert out.endswith("…")
    assert "needle" in out
    assert out[1:-1] in " ".join(text.split())


def test_an_excerpt_starting_at_the_text_start_has_no_leading_ellipsis():
    text = "needle " + "omega " * 40
    out = excerpt(text, parse_query("needle"), width=40)
    assert out.startswith("needle ")
    assert out.endswith("…")


def test_an_excerpt_reaching_the_text_end_has_no_trailing_ellipsis():
    text = "alpha " * 40 + "needle"
    out = excerpt(text, parse_query("needle"), width=40)
    assert out.startswith("…")
    assert out.endswith("needle")
    assert len(out) <= 40


def test_an_excerpt_centres_on_the_earliest_of_the_matching_terms():
    text = "alpha " * 20 + "second " + "omega " * 20 + "first " + "omega " * 20
    out = excerpt(text, parse_query("first second"), width=40)
    assert "second" in out


def test_an_excerpt_shows_the_body_of_an_agent_message():
    text = '<agent-message from="worker" id="01JWORKE">\nshort body\n</agent-message>'
    assert excerpt(text, parse_query("body")) == "short body"


def test_unwrap_returns_the_body_of_an_agent_message():
    wrapped = '<agent-message from="worker" id="01JWORKE" note="Reply with send">\nline 1\nline 2\n</agent-message>'  # noqa: E501
    assert unwrap(wrapped) == "line 1\nline 2"


def test_unwrap_leaves_other_text_alone():
    assert unwrap("plain request") == "plain request"
    assert unwrap("<agent-message-ish>\nx\n</agent-message>x") == (
        "<agent-message-ish>\nx\n</agent-message>x"
    )


def test_one_line_flattens_whitespace_and_cuts_with_an_ellipsis():
    assert one_line("a\n b\t c") == "a b c"
    assert one_line("x" * 50, width=10) == "x" * 9 + "…"


def test_stamp_is_local_date_and_minute():
    assert stamp(ms(2025, 3, 4, 5, 6)) == "2025-03-04 05:06"


# ---- the page --------------------------------------------------------------------------------


def row(agent_id, name, owner_id, state, cwd, request=None, short=None):
    shown = Shown(name, short or agent_id[:8])
    return ListRow(agent_id, shown, owner_id, state, cwd, request)


def test_a_page_shows_each_entry_with_its_latest_request():
    rows = [
        row(WORKER_ID, "worker", ROOT_ID, "running", "/p/a", (ms(2025, 3, 4, 5, 6), "Fix it")),
        row(REVIEWER_ID, "reviewer", ROOT_ID, "idle", "/p/b"),
    ]
    text, details = render_page(rows, total=2, offset=0)
    assert text == (
        "worker (01JWORKE)  running  /p/a\n"
        "  2025-03-04 05:06  Fix it\n"
        "reviewer (01JREVIE)  idle  /p/b"
    )
    assert details == {
        "total": 2,
        "agents": [
            {"id": WORKER_ID, "name": "worker", "ownerId": ROOT_ID, "state": "running"},
            {"id": REVIEWER_ID, "name": "reviewer", "ownerId": ROOT_ID, "state": "idle"},
        ],
    }


def test_an_unnamed_root_is_listed_by_id_without_name_or_owner_in_details():
    rows = [row(ROOT_ID, None, None, "waiting", "/home/u")]
    text, details = render_page(rows, total=1, offset=0)
    assert text == "01JROOT9  waiting  /home/u"
    assert details == {"total": 1, "agents": [{"id": ROOT_ID, "state": "waiting"}]}


def test_a_named_root_has_a_name_but_no_owner_in_details():
    rows = [row(ROOT_ID, "main", None, "idle", "/home/u")]
    _, details = render_page(rows, total=1, offset=0)
    assert details["agents"] == [{"id": ROOT_ID, "name": "main", "state": "idle"}]


def test_a_partial_page_ends_with_the_remaining_count_and_the_next_offset():
    rows = [
        row(WORKER_ID, "worker", ROOT_ID, "queued", "/p/a"),
        row(REVIEWER_ID, "reviewer", ROOT_ID, "idle", "/p/b"),
    ]
    text, details = render_page(rows, total=9, offset=4)
    assert text.endswith("\n[3 more results. Use offset=6 to continue.]")
    assert text.startswith("worker (01JWORKE)  queued  /p/a\nreviewer (01JREVIE)  idle  /p/b\n")
    assert details["total"] == 9
    assert len(details["agents"]) == 2


def test_the_last_page_has_no_more_results_line():
    rows = [row(WORKER_ID, "worker", ROOT_ID, "idle", "/p/a")]
    text, _ = render_page(rows, total=5, offset=4)
    assert "more results" not in text


def test_no_matching_agents_keeps_an_empty_agents_array():
    assert render_page([], total=0, offset=0) == ("No matching Agents.", {"total": 0, "agents": []})
