"""The texts once built inline in the supervision face, held to the character as they were."""

from __future__ import annotations

from piagents.supervision import error_texts as t
from piagents.supervision import texts


def test_a_refused_definition_name_says_why_and_what_is_available() -> None:
    assert t.definition_untrusted("w", "/p", "/p/.pi-agents/agents/w.md") == (
        "definition 'w' comes from the project /p (/p/.pi-agents/agents/w.md), which is "
        "not trusted; definitions of an untrusted project are not used. The user can "
        "trust it with `pi-agents trust /p`."
    )
    assert t.definition_unknown("'x'", ["a", "b"]) == (
        "no agent definition named 'x'; available: a, b"
    )
    assert t.definition_unknown("'x'", []) == "no agent definition named 'x'; available: none"
    assert t.definition_disabled("w", ["a"]) == "definition 'w' is disabled; available: a"
    assert t.definition_disabled("w", []) == "definition 'w' is disabled; available: none"
    assert t.definition_is_leaf("d") == "definition 'd' is a leaf and cannot delegate"
    assert t.definition_not_delegatable("d", "w", ["a", "b"]) == (
        "definition 'd' may not delegate to 'w'; it may delegate to: a, b"
    )


def test_discovery_problems_name_their_file() -> None:
    assert t.bundled_unreadable("/b", "boom") == "/b: cannot read the bundled definitions: boom"
    assert t.not_a_directory("/d") == "/d: is not a directory"
    assert t.too_many_files("/d", 256) == "/d: holds more than 256 definition files"
    assert t.directory_unreadable("/d", "Permission denied") == (
        "/d: cannot read the directory: Permission denied"
    )
    assert t.file_too_large("/d/w.md", 1) == "/d/w.md: is larger than 1 MiB"
    assert t.not_utf8("/d/w.md") == "/d/w.md: is not UTF-8 text"
    assert t.file_unreadable("/d/w.md", "Permission denied") == (
        "/d/w.md: cannot be read: Permission denied"
    )
    assert t.defined_twice("/d/b.md", "w", "/d/a.md", "project") == (
        "/d/b.md: `name`: 'w' is also defined by /d/a.md in the project layer"
    )
    assert t.UNDEFINED_TARGET == "is not defined in any layer"
    assert t.DISABLED_TARGET == "is disabled"
    assert t.DELEGATING_TARGET == (
        "delegates itself; depth is fixed at lead → delegating agent → leaf"
    )
    assert t.untrusted_target("/p") == "is defined only by the untrusted project /p"
    assert t.bad_target("/d/a.md", "w", "is disabled") == "/d/a.md: `agents`: 'w' is disabled"
    assert t.unknown_tool("/d/a.md", "tools", "'bsh'", "bash, read") == (
        "/d/a.md: `tools`: unknown tool 'bsh'; the tools are bash, read"
    )


def test_a_refused_override_names_the_file() -> None:
    assert t.not_overwritten("/h/agents/w.md", "w") == (
        "/h/agents/w.md: exists and does not define 'w'; not overwritten"
    )
    assert t.still_delegated_to("/h/agents/w.md", "w", ["a", "b"]) == (
        "/h/agents/w.md: `enabled`: 'w' cannot be disabled while a, b may delegate to it; "
        "disable those first"
    )
    assert t.renamed_by_override("/h/agents/w.md", "v") == (
        "/h/agents/w.md: `name`: the file now defines 'v'"
    )


def test_unusable_files_are_named_with_where_they_resolved() -> None:
    assert t.cwd_not_a_path() == (
        "`files`: the working directory is not a valid path (it holds a NUL byte)."
    )
    assert t.file_not_a_path("a\0b") == (
        "`files`: 'a\\x00b' is not a valid path (it holds a NUL byte)."
    )
    assert t.file_missing("a.txt", "a.txt") == "`files`: a.txt does not exist."
    assert t.file_missing("a.txt", "/w/a.txt") == (
        "`files`: a.txt does not exist (resolved to /w/a.txt)."
    )
    assert t.file_not_regular("d", "/w/d") == (
        "`files`: d is not a regular file (resolved to /w/d)."
    )
    assert t.file_cannot_be_read("a", "a", "Permission denied") == (
        "`files`: a cannot be read: Permission denied."
    )


