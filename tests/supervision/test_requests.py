"""Reading raw `agent` and `ask_owner` calls: each action takes exactly the API's fields."""

import jsonschema
import pytest

from piagents.supervision import texts
from piagents.supervision.errors import SupervisionError
from piagents.supervision.requests import (
    ACTIONS,
    ALLOWED_FIELDS,
    AskOwnerRequest,
    CloseRequest,
    ContinueRequest,
    DelegateRequest,
    InspectRequest,
    InterruptRequest,
    ListRequest,
    ReplyRequest,
    SteerRequest,
    TranscriptRequest,
    ask_owner_parameters,
    parameters,
    parse_ask_owner,
    parse_request,
)

ALL_ACTIONS = "list, delegate, continue, steer, interrupt, reply, close, inspect, transcript"


def refusal(raw, parse=parse_request):
    with pytest.raises(SupervisionError) as caught:
        parse(raw)
    e = caught.value
    assert e.category == "invalid_request"
    assert not e.rollback_occurred and not e.retry_attempted
    return e


# ---- accepted calls ---------------------------------------------------------------


def test_list_takes_only_the_action():
    assert parse_request({"action": "list"}) == ListRequest()


def test_a_minimal_delegate():
    assert parse_request(
        {"action": "delegate", "definition": "implementer", "task": "Fix the parser."}
    ) == DelegateRequest(definition="implementer", task="Fix the parser.")


def test_a_delegate_with_every_field():
    request = parse_request(
        {
            "action": "delegate",
            "definition": "implementer",
            "task": "Fix the parser.",
            "label": "parser_fix-2",
            "cwd": "../other",
            "files": ["src/parser.py", "notes/plan.md"],
            "fork": "0193a6f1-6c3e-7b2a-9d4e-5f6a7b8c9d0e",
            "timeoutMs": 300000,
        }
    )
    assert request == DelegateRequest(
        definition="implementer",
        task="Fix the parser.",
        label="parser_fix-2",
        cwd="../other",
        files=("src/parser.py", "notes/plan.md"),
        fork="0193a6f1-6c3e-7b2a-9d4e-5f6a7b8c9d0e",
        timeout_ms=300000,
    )
    assert request.action == "delegate"


def test_a_continue_with_its_optional_fields():
    assert parse_request(
        {
            "action": "continue",
            "session": "/home/u/.pi-agents/sessions/abc.jsonl",
            "task": "Now add the tests.",
            "files": ["tests/test_parser.py"],
            "timeoutMs": 5001,
        }
    ) == ContinueRequest(
        session="/home/u/.pi-agents/sessions/abc.jsonl",
        task="Now add the tests.",
        files=("tests/test_parser.py",),
        timeout_ms=5001,
    )


@pytest.mark.parametrize(
    ("action", "cls"),
    [("steer", SteerRequest), ("interrupt", InterruptRequest), ("reply", ReplyRequest)],
)
def test_message_actions_take_agent_message_and_files(action, cls):
    raw = {"action": action, "agent": "implementer-1", "message": "Use option B."}
    assert parse_request(raw) == cls("implementer-1", "Use option B.", ())
    with_files = parse_request({**raw, "files": ["review.md"]})
    assert with_files == cls("implementer-1", "Use option B.", ("review.md",))
    assert with_files.action == action


@pytest.mark.parametrize(
    ("action", "cls"),
    [("close", CloseRequest), ("inspect", InspectRequest), ("transcript", TranscriptRequest)],
)
def test_agent_only_actions_take_the_agent(action, cls):
    assert parse_request({"action": action, "agent": "scout-1"}) == cls("scout-1")


def test_values_are_kept_as_given():
    request = parse_request(
        {"action": "steer", "agent": "scout-1", "message": "  Also check lib/.  "}
    )
    assert request == SteerRequest("scout-1", "  Also check lib/.  ")


def test_requests_are_frozen():
    request = parse_request({"action": "close", "agent": "scout-1"})
    with pytest.raises(AttributeError):
        request.agent = "other"  # type: ignore[misc]


# ---- the action ---------------------------------------------------------------------


