"""`transcript`: a session's context as bounded text, with only what the owner may read."""

import pytest

from piagents.ai.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from piagents.store.records import (
    CompactionEntry,
    CustomEntry,
    MessageEntry,
    ModelChangeEntry,
    ThinkingLevelChangeEntry,
)
from piagents.supervision.transcript import (
    Summary,
    bound_middle,
    bound_tail,
    render_transcript,
    transcript_items,
)


def user(text):
    return UserMessage(content=(TextContent(text=text),))


def assistant(*content, stop_reason="stop"):
    return AssistantMessage(content=tuple(content), stop_reason=stop_reason, model="gpt-x")


def call(name, args, call_id):
    return ToolCall(name=name, args=args, id=call_id)


def result(call_id, name, text, is_error=False):
    return ToolResultMessage(
        tool_call_id=call_id, tool_name=name, content=(TextContent(text=text),), is_error=is_error
    )


def entry(message, entry_id):
    return MessageEntry(message=message, id=entry_id)


# ---- the format ----------------------------------------------------------------------------------


def test_a_conversation_renders_as_blocks():
    items = [
        user("Fix the parser."),
        assistant(
            ThinkingContent(thinking="The parser is in src/."),
            TextContent(text="I'll read it first."),
            call("read", {"path": "src/parser.py", "limit": 20}, "c1"),
            call("bash", {"command": "ls -1 ünï"}, "c2"),
        ),
        result("c1", "read", "def parse():\n    return 1"),
        result("c2", "bash", "ls: cannot access 'ünï'\nexit code 2", is_error=True),
        assistant(TextContent(text="Fixed.")),
    ]
    assert render_transcript(items) == (
        "[user]\n"
        "Fix the parser.\n"
        "\n"
        "[assistant]\n"
        "I'll read it first.\n"
        "\n"
        '[tool call] read {"path":"src/parser.py","limit":20}\n'
        "\n"
        '[tool call] bash {"command":"ls -1 ünï"}\n'
        "\n"
        "[tool result] read\n"
        "def parse():\n"
        "    return 1\n"
        "\n"
        "[tool result] bash (error)\n"
        "ls: cannot access 'ünï'\n"
        "exit code 2\n"
        "\n"
        "[assistant]\n"
        "Fixed.",
        False,
    )


def test_summaries_render_as_their_own_blocks():
    items = [Summary("compaction", "Goal: fix the parser."), Summary("branch", "Tried B.")]
    assert render_transcript(items) == (
        "[compaction summary]\nGoal: fix the parser.\n\n[branch summary]\nTried B.",
        False,
    )


def test_thinking_and_images_are_never_shown():
    items = [
        UserMessage(content=(ImageContent(data="iVBOR", mime_type="image/png"),)),
        UserMessage(
            content=(TextContent(text="See this."), ImageContent(data="iVBOR", mime_type="x"))
        ),
        assistant(ThinkingContent(thinking="secret reasoning")),
        ToolResultMessage(
            tool_call_id="c1",
            tool_name="screenshot",
            content=(ImageContent(data="iVBOR", mime_type="image/png"),),
        ),
    ]
    text, truncated = render_transcript(items)
    assert text == "[user]\nSee this.\n\n[tool result] screenshot"
    assert "secret" not in text and "iVBOR" not in text
    assert not truncated


def test_model_metadata_is_not_shown():
    text, _ = render_transcript([assistant(TextContent(text="Done."))])
    assert text == "[assistant]\nDone."
    assert "gpt-x" not in text


def test_nothing_to_show_is_an_empty_transcript():
    assert render_transcript([]) == ("", False)


# ---- from the session's entries ----------------------------------------------------------


def test_items_come_from_the_compaction_aware_context():
    entries = [
        entry(user("Old request."), "e1"),
        entry(assistant(TextContent(text="Old answer.")), "e2"),
        entry(user("Kept request."), "e3"),
        CompactionEntry(
            summary="The user asked for X.", first_kept_entry_id="e3", tokens_before=900, id="e4"
        ),
        entry(assistant(TextContent(text="New answer.")), "e5"),
    ]
    assert transcript_items(entries) == [
        Summary("compaction", "The user asked for X."),
        entries[2].message,
        entries[4].message,
    ]


def test_custom_entries_and_setting_changes_are_left_out():
    entries = [
        ModelChangeEntry(provider="openai", model_id="gpt-5"),
        ThinkingLevelChangeEntry(thinking_level="high"),
        CustomEntry(custom_type="pi-agents/extension", data={"secret": 1}),
        entry(user("Hello."), "e1"),
    ]
    assert transcript_items(entries) == [entries[3].message]


