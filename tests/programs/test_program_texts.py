"""The `program` tool's model-facing texts, compared with PROGRAM-NOTES.md's lines as
golden strings (written out here, as the document gives them)."""

from __future__ import annotations

import pytest

from piagents.programs import texts
from piagents.programs.texts import CallMade

NOTES_DESCRIPTION = """Run Python that composes tool calls and Agents; only its output and
return value reach the caller. `run` runs a Program in the foreground, or
in the background with `background`; `wait` waits for background Programs
and returns their results; `list` lists background Programs; `stop` stops
a running Program. When a background Program ends while its caller is not
waiting for it, the caller receives a notification; `wait` returns the
result.

Program code is the body of an async function. It calls the caller's tools
through `tools.*`, which excludes `program`, and creates Agents through
`agent()`. These Agents belong to the Program, are isolated from other
Agents, and go offline when it ends."""

NOTES_GUIDELINES = [
    "Use `program(action='run', code=...)` to call tools or Agents several times without a "
    "model turn between the calls, for example to read many files, filter large tool output, "
    "fan out Agents, or loop until a condition holds.",
    "Use `asyncio.gather(..., return_exceptions=True)` for independent calls. Return only "
    "what the caller needs; use `text()` for progress worth reading.",
    "Use `background=true` for long Programs, and `program(action='wait', ...)` when the next "
    "step depends on their results.",
]

NOTES_PARAMETERS = {
    "action": "Operation and applicable parameters: `run(code, background?, timeout?)`, "
    "`wait(target?, timeout?)`, `list(limit?, offset?)`, or `stop(target)`.",
    "code": "Python async-function body for `run`.",
    "background": "Whether `run` returns the Program ID at once (default: false).",
    "timeout": "Maximum seconds. For `run` (default: none), expiry stops the Program. For "
    "`wait` (default: 30, min: 10, max: 3600), expiry does not stop Programs.",
    "target": "Program ID or unique ID prefix for `wait` or `stop`. `wait` also accepts an "
    "array. When omitted for `wait`, selects running Programs and ended Programs whose result "
    "has not been returned.",
    "limit": "Maximum Programs returned by `list` (default: 20, max: 200).",
    "offset": "Number of Programs to skip for `list` (default: 0).",
}


def test_the_description_begins_with_the_documents_two_paragraphs() -> None:
    assert texts.DESCRIPTION == NOTES_DESCRIPTION
    assert texts.description().startswith(NOTES_DESCRIPTION + "\n\n")


def test_the_description_says_what_a_program_may_use() -> None:
    described = texts.description()
    for name in ("tools.", "agent(", "asyncio.gather", "text(", "print(", "store(", "load("):
        assert name in described


def test_the_script_api_says_what_the_sandbox_was_found_to_run() -> None:
    # docs/monty-notes.md: the modules, the refusals and the constructs that do not run.
    api = texts.SCRIPT_API
    for module in ("asyncio", "json", "re", "math", "datetime", "collections", "itertools"):
        assert f"`{module}`" in api
    assert "`open()` is refused" in api
    for missing in ("class inheritance", "generators (`yield`)", "`async with`", "`del`"):
        assert missing in api
    assert api.endswith("such a construct fails with its line number.")
    assert texts.description() == f"{texts.DESCRIPTION}\n\n{api}"


def test_program_only_lists_the_other_tools_in_the_description() -> None:
    described = texts.description([("read", "Read a file."), ("bash", "Run a command.")])
    assert described.endswith(
        "Tools reachable through `tools.*`:\n- `tools.read`: Read a file.\n"
        "- `tools.bash`: Run a command."
    )


def test_snippet_guidelines_and_parameters_are_the_documents() -> None:
    assert texts.PROMPT_SNIPPET == "Run Python that composes tool calls and Agents"
    assert list(texts.PROMPT_GUIDELINES) == NOTES_GUIDELINES
    assert texts.PARAMETER_DESCRIPTIONS == NOTES_PARAMETERS
    assert list(texts.PARAMETER_DESCRIPTIONS) == list(NOTES_PARAMETERS)


