"""Every model-facing text of the supervision face, to the character.

(Named apart from tests/agents/test_texts.py: test modules share one namespace.)
"""

import json

import pytest

from piagents.supervision import texts
from piagents.supervision.texts import AgentLine, DefinitionLine, ForegroundProcess

SESSION = "0193a6f1-6c3e-7b2a-9d4e-5f6a7b8c9d0e"


# ---- the agent tool's description -------------------------------------------------


def test_the_description_explains_the_nine_actions_and_the_rules():
    assert texts.DESCRIPTION == (
        "Delegate work to managed agents and supervise them. `list` shows the agent "
        "definitions you may delegate to and your agents, each with its state and "
        "`available_actions`. `delegate` starts a new agent from a definition with one task; "
        "`continue` starts a new agent on a saved session (the exact `session` from an "
        "agent's result) with a new task; `steer` adds to an agent's current assignment at "
        "its next safe boundary; `interrupt` cancels an agent's current operation and "
        "continues the same assignment with your replacement message; `reply` answers an "
        "agent's pending `ask_owner` question; `close` closes an agent, closing the agents it "
        "owns first; `inspect` shows an agent's recent live output and foreground commands; "
        "`transcript` reads its saved conversation. Each `delegate` or `continue` is one "
        "agent generation with exactly one assignment: an agent never receives a second "
        "assignment, so for follow-up work call `continue` with the session from its result. "
        "`delegate` and `continue` return as soon as the agent is recorded, not when it "
        "finishes; its result arrives later as a message, exactly once, so do not poll for "
        "it. Use `steer`, `interrupt`, `reply`, `close`, `inspect` and `transcript` only when "
        "`list` shows them in the agent's `available_actions`, which is authoritative; do not "
        "infer them from `state`. `files` (on `delegate`, `continue`, `steer`, `interrupt` "
        "and `reply`) are paths resolved from your working directory: readable UTF-8 files "
        "that fit the message limit are embedded, others are passed as paths. `timeoutMs` "
        "(on `delegate` and `continue`) is the startup budget, an integer from 5001 through "
        "300000. Do not attach or mention agent instruction files such as `AGENTS.md`, "
        "`CLAUDE.md` or `GEMINI.md` merely because they exist: the agent discovers them "
        "itself. Attach one only when the task requires inspecting, modifying, comparing or "
        "transmitting it, the user requests it, or its instructions would not otherwise reach "
        "the agent. Attach a `SKILL.md` only when the task needs it and the definition does "
        "not already provide that skill. Ordinary relevant source, documentation, "
        "configuration and evidence files remain attachable."
    )


@pytest.mark.parametrize(
    "action",
    [
        "list",
        "delegate",
        "continue",
        "steer",
        "interrupt",
        "reply",
        "close",
        "inspect",
        "transcript",
    ],
)
def test_the_description_names_every_action(action):
    assert f"`{action}`" in texts.DESCRIPTION


def test_the_prompt_snippet_and_guidelines():
    assert texts.PROMPT_SNIPPET == "Delegate work to managed agents and supervise them"
    assert texts.PROMPT_GUIDELINES == (
        "Use `agent(action='delegate', definition=..., task=...)` for concrete, bounded work "
        "with a clear expected result; make the task self-contained.",
        "After delegating, keep working or end your turn: each agent's result arrives as a "
        "message. Use `list` for state and `available_actions` instead of polling.",
        "For follow-up work on a finished agent's context, call `continue` with the exact "
        "session from its result; for a retired session, delegate a fresh agent instead.",
    )


def test_the_parameter_descriptions():
    assert texts.PARAMETER_DESCRIPTIONS == {
        "action": "Operation and its fields: `list()`, `delegate(definition, task, label?, "
        "cwd?, files?, fork?, timeoutMs?)`, `continue(session, task, files?, timeoutMs?)`, "
        "`steer(agent, message, files?)`, `interrupt(agent, message, files?)`, "
        "`reply(agent, message, files?)`, `close(agent)`, `inspect(agent)`, or "
        "`transcript(agent)`.",
        "definition": "Name of an agent definition listed by `list`, for `delegate`.",
        "task": "The one assignment for `delegate` or `continue`: self-contained, saying what "
        "result is expected.",
        "label": "Label of the new agent for `delegate`: a lower-case letter, then up to 31 "
        "lower-case letters, digits, `_` or `-` (default: `<definition>-<n>`).",
        "cwd": "Working directory of the new agent for `delegate` (default: yours).",
        "files": "Paths of files for `delegate`, `continue`, `steer`, `interrupt` or `reply`, "
        "resolved from your working directory. UTF-8 files that fit the message limit are "
        "embedded; others are passed as paths.",
        "fork": "For `delegate`: the exact saved session path or full session UUID whose "
        "conversation the new agent starts from (default: a new session).",
        "session": "For `continue`: the exact saved session path or full session UUID, as "
        "given in an agent's result.",
        "timeoutMs": "Startup budget in milliseconds for `delegate` or `continue`: an integer "
        "from 5001 through 300000.",
        "agent": "The exact agent label from `list`, for `steer`, `interrupt`, `reply`, "
        "`close`, `inspect` or `transcript`.",
        "message": "Non-empty text for `steer`, `interrupt` (the replacement instruction) or "
        "`reply` (the answer).",
    }


