"""What `wait` returns (spec §5, §6 results and truncation): blocks, pending, truncation."""

from piagents.agents.texts import Shown
from piagents.agents.wait_output import ResultItem, UnreadBlocks, block_of, render_wait

ALPHA_ID = "01JALPHAAAAAAAAAAAAAAAAAAA"
BETA_ID = "01JBETABBBBBBBBBBBBBBBBBBB"
GAMMA_ID = "01JGAMMACCCCCCCCCCCCCCCCCC"
DELTA_ID = "01JDELTADDDDDDDDDDDDDDDDDD"
ALPHA = Shown("alpha", "01JALPHA")
BETA = Shown("beta", "01JBETAB")
GAMMA = Shown("gamma", "01JGAMMA")
DELTA = Shown("delta", "01JDELTA")


def alpha(text="Alpha is done.", outcome="completed", history=False, input_id="in-alpha"):
    return ResultItem(input_id, ALPHA_ID, ALPHA, outcome, text, history)


def beta(text="Beta is done.", outcome="completed", history=False, input_id="in-beta"):
    return ResultItem(input_id, BETA_ID, BETA, outcome, text, history)


def gamma(text="boom", outcome="failed", history=False, input_id="in-gamma"):
    return ResultItem(input_id, GAMMA_ID, GAMMA, outcome, text, history)


def lines(prefix, n, width=0):
    return "\n".join(f"{prefix}{i}".ljust(width, "y") for i in range(n))


# ---- results without truncation ---------------------------------------------------------


def test_a_single_unread_completed_result_with_nothing_pending_is_the_answer_alone():
    out = render_wait([alpha()], [], False)
    assert out.text == "Alpha is done."
    assert out.details == {
        "results": [
            {
                "id": ALPHA_ID,
                "name": "alpha",
                "state": "completed",
                "history": False,
                "result": "Alpha is done.",
            }
        ],
        "pending": [],
    }
    assert out.returned == ("in-alpha",)
    assert out.full_text is None


def test_a_single_failed_result_is_a_block():
    out = render_wait([gamma()], [], False)
    assert (
        out.text
        == '<agent-result name="gamma" id="01JGAMMA" status="failed">\nboom\n</agent-result>'
    )
    assert out.details["results"][0]["state"] == "failed"


def test_a_single_aborted_result_is_a_block():
    out = render_wait([alpha("Aborted by owner.", outcome="aborted")], [], False)
    assert out.text == (
        '<agent-result name="alpha" id="01JALPHA" status="aborted">\n'
        "Aborted by owner.\n"
        "</agent-result>"
    )


def test_several_results_are_blocks_separated_by_a_blank_line():
    out = render_wait([alpha(), beta()], [], False)
    assert out.text == (
        '<agent-result name="alpha" id="01JALPHA" status="completed">\n'
        "Alpha is done.\n"
        "</agent-result>\n"
        "\n"
        '<agent-result name="beta" id="01JBETAB" status="completed">\n'
        "Beta is done.\n"
        "</agent-result>"
    )
    assert out.returned == ("in-alpha", "in-beta")


def test_a_history_result_carries_history_true_and_is_never_the_answer_alone():
    out = render_wait([alpha(history=True)], [], False)
    assert out.text == (
        '<agent-result name="alpha" id="01JALPHA" status="completed" history="true">\n'
        "Alpha is done.\n"
        "</agent-result>"
    )
    assert out.details["results"][0]["history"] is True


def test_an_unread_result_next_to_a_history_result_is_not_alone():
    out = render_wait([alpha("Old answer.", history=True, input_id="old"), alpha()], [], False)
    assert out.text == (
        '<agent-result name="alpha" id="01JALPHA" status="completed" history="true">\n'
        "Old answer.\n"
        "</agent-result>\n"
        "\n"
        '<agent-result name="alpha" id="01JALPHA" status="completed">\n'
        "Alpha is done.\n"
        "</agent-result>"
    )
    assert [r["history"] for r in out.details["results"]] == [True, False]


def test_results_are_followed_by_the_agents_still_pending():
    out = render_wait([alpha()], [(BETA_ID, BETA), (DELTA_ID, DELTA)], False)
    assert out.text == (
        '<agent-result name="alpha" id="01JALPHA" status="completed">\n'
        "Alpha is done.\n"
        "</agent-result>\n"
        "\n"
        "Still pending: beta (01JBETAB), delta (01JDELTA)"
    )
    assert out.details["pending"] == [
        {"id": BETA_ID, "name": "beta"},
        {"id": DELTA_ID, "name": "delta"},
    ]
    assert "interrupted" not in out.details