@pytest.mark.parametrize(
    ("text", "golden"),
    [
        (texts.started("0192abcd"), "Program 0192abcd started."),
        (
            texts.program_result("0192abcd", "completed", "42"),
            '<program-result id="0192abcd" status="completed">\n42\n</program-result>',
        ),
        (texts.still_running(["0192abcd", "0192abce"]), "Still running: 0192abcd, 0192abce"),
        (texts.NO_RESULTS, "No results."),
        (texts.list_entry("0192abcd", "running"), "0192abcd  running"),
        (texts.more_results(5, 20), "[5 more results. Use offset=20 to continue.]"),
        (texts.NO_PROGRAMS, "No Programs."),
        (texts.stopped("0192abcd"), "Program 0192abcd stopped."),
        (texts.already_ended("0192abcd"), "Program 0192abcd has already ended."),
        (
            texts.did_not_stop("0192abcd"),
            "Program 0192abcd did not stop within the timeout and may still be running.",
        ),
        (
            texts.CLEANUP_ERROR,
            "Cleanup error: some of the Program's work did not stop within the timeout and "
            "may still be running.",
        ),
        (
            texts.no_match("zz"),
            'No Program matches "zz". Use list to find Programs.',
        ),
        (
            texts.ambiguous("0192", ["0192abcd", "0192abce"]),
            '"0192" matches several Programs: 0192abcd, 0192abce. Retry with a longer ID prefix.',
        ),
        (
            texts.results_omitted(["0192abcd"]),
            "[Results omitted: 0192abcd. Use wait with fewer targets.]",
        ),
        (texts.notification("0192abcd", "failed"), "Program 0192abcd failed."),
    ],
)
def test_results_and_errors_are_the_documents(text: str, golden: str) -> None:
    assert text == golden


def test_a_completed_program_shows_its_items_console_and_value() -> None:
    output = texts.output_text(["one\ntwo", "three"], ["a", "b"], {"passed": 12})
    assert texts.completed(1.234, output) == (
        "Script completed\nWall time 1.2 seconds\nOutput:\n"
        "==> text 1/2 <==\none\ntwo\n==> text 2/2 <==\nthree\n"
        "<console_output>\na\nb\n</console_output>\n"
        '{"passed": 12}'
    )


def test_a_single_item_is_not_numbered_and_a_string_value_is_as_it_is() -> None:
    assert texts.output_text(["only"], [], "done") == "only\ndone"
    assert texts.output_text([], [], None) == ""
    assert texts.output_text([], [], 0) == "0"  # a falsy value is still a value


def test_a_failed_program_names_the_error_and_the_calls_made() -> None:
    output = texts.output_text(["partial"], ["log"])
    calls = [CallMade("read", "ok"), CallMade("bash", "cancelled")]
    assert texts.failed(44.31, output, texts.aborted("stopped by the caller"), calls) == (
        "Script failed\nWall time 44.3 seconds\nOutput:\n"
        "partial\n<console_output>\nlog\n</console_output>\n"
        "Script error:\nScript aborted: stopped by the caller\n\n"
        "Tool calls made before the failure (they are not undone): read (ok), bash (cancelled)"
    )


def test_a_program_that_failed_at_once_has_empty_output_and_no_calls() -> None:
    assert texts.failed(0.0, "", texts.timed_out("after 5 seconds"), []) == (
        "Script failed\nWall time 0.0 seconds\nOutput:\n\n"
        "Script error:\nScript timed out: after 5 seconds\n\nNo tool calls were made."
    )


def test_long_output_keeps_its_head_and_tail_and_says_where_the_whole_is() -> None:
    text = "H" * 30_000 + "\n" + "T" * 30_000
    assert texts.needs_truncation(text) and not texts.needs_truncation("x" * 40_000)
    cut = texts.truncated(text, "/tmp/out.txt")
    assert cut.startswith(
        "Warning: truncated output (original token count: 15001)\nTotal output lines: 2\n\n"
    )
    assert "H" * 20_000 + "…5001 tokens truncated…" + "T" * 20_000 in cut
    assert cut.endswith("\n\n[Full output: /tmp/out.txt (read with offset/limit)]")


def test_our_own_counts_say_one_in_the_singular() -> None:
    assert texts.timeout_expired(1.0) == "the Program ran longer than its timeout of 1 second."
    assert texts.timeout_expired(2.5) == "the Program ran longer than its timeout of 2.5 seconds."
    one_over = "H" * 40_001
    assert "…1 token truncated…" in texts.truncated(one_over, None)


def test_a_long_result_keeps_its_first_line_and_cuts_what_follows_its_header() -> None:
    failed = texts.failed(1.0, "o" * 50_000, "Error: boom", [])
    cut = texts.truncated_result(failed, "/tmp/out.txt")
    assert cut.startswith(
        "Script failed\nWall time 1.0 seconds\nOutput:\nWarning: truncated output"
    )
    assert cut.endswith(
        "No tool calls were made.\n\n[Full output: /tmp/out.txt (read with offset/limit)]"
    )
    assert texts.truncated_result("x" * 50_000, None).startswith("Warning: truncated output")