# ---- ask_owner ------------------------------------------------------------------------


def test_the_ask_owner_description():
    assert texts.ASK_OWNER_DESCRIPTION == (
        "Ask your owner, who gave you your assignment, one question and wait for the answer. "
        "Use it only when you cannot finish your assignment without the owner's decision or "
        "information. It must be the only tool call of its turn. You can ask one question per "
        "assignment, so include everything the owner needs to answer it. You are blocked "
        "until the owner replies; there is no timeout. The answer is the result of this call."
    )
    assert texts.ASK_OWNER_PROMPT_SNIPPET == ("Ask your owner one question and wait for the answer")
    assert texts.ASK_OWNER_PROMPT_GUIDELINES == (
        "Call `ask_owner` alone in its turn, at most once per assignment, and only when you "
        "cannot go on without your owner's answer.",
    )
    assert texts.ASK_OWNER_PARAMETER_DESCRIPTIONS == {
        "question": "The question for your owner: non-empty and self-contained.",
        "files": "Paths of files to attach, resolved from your working directory.",
    }


def test_the_ask_owner_refusal_texts():
    assert texts.ASK_OWNER_NOT_ALONE == (
        "ask_owner must be the only tool call of its turn. Call it again on its own, or go on "
        "without asking."
    )
    assert texts.ASK_OWNER_ALREADY_ASKED == (
        "You have already asked your owner a question in this assignment. Go on with what you "
        "have, and state in your final answer what remains open."
    )
    assert texts.ASK_OWNER_NO_OWNER == (
        "ask_owner is only for managed agents: you have no owner to ask."
    )


# ---- delegate and continue ---------------------------------------------------------------


def test_delegated_names_the_agent_definition_session_and_request():
    assert texts.delegated(
        agent="implementer-1", definition="implementer", session=SESSION, request="req-7"
    ) == (
        f"Delegated: agent=implementer-1 definition=implementer session={SESSION} "
        "request=req-7\n"
        "Its result will arrive later as a message, exactly once; do not poll for it. "
        "Use list for its state and available_actions."
    )


def test_delegated_adds_the_pane_when_startup_reported_one():
    text = texts.delegated(
        agent="scout-1", definition="scout", session="s1", request="r1", pane="%3"
    )
    assert text.splitlines()[0] == (
        "Delegated: agent=scout-1 definition=scout session=s1 request=r1 pane=%3"
    )


def test_continued_has_the_same_shape():
    assert texts.continued(
        agent="implementer-1", definition="implementer", session=SESSION, request="req-9"
    ) == (
        f"Continued: agent=implementer-1 definition=implementer session={SESSION} "
        "request=req-9\n"
        "Its result will arrive later as a message, exactly once; do not poll for it. "
        "Use list for its state and available_actions."
    )


# ---- steer, interrupt, reply, close ---------------------------------------------------


def test_control_acknowledgements():
    assert texts.steered("implementer-1") == (
        "Steered implementer-1: your message joins its current assignment at its next safe "
        "boundary."
    )
    assert texts.interrupted("implementer-1") == (
        "Interrupted implementer-1: its current operation is being cancelled, and it "
        "continues the same assignment with your message."
    )
    assert texts.replied("implementer-1") == (
        "Replied to implementer-1: it continues its assignment with your answer."
    )


def test_closed_alone():
    assert texts.closed("scout-1") == "Closed scout-1."


def test_closed_with_cascade_question_and_session():
    assert texts.closed(
        "reviewer-1",
        session=SESSION,
        cascaded=["scout-1", "researcher-2"],
        abandoned_question=True,
    ) == (
        "Closed reviewer-1. Its agents were closed first: scout-1, researcher-2. "
        f"Its pending question was abandoned. Its session {SESSION} remains available for "
        "continue."
    )