def test_a_timeout_with_no_results_names_only_the_pending_agents():
    out = render_wait([], [(BETA_ID, BETA)], False)
    assert out.text == "Still pending: beta (01JBETAB)"
    assert out.details == {"results": [], "pending": [{"id": BETA_ID, "name": "beta"}]}


def test_a_wait_ended_by_a_steer_input_adds_the_stopped_line_after_the_pending_line():
    out = render_wait([alpha()], [(BETA_ID, BETA)], True)
    assert out.text == (
        '<agent-result name="alpha" id="01JALPHA" status="completed">\n'
        "Alpha is done.\n"
        "</agent-result>\n"
        "\n"
        "Still pending: beta (01JBETAB)\n"
        "Stopped waiting for a new message. Wait again to keep waiting."
    )
    assert out.details["interrupted"] is True


def test_an_interrupted_wait_without_results_shows_pending_then_stopped():
    out = render_wait([], [(BETA_ID, BETA)], True)
    assert out.text == (
        "Still pending: beta (01JBETAB)\n"
        "Stopped waiting for a new message. Wait again to keep waiting."
    )
    assert out.details == {
        "results": [],
        "pending": [{"id": BETA_ID, "name": "beta"}],
        "interrupted": True,
    }


def test_no_results_and_nothing_pending_is_no_results():
    out = render_wait([], [], False)
    assert out.text == "No results."
    assert out.details == {"results": [], "pending": []}
    assert out.returned == ()
    assert out.full_text is None


def test_details_carry_full_ids_while_the_text_shows_short_ids():
    out = render_wait([gamma()], [(DELTA_ID, DELTA)], False)
    assert out.details["results"][0]["id"] == GAMMA_ID
    assert out.details["pending"][0]["id"] == DELTA_ID
    assert GAMMA_ID not in out.text
    assert DELTA_ID not in out.text


# ---- truncation --------------------------------------------------------------------------


def test_the_result_crossing_the_line_limit_keeps_its_closing_tag_and_later_ones_are_omitted():
    items = [alpha(lines("a", 3)), beta(lines("b", 30)), gamma()]
    out = render_wait(
        items,
        [(DELTA_ID, DELTA)],
        True,
        full_output_path="/tmp/wait-1.txt",
        max_lines=20,
        max_bytes=10_000,
    )
    assert out.text == (
        '<agent-result name="alpha" id="01JALPHA" status="completed">\n'
        "a0\na1\na2\n"
        "</agent-result>\n"
        "\n"
        '<agent-result name="beta" id="01JBETAB" status="completed">\n'
        "b0\nb1\nb2\nb3\nb4\n"
        "\n"
        "[Showing lines 1-5 of 30. Full output: /tmp/wait-1.txt]\n"
        "</agent-result>\n"
        "\n"
        "Still pending: delta (01JDELTA)\n"
        "Stopped waiting for a new message. Wait again to keep waiting.\n"
        "\n"
        "[Results omitted: gamma (01JGAMMA). Use wait with fewer targets.]"
    )
    assert len(out.text.split("\n")) <= 20
    assert out.returned == ("in-alpha", "in-beta")
    assert out.details["fullOutputPath"] == "/tmp/wait-1.txt"
    assert out.details["interrupted"] is True
    assert out.details["pending"] == [{"id": DELTA_ID, "name": "delta"}]
    truncation = out.details["truncation"]
    assert truncation["truncated"] is True
    assert truncation["truncatedBy"] == "lines"
    assert (truncation["totalLines"], truncation["outputLines"]) == (30, 5)
    assert out.details["results"] == [
        {
            "id": ALPHA_ID,
            "name": "alpha",
            "state": "completed",
            "history": False,
            "result": "a0\na1\na2",
        },
        {
            "id": BETA_ID,
            "name": "beta",
            "state": "completed",
            "history": False,
            "result": "b0\nb1\nb2\nb3\nb4",
        },
        {"id": GAMMA_ID, "name": "gamma", "state": "failed", "history": False},
    ]


def test_the_full_text_of_a_truncated_wait_is_the_untruncated_output():
    items = [alpha(lines("a", 3)), beta(lines("b", 30)), gamma()]
    pending = [(DELTA_ID, DELTA)]
    out = render_wait(items, pending, True, full_output_path="/tmp/w.txt", max_lines=20)
    assert out.full_text == render_wait(items, pending, True).text


