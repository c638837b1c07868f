"""Every model-facing text of the `agent` tool, compared with the spec (§6) to the character.

Expected strings are written out literally, copied from the spec with its
placeholders filled; the spec's line breaks inside a paragraph are soft wraps.
"""

import pytest

from piagents.agents import texts
from piagents.agents.texts import Shown

WORKER = Shown("worker", "01JABCDE")
REVIEWER = Shown("reviewer", "01JXYZ12")
UNNAMED_ROOT = Shown(None, "01JROOT9")


# ---- description, snippet, guidelines -------------------------------------------


def test_description_substitutes_the_limits_into_the_spec_paragraph():
    assert texts.description(3, 8) == (
        "Create, message, and coordinate Agents. `spawn` creates an owned Agent and sends its "
        "first input; `send` sends an input or a write to a visible Agent; `wait` waits for "
        "owned Agents and returns unread results; `list` finds visible Agents; `abort` stops an "
        "owned Agent's current turn and queued inputs while keeping it available. When an owned "
        "Agent finishes an input while its owner is not waiting for it, the owner receives a "
        "notification naming the Agent and outcome; `wait` returns the result. Owned Agents "
        "under the same root share `3` execution slots and a limit of `8` inputs that have not "
        "ended. Inputs that start a new turn queue when all slots are busy; new inputs are "
        "rejected at the input limit."
    )


def test_description_uses_the_configured_limits():
    text = texts.description(5, 12)
    assert "share `5` execution slots and a limit of `12` inputs" in text
    assert "${" not in text


def test_prompt_snippet_is_the_spec_line():
    assert texts.PROMPT_SNIPPET == "Create, message, and coordinate Agents"


def test_prompt_guidelines_are_the_three_spec_items():
    assert texts.PROMPT_GUIDELINES == (
        "Use `agent(action='spawn', name=..., message=...)` for concrete, bounded work with a "
        "clear expected result. Keep the first message self-contained; use `context='fork'` "
        "only when the Agent needs the caller's conversation.",
        "For independent work, start the Agents before waiting and partition tasks into "
        "non-overlapping responsibilities.",
        "Use `agent(action='wait', ...)` when the next step depends on Agent results. Prefer "
        "one longer wait over repeated short polling.",
    )


SPEC_PARAMETERS = {
    "action": "Operation and applicable parameters: `spawn(name, message, cwd?, context?, "
    "model?, thinkingLevel?)`, `send(target, message, deliverAs?)`, `wait(target?, history?, "
    "timeout?)`, `list(query?, state?, limit?, offset?)`, or `abort(target)`.",
    "name": "Name of the new Agent for `spawn`; unique among the caller's Agents.",
    "message": "Non-empty text for `spawn` or `send`.",
    "cwd": "Working directory for `spawn` (default: the caller's current working directory).",
    "context": "Context for `spawn` (default: fresh). fresh starts without the caller's "
    "conversation; fork snapshots it.",
    "model": "Model for `spawn` as provider/modelId (default: the caller's model).",
    "thinkingLevel": "Thinking level for `spawn`: off, minimal, low, medium, high, xhigh, or "
    "max (default: the caller's level).",
    "target": "Agent ID, name, or unique ID prefix for `send`, `wait`, or `abort`. `wait` and "
    "`send` with `deliverAs='write'` also accept an array. When omitted for `wait`, selects "
    "all owned Agents with pending or unread results.",
    "deliverAs": "Delivery for `send` (default: followUp). followUp waits until the "
    "recipient's current turn ends; steer delivers after its current tool calls, before the "
    "next model call; write delivers like steer but never starts a turn and has no result.",
    "history": "Number of most recent read results to return again per selected Agent for "
    "`wait` (default: 0).",
    "timeout": "Maximum seconds for `wait` (default: 30, min: 10, max: 3600). Timeout does "
    "not abort Agents.",
    "query": "Search query for `list`, matching ID, name, cwd, summaries, and user messages. "
    "Case-insensitive; spaces mean AND; `|` means OR.",
    "state": "State for `list`: running, waiting, queued, or idle.",
    "limit": "Maximum Agents returned by `list` (default: 20, max: 200).",
    "offset": "Number of Agents to skip for `list` (default: 0).",
}


@pytest.mark.parametrize("name", list(SPEC_PARAMETERS))
def test_each_parameter_description_is_the_spec_line(name):
    assert texts.PARAMETER_DESCRIPTIONS[name] == SPEC_PARAMETERS[name]


def test_there_are_exactly_the_spec_parameters_in_the_spec_order():
    assert list(texts.PARAMETER_DESCRIPTIONS) == list(SPEC_PARAMETERS)


# ---- labels -------------------------------------------------------------------------


def test_label_is_the_name_and_the_short_id_in_parentheses():
    assert texts.label(WORKER) == "worker (01JABCDE)"


def test_label_of_an_unnamed_root_is_the_bare_id():
    assert texts.label(UNNAMED_ROOT) == "01JROOT9"


def test_labels_are_joined_by_a_comma():
    assert texts.labels([WORKER, UNNAMED_ROOT, REVIEWER]) == (
        "worker (01JABCDE), 01JROOT9, reviewer (01JXYZ12)"
    )


# ---- results ------------------------------------------------------------------------


def test_spawn_started():
    assert texts.spawned(WORKER, None) == "Agent worker (01JABCDE) started."


def test_spawn_queued_names_the_slot_count():
    assert texts.spawned(WORKER, 3) == "Agent worker (01JABCDE) queued: all 3 slots are busy."