def test_unusable_arguments_name_the_field_or_start_with_a_capital() -> None:
    assert t.unusable_arguments("expected an object", None) == "Expected an object."
    assert t.unusable_arguments("expected a string", "files[0]") == (
        "Field `files[0]`: expected a string."
    )


def test_what_a_managed_agent_and_a_controller_are_told_at_start() -> None:
    assert texts.managed_intro("w1", "worker") == (
        "You are the managed agent w1 (definition worker). Your final answer is your "
        "result: it is delivered to your owner once, when your assignment ends, so make it "
        "complete and self-contained. To ask your owner something you cannot decide alone, "
        "call ask_owner (one question per assignment)."
    )
    assert texts.roster_snapshot(["- a", "- b"]) == (
        "Agent definitions you can delegate to (a snapshot; call list for the current "
        "roster and agents):\n- a\n- b"
    )
    assert texts.roster_snapshot([]) == (
        "Agent definitions you can delegate to (a snapshot; call list for the current "
        "roster and agents):\n(none)"
    )


def test_notices_of_a_generation_and_its_worker() -> None:
    assert texts.ASK_OWNER_ENDED == "The assignment has ended; no question can be asked."
    assert texts.CLOSED_BEFORE_FINISHED == "the runtime was closed before it finished"
    assert texts.START_FAILED == "start failed"
    assert texts.tail_tool_line("bash", '{"command":"ls"}') == '\n$ bash {"command":"ls"}\n'
    assert t.definition_unavailable("worker") == (
        "the definition 'worker' is not available to the worker"
    )
    assert t.agent_not_loaded("boom") == "the agent could not be loaded: boom"
    assert t.WORKER_TOO_SLOW == "it did not record itself in time"
    assert t.WORKER_EXITED_EARLY == "the worker exited before it recorded itself"
    assert t.worker_could_not_run("failed") == "the worker could not run it: failed"


def test_attached_files_as_appended_to_a_message() -> None:
    assert texts.attached_file("/w/a.txt", "```", "hi\n") == "Attached file: /w/a.txt\n```\nhi\n```"
    assert texts.ATTACHED_BY_PATH == "Attached by path, not embedded (read them from disk):"
    assert texts.attached_reference("/w/b.bin", 12, "binary") == "- /w/b.bin (12 bytes, binary)"
    assert texts.attached_reference("/w/c", 9, "too_large") == (
        "- /w/c (9 bytes, too large to embed)"
    )


def test_a_workers_first_line_names_its_agent_and_session() -> None:
    assert texts.worker_banner("w1", "worker", "s1") == (
        "pi-agents worker: w1 (worker), session s1\n"
    )


def test_a_definition_files_problems_name_the_file_and_the_field() -> None:
    assert t.problems_listed(("a.md: x", "b.md: y")) == (
        "2 problems in agent definitions:\n  - a.md: x\n  - b.md: y"
    )
    assert t.field_problem("a.md", "name", t.NAME_MISSING) == (
        "a.md: `name`: missing; every definition needs a name"
    )
    assert t.GIVEN_TWICE == "given more than once"
    assert t.EXPECTED_MODEL == "expected provider/modelId"
    assert t.unknown_field(("name", "model")) == "unknown field; the fields are name, model"
    assert t.expected_type(False, "int") == "expected a string, got int"
    assert t.expected_type(True, "str") == "expected true or false, got str"
    assert t.name_mismatch("'A'", "^[a-z]+$") == "'A' must match ^[a-z]+$"
    assert t.delegates_to_itself("'w'") == "'w' cannot delegate to itself"
    assert t.bad_prompt_mode("'x'") == "expected append or replace, got 'x'"
    assert t.expected_model("int") == "expected provider/modelId, got int"
    assert t.bad_thinking(("off", "low"), "'max'") == "expected one of off, low or false, got 'max'"
    assert t.expected_list("str") == "expected a list such as [a, b], got str"
    assert t.invalid_name("'A'", "^[a-z]+$") == "'A' is not a valid name (must match ^[a-z]+$)"
    assert t.listed_twice("'w'") == "'w' is listed twice"
    assert t.a_value_of("str", 300) == "a str of 300 characters"
    assert t.a_value("dict") == "a dict"