def test_a_result_cut_by_the_byte_limit_names_the_limit_in_its_notice():
    items = [alpha(lines("a", 3)), beta(lines("b", 30, width=50)), gamma()]
    out = render_wait(items, [], False, full_output_path="/tmp/wait-2.txt", max_bytes=600)
    assert len(out.text.encode("utf-8")) <= 600
    assert "\n\n[Showing lines 1-5 of 30 (600B limit). Full output: /tmp/wait-2.txt]\n" in out.text
    assert out.text.endswith(
        "</agent-result>\n\n[Results omitted: gamma (01JGAMMA). Use wait with fewer targets.]"
    )
    assert out.details["truncation"]["truncatedBy"] == "bytes"
    assert out.details["results"][1]["result"] == lines("b", 5, width=50)
    assert out.returned == ("in-alpha", "in-beta")


def test_several_omitted_results_are_all_named_and_stay_unreturned():
    items = [alpha(lines("a", 30)), beta(), gamma()]
    out = render_wait(items, [], False, full_output_path="/tmp/w.txt", max_lines=10)
    assert out.text.endswith(
        "[Results omitted: beta (01JBETAB), gamma (01JGAMMA). Use wait with fewer targets.]"
    )
    assert out.returned == ("in-alpha",)
    assert ["result" in r for r in out.details["results"]] == [True, False, False]
    assert len(out.text.split("\n")) <= 10


def test_a_truncated_single_answer_stays_alone_with_the_notice():
    out = render_wait(
        [alpha(lines("a", 30))], [], False, full_output_path="/tmp/w.txt", max_lines=10
    )
    assert (
        out.text
        == "a0\na1\na2\na3\na4\na5\na6\na7\n\n[Showing lines 1-8 of 30. Full output: /tmp/w.txt]"
    )
    assert out.returned == ("in-alpha",)
    assert out.details["results"][0]["result"] == "a0\na1\na2\na3\na4\na5\na6\na7"
    assert out.full_text == lines("a", 30)


def test_a_truncated_history_result_keeps_its_history_attribute():
    out = render_wait(
        [alpha(lines("a", 30), history=True)], [], False, full_output_path="/p", max_lines=10
    )
    assert out.text.startswith(
        '<agent-result name="alpha" id="01JALPHA" status="completed" history="true">\na0\n'
    )
    assert out.text.endswith("\n\n[Showing lines 1-6 of 30. Full output: /p]\n</agent-result>")
    assert len(out.text.split("\n")) == 10


def test_truncated_output_never_exceeds_the_limits():
    items = [alpha(lines("a", 12, width=30)), beta(lines("b", 40, width=20)), gamma()]
    for max_lines in range(12, 60, 3):
        for max_bytes in range(500, 2500, 150):
            out = render_wait(
                items,
                [(DELTA_ID, DELTA)],
                True,
                full_output_path="/tmp/wait.txt",
                max_lines=max_lines,
                max_bytes=max_bytes,
            )
            assert len(out.text.split("\n")) <= max_lines
            assert len(out.text.encode("utf-8")) <= max_bytes
            assert out.text.count("<agent-result") == out.text.count("</agent-result>")
            shown = [r for r in out.details["results"] if "result" in r]
            assert len(shown) == len(out.returned)


def test_blocks_made_ahead_render_as_the_blocks_made_for_the_page():
    items = [alpha(lines("a", 12, width=30)), beta(lines("b", 40, width=20)), gamma()]
    for max_lines in range(12, 60, 7):
        for max_bytes in (500, 1200, 5000):
            for chosen in (items, items[:1], items[1:]):
                args = ([(DELTA_ID, DELTA)], False)
                limits = {"max_lines": max_lines, "max_bytes": max_bytes}
                made = render_wait(chosen, *args, full_output_path="/tmp/w.txt", **limits)
                ahead = render_wait(
                    chosen,
                    *args,
                    blocks=[block_of(i) for i in chosen],
                    full_output_path="/tmp/w.txt",
                    **limits,
                )
                assert ahead == made


def test_unread_blocks_are_made_once_until_read_or_until_agents_change():
    memo = UnreadBlocks().at(7)
    first = memo.put(alpha())
    memo.put(beta())
    assert memo.get("in-alpha") is first and len(memo) == 2
    assert memo.at(7).get("in-alpha") is first  # nothing changed: kept
    memo.forget(["in-alpha"])  # read: gone
    assert memo.get("in-alpha") is None and len(memo) == 1
    assert memo.at(8).get("in-beta") is None and not memo  # an Agent added or renamed
