"""How messages read in the transcript (pure)."""

from piagents.agents.texts import Shown, agent_message
from piagents.tui import message_text
from piagents.tui.message_text import fold, tool_arguments


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