def test_a_definition_file_that_cannot_be_read_or_split_is_named() -> None:
    assert t.definition_too_large("a.md", 1) == (
        "a.md: is larger than 1 MiB; a definition is a short file"
    )
    assert t.not_a_regular_file("a.md") == "a.md: is not a regular file"
    assert t.no_front_matter("a.md") == (
        "a.md: no front matter; a definition begins with a `---` line, YAML, and `---`"
    )
    assert t.front_matter_too_large("a.md", 64) == "a.md: the front matter is larger than 64 KiB"
    assert t.front_matter_unclosed("a.md") == (
        "a.md: the front matter opened on line 1 is never closed by `---`"
    )
    assert t.nested_too_deep(32) == "nested deeper than 32 levels"
    assert t.expands_too_far(1000) == (
        "expands to more than 1000 values (each alias counts its anchor's)"
    )
    assert t.invalid_yaml("a.md", 3, "bad") == "a.md: front matter is not valid YAML (line 3): bad"
    assert t.invalid_yaml("a.md", None, "bad") == "a.md: front matter is not valid YAML: bad"
    assert t.number_too_long("a.md") == "a.md: front matter holds a number too long to read"
    assert t.front_matter_not_a_mapping("a.md") == "a.md: front matter must be a mapping of fields"
    assert t.field_names_not_plain("a.md") == ("a.md: front matter field names must be plain words")


def test_a_calls_unusable_arguments_name_the_field_and_what_is_allowed() -> None:
    assert t.not_an_object("array") == "The arguments must be a JSON object, got array."
    assert t.action_required("list, delegate") == "`action` is required: one of list, delegate."
    assert t.unknown_action('"run"', "list, delegate") == (
        'Unknown action "run". Actions: list, delegate.'
    )
    assert t.fields_not_allowed(["`x`"], "list", ("action",)) == (
        "Field `x` is not allowed for list. Allowed fields: action."
    )
    assert t.fields_not_allowed(["`x`", "`y`"], "close", ("action", "agent")) == (
        "Fields `x`, `y` are not allowed for close. Allowed fields: action, agent."
    )
    assert t.fields_missing("delegate", ["definition", "task"]) == (
        "delegate needs `definition`, `task`."
    )
    assert t.not_a_string("task", "number") == "`task` must be a string, got number."
    assert t.empty_field("task") == "`task` must be non-empty."
    assert t.files_not_an_array("string") == "`files` must be an array of paths, got string."
    assert t.file_not_a_path_string(2) == "`files[2]` must be a non-empty path string."
    assert t.timeout_out_of_range(1000, 3600000, "5") == (
        "`timeoutMs` must be an integer from 1000 through 3600000, got 5."
    )
    assert t.invalid_label('"W"') == (
        '`label` "W" must match ^[a-z][a-z0-9_-]{0,31}$: a lower-case letter, then up to 31 '
        "lower-case letters, digits, `_` or `-`."
    )


def test_tmux_failures_say_what_tmux_could_not_do() -> None:
    assert t.TMUX_MISSING == "tmux is not installed (placement tmux)"
    assert t.tmux_session_failed("pi-agents", "no server") == (
        "tmux could not create session pi-agents: no server"
    )
    assert t.tmux_window_failed("no space") == "tmux could not open a window: no space"