def test_the_arguments_must_be_an_object():
    e = refusal(["list"])
    assert (e.operation, e.message) == (
        "agent",
        "The arguments must be a JSON object, got an array.",
    )


def test_a_missing_action_lists_the_nine():
    e = refusal({"agent": "scout-1"})
    assert (e.operation, e.message) == ("agent", f"`action` is required: one of {ALL_ACTIONS}.")


@pytest.mark.parametrize(
    ("action", "quoted"), [("spawn", '"spawn"'), ("List", '"List"'), (3, "3"), (None, "null")]
)
def test_an_unknown_action_lists_the_nine(action, quoted):
    e = refusal({"action": action})
    assert (e.operation, e.message) == (
        "agent",
        f"Unknown action {quoted}. Actions: {ALL_ACTIONS}.",
    )


# ---- fields an action does not take ------------------------------------------------------


def test_list_refuses_any_selector():
    e = refusal({"action": "list", "agent": "scout-1"})
    assert (e.operation, e.message) == (
        "list",
        "Field `agent` is not allowed for list. Allowed fields: action.",
    )


def test_continue_refuses_a_label_cwd_and_fork():
    raw = {"action": "continue", "session": "s", "task": "t"}
    for key in ("label", "cwd", "fork"):
        e = refusal({**raw, key: "x"})
        assert e.message == (
            f"Field `{key}` is not allowed for continue. "
            "Allowed fields: action, session, task, files, timeoutMs."
        )


def test_every_foreign_field_is_named():
    e = refusal({"action": "continue", "session": "s", "task": "t", "cwd": "/", "fork": "f"})
    assert e.message == (
        "Fields `cwd`, `fork` are not allowed for continue. "
        "Allowed fields: action, session, task, files, timeoutMs."
    )


def test_an_unknown_field_is_named_with_the_allowed_ones():
    e = refusal({"action": "delegate", "definition": "d", "task": "t", "model": "x"})
    assert (e.operation, e.message) == (
        "delegate",
        "Field `model` is not allowed for delegate. Allowed fields: action, definition, task, "
        "label, cwd, files, fork, timeoutMs.",
    )


ALL_FIELDS = (
    "definition",
    "task",
    "label",
    "cwd",
    "files",
    "fork",
    "session",
    "timeoutMs",
    "agent",
    "message",
)


@pytest.mark.parametrize("action", ACTIONS)
@pytest.mark.parametrize("key", ALL_FIELDS)
def test_a_field_outside_the_actions_list_is_refused(action, key):
    if key in ALLOWED_FIELDS[action]:
        return
    e = refusal({"action": action, key: "x"})
    assert e.message.startswith(f"Field `{key}` is not allowed for {action}.")


def test_the_allowed_fields_are_those_of_the_api_document():
    assert ALLOWED_FIELDS == {
        "list": ("action",),
        "delegate": (
            "action",
            "definition",
            "task",
            "label",
            "cwd",
            "files",
            "fork",
            "timeoutMs",
        ),
        "continue": ("action", "session", "task", "files", "timeoutMs"),
        "steer": ("action", "agent", "message", "files"),
        "interrupt": ("action", "agent", "message", "files"),
        "reply": ("action", "agent", "message", "files"),
        "close": ("action", "agent"),
        "inspect": ("action", "agent"),
        "transcript": ("action", "agent"),
    }


# ---- required fields ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"action": "delegate", "task": "t"}, "delegate needs `definition`."),
        ({"action": "delegate"}, "delegate needs `definition`, `task`."),
        ({"action": "continue", "task": "t"}, "continue needs `session`."),
        ({"action": "steer", "agent": "a"}, "steer needs `message`."),
        ({"action": "interrupt", "agent": "a"}, "interrupt needs `message`."),
        ({"action": "reply", "message": "m"}, "reply needs `agent`."),
        ({"action": "close"}, "close needs `agent`."),
        ({"action": "inspect"}, "inspect needs `agent`."),
        ({"action": "transcript"}, "transcript needs `agent`."),
    ],
)
def test_a_missing_required_field_is_named(raw, message):
    e = refusal(raw)
    assert (e.operation, e.message) == (raw["action"], message)


