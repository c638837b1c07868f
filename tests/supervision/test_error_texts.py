"""The structured errors' texts, held to the character as they were built inline."""

from __future__ import annotations

from pathlib import Path

from piagents.supervision import error_texts as t


def test_target_errors_name_the_label_and_say_what_to_call() -> None:
    assert t.no_live_agent("w") == "No live agent labelled 'w'."
    assert t.label_ambiguous("w", 2) == "2 agent records carry the label 'w'."
    assert t.not_owned("w") == "'w' is not an agent you own directly."
    assert (
        t.action_unavailable("steer", "w", "idle")
        == "steer is not available for w while it is idle."
    )
    assert t.runs_elsewhere("w", "process") == "w does not run in this runtime (process)."
    assert t.NEXT_LIST == "call list"
    assert t.NEXT_LIST_LABELS == "call list for the current labels"
    assert t.NEXT_LIST_OWNED == "call list for the agents you own"
    assert t.NEXT_LIST_ACTIONS == "call list for its available_actions"
    assert t.NEXT_CLOSE_AMBIGUOUS == "call list; close the lost or unknown one first"
    assert t.NOT_A_CONTROLLER == "Only the lead and delegating agents may use the agent tool."


def test_definition_errors_name_the_cause() -> None:
    assert t.definitions_unusable("x.md: bad") == "The agent definitions cannot be used: x.md: bad"
    assert t.NEXT_FIX_DEFINITIONS == "fix the named definition files, then call list"


def test_delegate_and_continue_errors() -> None:
    assert t.retired_not_forkable("s1") == "Session s1 was retired and cannot be forked."
    assert t.retired_not_continuable("s1") == "Session s1 was retired and cannot be continued."
    assert t.not_managed_session("s1") == "Session s1 is not a managed agent's session."
    assert t.session_busy("s1") == "Session s1 already has a live managed agent."
    assert t.cwd_has_nul("a\0b") == "cwd 'a\\x00b' is not a valid path (it holds a NUL byte)."
    assert t.cwd_not_a_directory("d", Path("/x/d")) == "cwd 'd' is not a directory (/x/d)."
    assert t.label_taken("w") == "The label 'w' is already used by a live agent."
    assert t.label_taken_next("delegate") == "choose another label"
    assert t.label_taken_next("continue") == "close the agent that holds the label, then continue"
    assert t.no_saved_session("s", "fork") == (
        "No saved session 's' (`fork` takes a full session ID or path)."
    )
    assert t.start_failed(RuntimeError("boom")) == "The agent could not be started: boom"
    assert t.CONTINUE_OWN_SESSION == "A controller cannot continue its own session."
    assert t.NEXT_DELEGATE_FRESH == "delegate a fresh agent and pass it the handoff and files"
    assert t.NEXT_FORK_INSTEAD == "use delegate with fork for a separate derived context"
    assert t.NEXT_STEER_OR_CLOSE == "call list, then steer or close that agent"
    assert t.NEXT_COPY_SESSION == "copy the session from a result or from list"
    assert t.NEXT_CHECK_DEFINITION == "check the definition's model and settings, then try again"


def test_worker_placement_errors() -> None:
    assert t.model_not_loadable("m", "process") == (
        "The model 'm' exists only in this process, so placement 'process' cannot "
        "run it in a worker process."
    )
    assert t.NEXT_LOADABLE_MODEL == (
        "use spawnPlacement inline, or a model a worker can load by name "
        "(faux/<module>:<function> for scripted models)"
    )
    assert t.worker_start_failed("process", "exited 1") == (
        "The agent's worker could not be started (process): exited 1"
    )
    assert t.check_worker_log(Path("/h/run/g/worker.log")) == (
        "check the worker log in /h/run/g/worker.log, then try again"
    )


def test_a_message_over_the_payload_limit_says_its_size_and_the_limit() -> None:
    assert t.message_too_large(10, 5, with_references=False) == (
        "The message is 10 bytes, over the mailbox payload limit of 5 bytes."
    )
    assert t.message_too_large(10, 5, with_references=True) == (
        "The message with its file references is 10 bytes, "
        "over the mailbox payload limit of 5 bytes."
    )
    assert t.NEXT_SHORTEN == "shorten the message, or put long text in a file passed in `files`"


def test_one_problem_and_one_byte_are_counted_in_the_singular() -> None:
    assert t.problems_listed(("a.md: bad",)) == "1 problem in agent definitions:\n  - a.md: bad"
    assert t.problems_listed(("x", "y")).startswith("2 problems in agent definitions:")
    assert t.message_too_large(2, 1, with_references=False) == (
        "The message is 2 bytes, over the mailbox payload limit of 1 byte."
    )