# ---- list -------------------------------------------------------------------------------

ROSTER = [
    DefinitionLine("implementer", "Implements an approved change.", "bundled"),
    DefinitionLine("reviewer", "Reviews a change.", "global", delegates_to=("scout", "researcher")),
    DefinitionLine("old", "Retired helper.", "global", enabled=False),
    DefinitionLine("local", "", "project", trusted=False),
]


def test_list_shows_the_roster_then_one_line_per_agent():
    agents = [
        AgentLine(
            "implementer-1",
            "working",
            ("steer", "interrupt", "close", "transcript"),
            "implementer",
            SESSION,
            request="req-7",
        ),
        AgentLine("scout-2", "blocked", ("reply", "close"), "scout", "s2", "req-8", True, "rv-1"),
        AgentLine("scout-3", "unknown", (), "scout", "s3"),
    ]
    assert texts.list_text(ROSTER, agents) == (
        "Agent definitions:\n"
        "- implementer (bundled): Implements an approved change.\n"
        "- reviewer (global; delegates to scout, researcher): Reviews a change.\n"
        "- old (global; disabled): Retired helper.\n"
        "- local (project; untrusted project: cannot be delegated to): (no description)\n"
        "\n"
        "Agents:\n"
        "implementer-1  working  actions=steer,interrupt,close,transcript  "
        f"definition=implementer  session={SESSION}  request=req-7\n"
        "scout-2  blocked  actions=reply,close  definition=scout  session=s2  request=req-8  "
        "parent=rv-1  stale\n"
        "scout-3  unknown  actions=none  definition=scout  session=s3\n"
        "\n"
        "available_actions are authoritative: use only the actions listed."
    )


def test_list_with_nothing_to_show():
    assert texts.list_text([], []) == "Agent definitions:\n(none)\n\nAgents:\n(none)"


# ---- inspect -------------------------------------------------------------------------------


def test_inspect_shows_identity_commands_and_recent_activity():
    assert texts.inspect_text(
        agent="implementer-1",
        session=SESSION,
        pane="%4",
        processes=[ForegroundProcess(4242, "pytest -q tests"), ForegroundProcess(4250, "sleep 5")],
        recent_output="$ pytest -q tests\n....F\n1 failed",
        recent_output_truncated=False,
    ) == (
        f"agent=implementer-1 session={SESSION} pane=%4\n"
        "Foreground commands:\n"
        "- pid 4242: pytest -q tests\n"
        "- pid 4250: sleep 5\n"
        "\n"
        "Recent activity (last 80 lines):\n"
        "$ pytest -q tests\n"
        "....F\n"
        "1 failed"
    )


def test_inspect_says_when_the_byte_cap_cut_the_output():
    text = texts.inspect_text(
        agent="a-1",
        session="s",
        pane="p",
        processes=[],
        recent_output="tail",
        recent_output_truncated=True,
    )
    assert text == (
        "agent=a-1 session=s pane=p\n"
        "Foreground commands: none\n"
        "\n"
        "Recent activity (last 80 lines, cut to its last 16 KiB):\n"
        "tail"
    )


def test_inspect_with_no_activity():
    text = texts.inspect_text(
        agent="a-1",
        session="s",
        pane="p",
        processes=[],
        recent_output="",
        recent_output_truncated=False,
    )
    assert text == "agent=a-1 session=s pane=p\nForeground commands: none\nRecent activity: none"


# ---- transcript --------------------------------------------------------------------------------


def test_transcript_text_with_the_flag():
    assert texts.transcript_text(
        agent="scout-1", session="s1", transcript="[user]\nFind it.", truncated=False
    ) == (
        "Transcript of scout-1.\n"
        "agent=scout-1 session=s1 transcript_truncated=false\n"
        "\n"
        "[user]\n"
        "Find it."
    )


def test_a_truncated_transcript_says_where_parts_are_omitted():
    assert texts.transcript_text(
        agent="scout-1", session="s1", transcript="[... 9 bytes omitted ...]", truncated=True
    ) == (
        "Transcript of scout-1.\n"
        "agent=scout-1 session=s1 transcript_truncated=true\n"
        "Parts are omitted where marked with [... ...].\n"
        "\n"
        "[... 9 bytes omitted ...]"
    )


def test_an_empty_transcript():
    assert texts.transcript_text(agent="a", session="s", transcript="", truncated=False) == (
        "Transcript of a.\nagent=a session=s transcript_truncated=false\n\n(no messages yet)"
    )