@pytest.mark.parametrize(
    "raw",
    [
        {"action": "delegate", "definition": "", "task": "t"},
        {"action": "delegate", "definition": "d", "task": "  \n"},
        {"action": "continue", "session": "", "task": "t"},
        {"action": "interrupt", "agent": "a", "message": ""},
        {"action": "steer", "agent": "a", "message": " "},
        {"action": "reply", "agent": "", "message": "m"},
        {"action": "close", "agent": ""},
        {"action": "delegate", "definition": "d", "task": "t", "fork": ""},
        {"action": "delegate", "definition": "d", "task": "t", "cwd": " "},
    ],
)
def test_an_empty_field_is_refused(raw):
    e = refusal(raw)
    assert e.message.endswith("must be non-empty.")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"action": "close", "agent": 7}, "`agent` must be a string, got a number."),
        ({"action": "close", "agent": None}, "`agent` must be a string, got null."),
        (
            {"action": "delegate", "definition": "d", "task": ["t"]},
            "`task` must be a string, got an array.",
        ),
        (
            {"action": "delegate", "definition": "d", "task": "t", "cwd": {}},
            "`cwd` must be a string, got an object.",
        ),
        (
            {"action": "delegate", "definition": "d", "task": "t", "fork": True},
            "`fork` must be a string, got a boolean.",
        ),
    ],
)
def test_a_field_of_the_wrong_type_is_refused(raw, message):
    assert refusal(raw).message == message


# ---- label, files, timeoutMs -------------------------------------------------------------


def test_a_label_must_match_the_pattern():
    e = refusal({"action": "delegate", "definition": "d", "task": "t", "label": "Fixer"})
    assert e.message.startswith('`label` "Fixer" must match ^[a-z][a-z0-9_-]{0,31}$')
    refusal({"action": "delegate", "definition": "d", "task": "t", "label": "a" * 33})
    refusal({"action": "delegate", "definition": "d", "task": "t", "label": 1})


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ("a.py", "`files` must be an array of paths, got a string."),
        (None, "`files` must be an array of paths, got null."),
        (["a.py", ""], "`files[1]` must be a non-empty path string."),
        ([" "], "`files[0]` must be a non-empty path string."),
        (["a.py", 3], "`files[1]` must be a non-empty path string."),
    ],
)
def test_files_must_be_a_list_of_non_empty_strings(files, message):
    e = refusal({"action": "reply", "agent": "a", "message": "m", "files": files})
    assert e.message == message


def test_an_empty_files_list_is_no_files():
    request = parse_request({"action": "reply", "agent": "a", "message": "m", "files": []})
    assert request == ReplyRequest("a", "m", ())


@pytest.mark.parametrize("action", ["list", "close", "inspect", "transcript"])
def test_files_are_refused_where_the_api_does_not_allow_them(action):
    raw = {"action": action, "files": ["a.py"]}
    if action != "list":
        raw["agent"] = "a"
    e = refusal(raw)
    assert e.message.startswith(f"Field `files` is not allowed for {action}.")


@pytest.mark.parametrize("timeout", [5001, 60000, 300000])
def test_timeout_ms_within_the_range_is_accepted(timeout):
    request = parse_request(
        {"action": "continue", "session": "s", "task": "t", "timeoutMs": timeout}
    )
    assert isinstance(request, ContinueRequest)
    assert request.timeout_ms == timeout


@pytest.mark.parametrize(
    ("timeout", "shown"),
    [
        (5000, "5000"),
        (300001, "300001"),
        (0, "0"),
        (-6000, "-6000"),
        (5001.0, "5001.0"),
        (6000.5, "6000.5"),
        ("6000", '"6000"'),
        (True, "true"),
        (None, "null"),
    ],
)
def test_timeout_ms_must_be_an_integer_from_5001_through_300000(timeout, shown):
    e = refusal({"action": "delegate", "definition": "d", "task": "t", "timeoutMs": timeout})
    assert e.message == f"`timeoutMs` must be an integer from 5001 through 300000, got {shown}."


