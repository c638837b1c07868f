"""The embedded model's prompt, reply protocol and answer reading (no model needed)."""

from __future__ import annotations

import json

import pytest

from piagents.agents.tool import parameters as agent_parameters
from piagents.ai.events import TextDelta, ToolCallDelta
from piagents.ai.local_format import (
    AnswerReader,
    CallBlock,
    ProseFilter,
    assistant_text,
    chatml,
    overlap,
    parse_calls,
    signature,
    system_message,
    tools_block,
)
from piagents.ai.messages import (
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from piagents.ai.models import ModelRef
from piagents.ai.provider import ToolSpec

AGENT = ToolSpec("agent", "Create, message, and coordinate Agents. More.", agent_parameters())
READ = ToolSpec(
    "read",
    "Read the contents of a file. Long text.",
    {
        "type": "object",
        "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["path"],
    },
)


def test_a_tool_is_shown_as_a_signature_with_required_parameters_first() -> None:
    assert signature(READ) == "read(path: string, limit?: integer)"
    assert signature(AGENT).startswith("agent(action: spawn|send|wait|list|abort, name?: string")
    assert "target?: string or list of string" in signature(AGENT)


def test_the_tools_block_lists_each_tool_with_its_first_sentence_and_the_reply_format() -> None:
    block = tools_block([READ, AGENT])

    assert "- read(path: string, limit?: integer): Read the contents of a file.\n" in block
    assert "Long text" not in block
    assert '<tool_call>[\n{"name": "read", "arguments": {"path": "..."}}\n]</tool_call>' in block
    assert "reply with <tool_call>[]</tool_call> and then your answer in plain text" in block


def test_the_system_message_puts_the_tools_before_the_agents_system_prompt() -> None:
    message = system_message("You are terse.", [READ])

    assert message.startswith("You can call these tools:")
    assert message.endswith("\n\nYou are terse.")
    assert system_message("You are terse.", []) == "You are terse."


def test_a_conversation_renders_in_chatml_with_calls_and_results_in_the_models_protocol() -> None:
    history = [
        UserMessage.of("list it"),
        AssistantMessage(
            (ToolCall("read", {"path": "a"}, "c1"), ToolCall("read", {"path": "b"}, "c2"))
        ),
        ToolResultMessage("c1", "read", (TextContent("A"),)),
        ToolResultMessage("c2", "read", (TextContent("B"),)),
        AssistantMessage((TextContent("done"),)),
    ]

    assert chatml("sys", history) == (
        "<|im_start|>system\nsys<|im_end|>\n"
        "<|im_start|>user\nlist it<|im_end|>\n"
        "<|im_start|>assistant\n<tool_call>[\n"
        '{"name": "read", "arguments": {"path": "a"}},\n'
        '{"name": "read", "arguments": {"path": "b"}}\n'
        "]</tool_call><|im_end|>\n"
        "<|im_start|>user\n<tool_response>\nA\n</tool_response>\n"
        "<tool_response>\nB\n</tool_response><|im_end|>\n"
        "<|im_start|>assistant\n<tool_call>[]</tool_call>\ndone<|im_end|>\n"
        "<|im_start|>assistant\n"
    )


def test_a_reply_with_text_and_calls_keeps_both() -> None:
    reply = AssistantMessage((TextContent("first"), ToolCall("read", {"path": "a"}, "c1")))

    assert assistant_text(reply) == (
        '<tool_call>[\n{"name": "read", "arguments": {"path": "a"}}\n]</tool_call>\nfirst'
    )


def test_a_complete_block_parses_into_its_calls() -> None:
    block = (
        "<tool_call>[\n"
        '{"name": "agent", "arguments": {"action": "spawn", "name": "a", "message": "m"}},\n'
        '{"name": "agent", "arguments": {"action": "wait"}}\n'
        "]</tool_call>"
    )

    assert parse_calls(block) == [
        ("agent", {"action": "spawn", "name": "a", "message": "m"}),
        ("agent", {"action": "wait"}),
    ]
    assert parse_calls("<tool_call>[]</tool_call>") == []


@pytest.mark.parametrize(
    "block",
    ["", "<tool_call>[\n", '<tool_call>[\n{"name": "agent", "arguments": {"act', "plain text"],
)
def test_a_block_cut_short_gives_no_calls(block: str) -> None:
    assert parse_calls(block) is None


def test_the_reader_turns_a_block_into_tool_call_events_and_a_tool_use_message() -> None:
    reader = AnswerReader(ModelRef("local", "smollm2"))
    block = '<tool_call>[\n{"name": "read", "arguments": {"path": "a.txt"}}\n]</tool_call>'

    events = list(reader.calls(block))
    message = reader.message(100, 20, ran_out=False)

    assert [type(e) for e in events] == [ToolCallDelta, ToolCallDelta]
    assert json.loads("".join(e.args_fragment for e in events if isinstance(e, ToolCallDelta))) == {
        "path": "a.txt"
    }
    assert message.stop_reason == "toolUse"
    assert [(c.name, c.args) for c in message.tool_calls] == [("read", {"path": "a.txt"})]
    assert message.tool_calls[0].id.startswith("call_")
    assert (message.usage.input, message.usage.output) == (100, 20)
    assert (message.provider, message.model, message.api) == ("local", "smollm2", "llama-cpp")


def test_the_reader_streams_prose_and_reports_running_out_as_length() -> None:
    reader = AnswerReader(ModelRef("local", "smollm2"))

    events = [reader.text("Par"), reader.text("is.")]

    assert events == [TextDelta("Par"), TextDelta("is.")]
    assert reader.message(10, 2, ran_out=False).text == "Paris."
    assert reader.message(10, 2, ran_out=True).stop_reason == "length"


def test_prose_is_held_back_only_while_it_might_start_a_protocol_marker() -> None:
    out: list[str] = []
    prose = ProseFilter(out.append)

    prose.feed("Hello <")
    assert out == ["Hello "]
    prose.feed("b>world")
    assert out == ["Hello ", "<b>world"]
    prose.feed(" end.<tool_")
    prose.feed("response>\nnoise")
    prose.flush()

    assert "".join(out) == "Hello <b>world end."
    assert prose.ended()


def test_prose_that_ends_the_answer_is_flushed_whole() -> None:
    out: list[str] = []
    prose = ProseFilter(out.append)

    prose.feed("a <|im")
    prose.flush()

    assert "".join(out) == "a <|im"


def test_overlap_is_the_longest_end_that_starts_the_marker() -> None:
    assert overlap("abc<tool_c", "<tool_call>") == len("<tool_c")
    assert overlap("abc", "<tool_call>") == 0
    assert overlap("<tool_call", "<tool_call>") == len("<tool_call")


def test_a_call_block_is_kept_as_generated_while_no_call_repeats() -> None:
    block = CallBlock()
    text = (
        '<tool_call>[\n{"name": "ls", "arguments": {}},\n'
        '{"name": "ls", "arguments": {"path": "a"}}\n]</tool_call>'
    )

    for i in range(0, len(text), 7):
        block.feed(text[i : i + 7])

    assert not block.repeating()
    assert block.text() == text


def test_the_first_repeat_of_a_call_ends_the_block_after_the_calls_before_it() -> None:
    spawn = '{"name": "agent", "arguments": {"action": "spawn", "name": "a", "message": "m"}}'
    other = '{"name": "agent", "arguments": {"action": "spawn", "name": "b", "message": "m"}}'
    block = CallBlock()

    for piece in ["<tool_call>[\n", spawn, ",\n", other, ",\n", other, ",\n", '{"na']:
        block.feed(piece)
    block.feed(other)

    assert block.repeating()
    assert block.text() == f"<tool_call>[\n{spawn},\n{other}\n]</tool_call>"
    assert parse_calls(block.text()) == [
        ("agent", {"action": "spawn", "name": "a", "message": "m"}),
        ("agent", {"action": "spawn", "name": "b", "message": "m"}),
    ]


def test_strings_in_the_call_grammar_take_no_raw_control_characters() -> None:
    # A raw newline inside a string makes the block unreadable JSON (seen: a Program's
    # code left unclosed and the block written on inside it); `\n` escapes stay allowed.
    pytest.importorskip("llama_cpp")
    from piagents.ai.local_format import calls_grammar

    chars = [line for line in calls_grammar([READ]).splitlines() if line.startswith("char ::=")]

    assert len(chars) == 1
    assert chars[0].startswith('char ::= [^"\\\\\\x00-\\x1F] | "\\\\" (')


def test_a_programs_code_is_written_under_the_narrowed_grammar_and_the_tool_keeps_its_schema() -> (
    None
):
    pytest.importorskip("llama_cpp")
    from piagents.ai.local_format import calls_grammar
    from piagents.programs import calls

    program = ToolSpec("program", "Run Python.", calls.parameters())

    grammar = calls_grammar([program])

    code = [line for line in grammar.splitlines() if "-arguments-code ::=" in line]
    assert code == ['alternative-0-arguments-code ::= "\\"" [^{}"\\\\\\x00-\\x1f]* "\\"" space']
    # Only the grammar is narrowed: the tool takes any code (or null) from other models.
    assert calls.parameters()["properties"]["code"]["anyOf"][0] == {"type": "string"}
    assert "[^{}" not in calls_grammar([READ])