def test_send_input_accepted():
    assert texts.input_accepted(WORKER, None) == "Input accepted by worker (01JABCDE)."


def test_send_input_accepted_and_queued():
    assert texts.input_accepted(WORKER, 3) == (
        "Input accepted by worker (01JABCDE), queued: all 3 slots are busy."
    )


def test_send_input_accepted_by_an_unnamed_root():
    assert texts.input_accepted(UNNAMED_ROOT, None) == "Input accepted by 01JROOT9."


def test_write_accepted_by_one_agent():
    assert texts.write_accepted([WORKER]) == "Write accepted by worker (01JABCDE)."


def test_write_accepted_by_several_agents():
    assert texts.write_accepted([WORKER, REVIEWER]) == (
        "Write accepted by worker (01JABCDE), reviewer (01JXYZ12)."
    )


def test_agent_result_block():
    assert texts.agent_result(WORKER, "completed", "All tests pass.") == (
        '<agent-result name="worker" id="01JABCDE" status="completed">\n'
        "All tests pass.\n"
        "</agent-result>"
    )


def test_agent_result_block_returned_again_through_history():
    assert texts.agent_result(WORKER, "failed", "boom", history=True) == (
        '<agent-result name="worker" id="01JABCDE" status="failed" history="true">\n'
        "boom\n"
        "</agent-result>"
    )


def test_still_pending_line():
    assert texts.still_pending([WORKER, REVIEWER]) == (
        "Still pending: worker (01JABCDE), reviewer (01JXYZ12)"
    )


def test_stopped_waiting_line():
    assert texts.STOPPED_WAITING == (
        "Stopped waiting for a new message. Wait again to keep waiting."
    )


def test_no_results():
    assert texts.NO_RESULTS == "No results."


def test_results_omitted_line():
    assert texts.results_omitted([WORKER, REVIEWER]) == (
        "[Results omitted: worker (01JABCDE), reviewer (01JXYZ12). Use wait with fewer targets.]"
    )


def test_list_entry_and_its_request_line():
    entry = texts.list_entry(WORKER, "running", "/home/u/project")
    request = texts.list_request("2025-03-04 05:06", "Fix the flaky test")
    assert entry == "worker (01JABCDE)  running  /home/u/project"
    assert request == "  2025-03-04 05:06  Fix the flaky test"


def test_list_entry_of_an_unnamed_root():
    assert texts.list_entry(UNNAMED_ROOT, "idle", "/srv") == "01JROOT9  idle  /srv"


def test_more_results_line():
    assert texts.more_results(7, 20) == "[7 more results. Use offset=20 to continue.]"


def test_no_matching_agents():
    assert texts.NO_MATCHING_AGENTS == "No matching Agents."


def test_abort_texts():
    assert texts.aborted(WORKER) == "Agent worker (01JABCDE) aborted."
    assert texts.nothing_to_abort(WORKER) == (
        "Agent worker (01JABCDE) has no turn or queued inputs."
    )


# ---- errors ---------------------------------------------------------------------------


def test_no_match_error():
    assert texts.no_match("wrkr") == 'No visible Agent matches "wrkr". Use list to find Agents.'


def test_ambiguous_error_lists_the_candidates_and_asks_for_a_longer_prefix():
    rows = [
        "worker (01JABCDE)  running  /home/u/a",
        "reviewer (01JXYZ12)  idle  /home/u/b",
    ]
    assert texts.ambiguous("01J", rows) == (
        '"01J" matches several Agents:\n'
        "worker (01JABCDE)  running  /home/u/a\n"
        "reviewer (01JXYZ12)  idle  /home/u/b\n"
        "\n"
        "Retry with a longer ID prefix."
    )


def test_name_taken_error():
    assert texts.name_taken("worker", "01JABCDE") == ('Name "worker" is already used by 01JABCDE.')


def test_input_rejected_error():
    assert texts.input_rejected(8) == (
        "Input rejected: 8 inputs have not ended. Wait for results or abort an Agent."
    )


def test_not_owned_error():
    assert texts.not_owned(WORKER) == "worker (01JABCDE) is not owned by the caller."


def test_not_owned_error_for_an_unnamed_root():
    assert texts.not_owned(UNNAMED_ROOT) == "01JROOT9 is not owned by the caller."


def test_did_not_stop_error():
    assert texts.did_not_stop(WORKER) == (
        "Agent worker (01JABCDE) did not stop within the timeout and may still be running."
    )


# ---- messages -------------------------------------------------------------------------


@pytest.mark.parametrize("outcome", ["completed", "failed", "aborted"])
def test_notification_names_the_agent_and_the_outcome(outcome):
    assert texts.notification(WORKER, outcome) == f"Agent worker (01JABCDE) {outcome}."


def test_notification_text_for_a_failed_input():
    assert texts.notification(WORKER, "failed") == "Agent worker (01JABCDE) failed."


def test_agent_message_from_the_owner():
    assert texts.agent_message(WORKER, "Please review.", reply_note=False) == (
        '<agent-message from="worker" id="01JABCDE">\nPlease review.\n</agent-message>'
    )


def test_agent_message_from_another_sender_asks_for_a_reply():
    assert texts.agent_message(WORKER, "Please review.", reply_note=True) == (
        '<agent-message from="worker" id="01JABCDE" note="Reply with send">\n'
        "Please review.\n"
        "</agent-message>"
    )


def test_agent_message_from_an_unnamed_root_names_it_by_id_only():
    assert texts.agent_message(UNNAMED_ROOT, "hi", reply_note=True) == (
        '<agent-message id="01JROOT9" note="Reply with send">\nhi\n</agent-message>'
    )