# ---- the terminal result -------------------------------------------------------------------


def result(status, final_answer="All tests pass.", error=None):
    return texts.terminal_result(
        agent="implementer-1",
        definition="implementer",
        session=SESSION,
        request="req-7",
        status=status,
        final_answer=final_answer,
        error=error,
    )


def test_a_completed_result():
    assert result("completed") == (
        "Agent implementer-1 completed its assignment.\n"
        f"agent=implementer-1 definition=implementer session={SESSION} request=req-7 "
        "status=completed\n"
        f'To continue this work later: {{"action": "continue", "session": "{SESSION}", '
        '"task": "..."}\n'
        "\n"
        "Final answer:\n"
        "All tests pass."
    )


def test_a_failed_result_states_its_error():
    assert result("failed", final_answer="", error="The model returned an error.") == (
        "Agent implementer-1 failed.\n"
        f"agent=implementer-1 definition=implementer session={SESSION} request=req-7 "
        "status=failed\n"
        "Error: The model returned an error.\n"
        f'To continue this work later: {{"action": "continue", "session": "{SESSION}", '
        '"task": "..."}\n'
        "\n"
        "Final answer:\n"
        "(none)"
    )


@pytest.mark.parametrize(
    ("status", "headline"),
    [
        ("aborted", "Agent implementer-1 was aborted before it finished its assignment."),
        ("closed", "Agent implementer-1 was closed before it finished its assignment."),
        ("lost", "Agent implementer-1 was lost: its execution ended before it recorded a result."),
    ],
)
def test_results_that_ended_early_keep_the_continue_call(status, headline):
    lines = result(status, final_answer="Partial notes.").splitlines()
    assert lines[0] == headline
    assert lines[1].endswith(f"status={status}")
    assert json.loads(lines[2].removeprefix("To continue this work later: ")) == {
        "action": "continue",
        "session": SESSION,
        "task": "...",
    }
    assert lines[-2:] == ["Final answer:", "Partial notes."]


def test_a_retired_result_asks_for_a_fresh_agent_with_the_handoff():
    assert result("retired", final_answer="Done: parser. Left: tests in test_parser.py.") == (
        "Agent implementer-1 was retired: its context is full.\n"
        f"agent=implementer-1 definition=implementer session={SESSION} request=req-7 "
        "status=retired\n"
        "This session is retired and cannot be continued or forked. To go on, delegate a fresh "
        "agent and pass it the handoff below and the relevant files.\n"
        "\n"
        "Handoff:\n"
        "Done: parser. Left: tests in test_parser.py."
    )
    assert '"continue"' not in result("retired")


@pytest.mark.parametrize("status", texts.STATUSES)
def test_every_result_carries_the_correlation_fields(status):
    text = result(status)
    for field in (
        "agent=implementer-1",
        "definition=implementer",
        f"session={SESSION}",
        "request=req-7",
        f"status={status}",
    ):
        assert field in text


def test_the_statuses_are_the_six_of_the_api():
    assert texts.STATUSES == ("completed", "failed", "aborted", "closed", "retired", "lost")


def test_an_unknown_status_is_refused():
    with pytest.raises(ValueError, match="unknown result status 'done'"):
        result("done")


# ---- ask_owner messages -------------------------------------------------------------------


def test_the_question_notification_tells_the_owner_to_reply():
    assert texts.question_notification(
        agent="implementer-1",
        definition="implementer",
        session=SESSION,
        request="req-7",
        ask="ask-1",
        question="Should the parser accept tabs?\nBoth options are in plan.md.",
    ) == (
        "Agent implementer-1 asks you a question and is blocked until you reply.\n"
        f"agent=implementer-1 definition=implementer session={SESSION} request=req-7 "
        "ask=ask-1\n"
        'Answer with: {"action": "reply", "agent": "implementer-1", "message": "..."}\n'
        "\n"
        "Question:\n"
        "Should the parser accept tabs?\n"
        "Both options are in plan.md."
    )


def test_the_owner_reply_carries_request_ask_assignment_and_session():
    assert texts.owner_reply(
        request="req-9", ask="ask-1", assignment="req-7", session=SESSION, message="Accept tabs."
    ) == (
        "Your owner replied to your question. Continue your assignment.\n"
        f"request=req-9 ask=ask-1 assignment=req-7 session={SESSION}\n"
        "\n"
        "Reply:\n"
        "Accept tabs."
    )