@pytest.mark.parametrize("action", ["steer", "interrupt", "reply"])
def test_timeout_ms_is_only_for_delegate_and_continue(action):
    e = refusal({"action": action, "agent": "a", "message": "m", "timeoutMs": 6000})
    assert e.message.startswith(f"Field `timeoutMs` is not allowed for {action}.")


def test_foreign_fields_are_reported_before_missing_or_malformed_ones():
    e = refusal({"action": "continue", "task": 5, "cwd": "/"})
    assert e.message.startswith("Field `cwd` is not allowed for continue.")


# ---- ask_owner -------------------------------------------------------------------------


def test_ask_owner_takes_a_question_and_optional_files():
    assert parse_ask_owner({"question": "Option A or B?"}) == AskOwnerRequest("Option A or B?")
    assert parse_ask_owner({"question": "Which?", "files": ["plan.md"]}) == AskOwnerRequest(
        "Which?", ("plan.md",)
    )


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({}, "ask_owner needs `question`."),
        ({"question": ""}, "`question` must be non-empty."),
        ({"question": 1}, "`question` must be a string, got a number."),
        (
            {"question": "q", "agent": "a"},
            "Field `agent` is not allowed for ask_owner. Allowed fields: question, files.",
        ),
        ({"question": "q", "files": "a"}, "`files` must be an array of paths, got a string."),
        ("q", "The arguments must be a JSON object, got a string."),
    ],
)
def test_ask_owner_refusals(raw, message):
    e = refusal(raw, parse_ask_owner)
    assert (e.operation, e.message) == ("ask_owner", message)


# ---- schemas --------------------------------------------------------------------------


def test_the_schema_is_a_valid_json_schema_with_the_nine_actions():
    schema = parameters()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["properties"]["action"]["enum"] == list(ACTIONS)
    assert schema["required"] == ["action"]
    assert schema["additionalProperties"] is False


def test_the_schema_has_every_field_with_its_description():
    props = parameters()["properties"]
    assert list(props) == ["action", *ALL_FIELDS]
    for key, prop in props.items():
        assert prop["description"] == texts.PARAMETER_DESCRIPTIONS[key]


@pytest.mark.parametrize(
    "raw",
    [
        {"action": "list"},
        {"action": "delegate", "definition": "d", "task": "t", "label": "a-1", "timeoutMs": 5001},
        {"action": "continue", "session": "s", "task": "t", "files": ["a"]},
        {"action": "interrupt", "agent": "a", "message": "m"},
    ],
)
def test_calls_the_parser_accepts_fit_the_schema(raw):
    parse_request(raw)
    jsonschema.validate(raw, parameters())


@pytest.mark.parametrize(
    "raw",
    [
        {"action": "delegate", "definition": "d", "task": "t", "timeoutMs": 5000},
        {"action": "delegate", "definition": "d", "task": "t", "label": "Bad"},
        {"action": "list", "verbose": True},
        {"action": "spawn"},
    ],
)
def test_the_schema_already_tells_the_model_the_ranges_and_the_pattern(raw):
    assert not jsonschema.Draft202012Validator(parameters()).is_valid(raw)


def test_the_ask_owner_schema():
    schema = ask_owner_parameters()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["required"] == ["question"]
    assert list(schema["properties"]) == ["question", "files"]
    assert schema["additionalProperties"] is False
    assert (
        schema["properties"]["question"]["description"]
        == (texts.ASK_OWNER_PARAMETER_DESCRIPTIONS["question"])
    )


# ---- hostile values ------------------------------------------------------------------------


def nested(depth):
    value = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    "raw",
    [
        {"action": "x" * 100_000},
        {"action": nested(5000)},
        {"action": "delegate", "definition": "scout", "task": "t", "timeoutMs": nested(5000)},
        {"action": "delegate", "definition": "scout", "task": "t", "timeoutMs": 10**5000},
    ],
)
def test_a_huge_or_deep_value_is_quoted_short_not_echoed_or_a_crash(raw):
    e = refusal(raw)
    assert len(e.message) < 400
