"""How messages read in the transcript (pure)."""

from piagents.agents.texts import Shown, agent_message
from piagents.agents.wait_output import ResultItem, render_wait
from piagents.supervision.texts import question_notification, terminal_result
from piagents.tui import message_text
from piagents.tui.message_text import (
    ManagedMessage,
    WaitResult,
    WaitView,
    fold,
    managed_message,
    tool_arguments,
    wait_view,
)


def test_a_message_from_another_agent_names_its_sender():
    text = agent_message(Shown("w", "1a2b3c4d"), "the body\nof two lines", reply_note=True)

    parsed = message_text.agent_message(text)

    assert parsed is not None
    assert parsed.sender == "w (1a2b3c4d)"
    assert parsed.body == "the body\nof two lines"
    assert parsed.note == "Reply with send"


def test_an_unnamed_root_is_named_by_its_id_alone():
    parsed = message_text.agent_message(
        agent_message(Shown(None, "9f8e7d6c"), "hi", reply_note=False)
    )

    assert parsed is not None and parsed.sender == "9f8e7d6c" and parsed.note is None


def test_the_users_own_text_is_not_an_agent_message():
    assert message_text.agent_message("<agent-message>not really") is None


def test_tool_arguments_show_the_main_argument_of_built_in_tools():
    assert tool_arguments("bash", {"command": "ls -la"}) == "ls -la"
    assert tool_arguments("write", {"path": "a.py", "content": "x" * 500}) == "a.py"
    assert tool_arguments("read", {"path": "a.py", "offset": 3}) == 'a.py {"offset": 3}'
    assert (
        tool_arguments("agent", {"action": "spawn", "name": "w", "message": "go"}) == "spawn w: go"
    )
    assert tool_arguments("agent", {"action": "wait", "target": ["a", "b"]}) == "wait a, b"
    assert tool_arguments("custom", {"k": 1}) == '{"k": 1}'
    assert len(tool_arguments("bash", {"command": "y" * 500}, width=40)) == 40


def test_long_results_fold_to_their_first_lines_until_expanded():
    text = "\n".join(f"l{i}" for i in range(20))

    assert fold(text, expanded=False, lines=8) == ("\n".join(f"l{i}" for i in range(8)), 12)
    assert fold(text, expanded=True) == (text, 0)
    assert fold("short\n", expanded=False) == ("short", 0)


# ---- wait results ---------------------------------------------------------------------

POET = "6ebfb695-f74a-4a5a-82fd-e008a9794c9e"
CHEF = "05203cda-5b0e-4b5a-9b90-98de9611475c"


def item(agent_id, name, outcome, text, history=False):
    short = agent_id[:8]
    return ResultItem(f"in-{name}", agent_id, Shown(name, short), outcome, text, history)


def test_wait_results_are_read_as_one_record_per_agent():
    out = render_wait(
        [
            item(POET, "poet", "completed", "Waves fold on sand,\nsalt wind hums."),
            item(CHEF, "chef", "failed", "HTTP 500", history=True),
        ],
        [],
        False,
    )

    view = wait_view(out.text, out.details)

    assert view == WaitView(
        (
            WaitResult(
                "poet", "6ebfb695", "completed", False, "Waves fold on sand,\nsalt wind hums."
            ),
            WaitResult("chef", "05203cda", "failed", True, "HTTP 500"),
        ),
        (),
    )


def test_the_lines_after_the_results_are_kept_as_notes():
    out = render_wait(
        [item(POET, "poet", "completed", "done")], [(CHEF, Shown("chef", "05203cda"))], True
    )

    view = wait_view(out.text, out.details)

    assert view is not None and [r.name for r in view.results] == ["poet"]
    assert view.notes == (
        "Still pending: chef (05203cda)",
        "Stopped waiting for a new message. Wait again to keep waiting.",
    )


def test_a_single_answer_returned_alone_still_gets_its_agent():
    out = render_wait([item(POET, "poet", "completed", "Waves.")], [], False)
    assert out.text == "Waves."

    view = wait_view(out.text, out.details)

    assert view == WaitView((WaitResult("poet", "6ebfb695", "completed", False, "Waves."),), ())


def test_a_cut_result_keeps_its_notice_and_omitted_ones_are_named():
    long = "\n".join(f"line {i}" for i in range(50))
    out = render_wait(
        [item(POET, "poet", "completed", long), item(CHEF, "chef", "completed", "pasta")],
        [],
        False,
        full_output_path="/tmp/out.txt",
        max_lines=20,
    )

    view = wait_view(out.text, out.details)

    assert view is not None
    poet, chef = view.results
    assert poet.text is not None and poet.text.startswith("line 0\n")
    assert chef.text is None  # omitted: the model did not read it either
    assert any(n.startswith("[Showing lines 1-") and "/tmp/out.txt" in n for n in view.notes)
    assert view.notes[-1] == "[Results omitted: chef (05203cda). Use wait with fewer targets.]"


def test_other_results_are_not_wait_results():
    assert wait_view("No results.", {"results": [], "pending": []}) is None
    assert wait_view("Agent w (1a2b3c4d) started.", {"agent": {"id": POET}}) is None
    assert wait_view("whatever", None) is None


# ---- a lead's managed agents ---------------------------------------------------------------


def test_a_managed_agents_result_is_read_with_its_status_answer_and_error():
    text = terminal_result(
        agent="generalist-1",
        definition="generalist",
        session="7e0d35aa-bfe4",
        request="5ccd2461",
        status="failed",
        final_answer="Half of it:\nthe parser.",
        error="HTTP 500",
    )

    assert managed_message(text) == ManagedMessage(
        "generalist-1",
        "generalist",
        "7e0d35aa-bfe4",
        "failed",
        "Half of it:\nthe parser.",
        "HTTP 500",
    )


def test_a_retired_agents_handoff_is_its_body():
    text = terminal_result(
        agent="scout-2",
        definition="scout",
        session="s",
        request="r",
        status="retired",
        final_answer="notes",
    )

    parsed = managed_message(text)

    assert parsed is not None and (parsed.status, parsed.body) == ("retired", "notes")


def test_a_question_to_the_lead_is_read_as_asked():
    text = question_notification(
        agent="reviewer-1",
        definition="reviewer",
        session="s",
        request="r",
        ask="a",
        question="Which branch?",
    )

    assert managed_message(text) == ManagedMessage(
        "reviewer-1", "reviewer", "s", "asks", "Which branch?"
    )


def test_the_users_own_text_is_not_a_managed_agents_message():
    assert managed_message("Agent x completed its assignment.") is None
