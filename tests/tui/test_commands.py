"""Slash commands: parsing and completion (pure)."""

from piagents.tui.commands import COMMANDS, completions, help_text, parse


def test_a_command_is_a_slash_a_name_and_its_arguments():
    assert parse("/model faux/x:high ") == ("model", "faux/x:high")
    assert parse("  /tasks") == ("tasks", "")
    assert parse("hello /model") is None
    assert parse("//not a command") is None


def test_every_command_of_the_issue_is_offered():
    names = {c.name for c in COMMANDS}
    assert names == {
        "model",
        "thinking",
        "new",
        "resume",
        "name",
        "compact",
        "tasks",
        "agents",
        "export",
        "quit",
        "help",
    }


def test_a_prefix_completes_to_the_commands_it_starts():
    offered = completions("/t")
    assert [c.value for c in offered] == ["/thinking ", "/tasks"]
    assert [c.submit for c in offered] == [False, True]
    assert offered[0].label == "/thinking <level>"


def test_arguments_complete_for_thinking_levels_and_models():
    assert [c.value for c in completions("/thinking m")] == [
        "/thinking minimal",
        "/thinking medium",
        "/thinking max",
    ]
    assert [c.value for c in completions("/model f", ["faux/one", "openai/x"])] == [
        "/model faux/one"
    ]
    assert completions("/thinking high") == []
    assert completions("/name x") == []


def test_plain_text_and_multi_line_text_get_no_completion():
    assert completions("hello") == []
    assert completions("/mo\nre") == []


def test_help_names_every_command_and_the_keys():
    text = help_text()
    for command in COMMANDS:
        assert f"/{command.name}" in text
    assert "Alt+Enter" in text and "Escape" in text
