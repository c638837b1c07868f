"""Writing the supervision settings of /agents to `<home>/settings.json`."""

from __future__ import annotations

import json

import pytest

from piagents.config import load_settings
from piagents.tui.settings_file import SettingsFileError, parse_limit, write_agents_setting


def test_a_setting_is_added_under_pi_agents_keeping_every_other_key(home):
    path = home / "settings.json"
    path.write_text(
        "\ufeff" + json.dumps({"defaultModel": "openai/gpt-5", "pi-agents": {"maxConcurrent": 2}})
    )
    write_agents_setting(home, "contextRetirement", False)
    write_agents_setting(home, "inlineAttachmentLimitBytes", 2048)
    assert json.loads(path.read_text()) == {
        "defaultModel": "openai/gpt-5",
        "pi-agents": {
            "maxConcurrent": 2,
            "contextRetirement": False,
            "inlineAttachmentLimitBytes": 2048,
        },
    }
    agents = load_settings(home).agents
    assert not agents.context_retirement and agents.inline_attachment_limit_bytes == 2048
    assert [p.name for p in home.iterdir()] == ["settings.json"]  # no temporary file left


def test_a_missing_file_is_created(home):
    write_agents_setting(home, "mailboxPayloadLimitBytes", 1_048_576)
    saved = json.loads((home / "settings.json").read_text())
    assert saved == {"pi-agents": {"mailboxPayloadLimitBytes": 1048576}}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"pi-agents": ', "invalid JSON at line 1 column 15"),
        ("[1, 2]", "expected a JSON object"),
        ('{"pi-agents": 3}', '"pi-agents" is not an object'),
        ('{"x": ' + "[" * 20_000 + "]" * 20_000 + "}", "nested more than 64 levels deep"),
        ('{"x": 1' + "0" * 5000 + "}", "a number too long to read"),
    ],
    ids=["unclosed", "array", "section", "deep", "long-number"],
)
def test_a_file_that_cannot_be_read_as_settings_is_left_as_it_is(home, text, problem):
    path = home / "settings.json"
    path.write_text(text)
    with pytest.raises(SettingsFileError) as caught:
        write_agents_setting(home, "contextRetirement", True)
    assert problem in str(caught.value) and str(path) in str(caught.value)
    assert path.read_text() == text


def test_limits_outside_their_range_are_refused_naming_the_key(home):
    for value in (1023, 1_048_577, True, "4096"):
        with pytest.raises(SettingsFileError, match=r"pi-agents\.inlineAttachmentLimitBytes"):
            write_agents_setting(home, "inlineAttachmentLimitBytes", value)
    assert not (home / "settings.json").exists()
    assert parse_limit("mailboxPayloadLimitBytes", " 65_536 ") == 65536
    with pytest.raises(SettingsFileError, match="got 'lots'"):
        parse_limit("mailboxPayloadLimitBytes", "lots")
    with pytest.raises(SettingsFileError, match="expected true or false"):
        write_agents_setting(home, "contextRetirement", "yes")