def test_aborted_and_errored_turns_are_left_out_with_their_results():
    aborted = assistant(
        TextContent(text="Half"), call("bash", {"command": "sleep 99"}, "c1"), stop_reason="aborted"
    )
    errored = assistant(TextContent(text="Oops"), stop_reason="error")
    entries = [
        entry(user("Run it."), "e1"),
        entry(aborted, "e2"),
        entry(result("c1", "bash", "aborted"), "e3"),
        entry(errored, "e4"),
        entry(user("Stop."), "e5"),
    ]
    assert transcript_items(entries) == [entries[0].message, entries[4].message]


def test_a_tool_call_without_a_persisted_result_is_shown_alone():
    running = assistant(call("bash", {"command": "make"}, "c1"))
    items = transcript_items([entry(user("Build."), "e1"), entry(running, "e2")])
    assert render_transcript(items) == (
        '[user]\nBuild.\n\n[tool call] bash {"command":"make"}',
        False,
    )


# ---- bounds --------------------------------------------------------------------------------------


def test_a_tool_result_of_exactly_4_kib_is_kept_whole():
    text, truncated = render_transcript([result("c1", "read", "x" * 4096)])
    assert text == "[tool result] read\n" + "x" * 4096
    assert not truncated


def test_a_long_tool_result_keeps_its_start_and_end_around_an_omission_line():
    output = "".join(f"line {i:05d}\n" for i in range(1000))  # 11000 bytes
    text, truncated = render_transcript([result("c1", "bash", output)])
    assert truncated
    body = text.removeprefix("[tool result] bash\n")
    head, marker, tail = body.split("\n[... ", 1)[0], *body.split("\n[... ", 1)[1].split("\n", 1)
    assert output.startswith(head)
    assert output.endswith(tail)
    omitted = len(output) - len(head) - len(tail)
    assert marker == f"{omitted} bytes omitted ...]"
    assert len(body.encode()) <= 4096
    assert len(head) == len(tail) == (4096 - len("[... 11000 bytes omitted ...]") - 2) // 2


def test_bound_middle_golden():
    assert bound_middle("abcdefghijklmnopqrstuvwxyz" * 4, 60) == (
        "abcdefghijklmno\n[... 74 bytes omitted ...]\nlmnopqrstuvwxyz",
        True,
    )


def test_bound_middle_never_splits_a_character():
    text = "é" * 100  # 200 bytes
    bounded, _ = bound_middle(text, 61)  # 16 bytes each side: 8 characters each
    head, _, tail = bounded.partition("\n[... ")
    assert head == "é" * 8
    assert tail.split("\n", 1)[1] == "é" * 8
    assert bounded == "é" * 8 + "\n[... 168 bytes omitted ...]\n" + "é" * 8
    bounded, _ = bound_middle(text, 63)  # 17 bytes each side: the half characters are dropped
    assert bounded == "é" * 8 + "\n[... 168 bytes omitted ...]\n" + "é" * 8


def test_the_transcript_keeps_its_last_16_kib_from_a_line_start():
    items = [user(f"message {i:04d}") for i in range(2000)]
    text, truncated = render_transcript(items)
    assert truncated
    assert len(text.encode()) <= 16384
    first, rest = text.split("\n", 1)
    assert first.startswith("[... ") and first.endswith(" bytes of earlier transcript omitted ...]")
    full, _ = render_transcript(items, limit_bytes=10**9)
    assert full.endswith("\n" + rest)
    assert int(first.split()[1]) == len(full) - len(rest)
    assert rest.startswith(("[user]", "message"))
    assert rest.endswith("[user]\nmessage 1999")


def test_bound_tail_golden():
    text = "\n".join(f"line {i}" for i in range(1, 21))  # 150 bytes
    assert bound_tail(text, 150) == (text, False)
    assert bound_tail(text, 80) == (
        "[... 127 bytes of earlier transcript omitted ...]\nline 18\nline 19\nline 20",
        True,
    )


def test_bound_tail_cuts_inside_a_line_only_when_the_last_line_is_too_long():
    text = "short\n" + "é" * 40  # last line: 80 bytes
    bounded, truncated = bound_tail(text, 70)
    assert truncated
    marker, kept = bounded.split("\n")
    assert kept == "é" * len(kept) and kept  # whole characters only
    assert len(bounded.encode()) <= 70
    omitted = len(text.encode()) - len(kept.encode())
    assert marker == f"[... {omitted} bytes of earlier transcript omitted ...]"


@pytest.mark.parametrize("limit", [100, 101, 102, 103])
def test_bound_tail_never_splits_a_character(limit):
    text = "€" * 200  # 3 bytes each, no line breaks
    bounded, _ = bound_tail(text, limit)
    kept = bounded.split("\n", 1)[1]
    assert set(kept) == {"€"}
    assert len(bounded.encode()) <= limit


def test_a_transcript_cut_by_both_bounds_is_truncated_once():
    items = [result("c1", "bash", "y" * 5000), *[user("z" * 100) for _ in range(200)]]
    text, truncated = render_transcript(items)
    assert truncated
    assert "[tool result]" not in text  # the long result was in the cut-off part
