"""Settings: `<home>/settings.json`, validated key by key, never fatal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from piagents.ai.retry import RetryPolicy
from piagents.config import (
    AgentsSettings,
    CompactionSettings,
    ProviderSettings,
    Settings,
    default_home,
    load_settings,
    merge,
    parse_settings,
)

EVERY_KEY: dict[str, Any] = {
    "defaultModel": "anthropic/claude-sonnet-4-5",
    "defaultThinkingLevel": "high",
    "providers": {
        "myserver": {
            "api": "openai-completions",
            "baseUrl": "http://127.0.0.1:8000/v1",
            "apiKeyEnv": "MYSERVER_KEY",
            "apiKey": "sk-inline",
            "headers": {"X-Team": "qa"},
        },
        "anthropic": {"baseUrl": "http://127.0.0.1:9000"},
    },
    "retry": {"maxRetries": 5, "baseDelayMs": 250, "maxDelayMs": 4000},
    "compaction": {"enabled": False, "reserveTokens": 1000, "keepRecentTokens": 2000},
    "toolExecution": "sequential",
    "steeringMode": "all",
    "followUpMode": "all",
    "pi-agents": {
        "maxConcurrent": 2,
        "maxOutstanding": 4,
        "extensions": ["ext/one.py", "ext/two.py"],
        "abortTimeoutMs": 1500,
        "agentApi": "supervision",
        "spawnPlacement": "tmux",
        "contextRetirement": False,
        "inlineAttachmentLimitBytes": 1024,
        "mailboxPayloadLimitBytes": 2048,
        "leaseRenewMs": 1000,
        "leaseLapseMs": 4000,
    },
    "store": "postgresql://pi@db.example:5432/agents",
}


def write_settings(home: Path, content: str | bytes | dict[str, Any]) -> Path:
    path = home / "settings.json"
    if isinstance(content, dict):
        path.write_text(json.dumps(content), encoding="utf-8")
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


# ---- every key -------------------------------------------------------------------


def test_every_setting_key_is_read_into_the_settings() -> None:
    s = parse_settings(EVERY_KEY, "settings.json")

    assert s.warnings == ()
    assert s.default_model == "anthropic/claude-sonnet-4-5"
    assert s.default_thinking == "high"
    assert s.providers == {
        "myserver": ProviderSettings(
            "openai-completions",
            "http://127.0.0.1:8000/v1",
            "MYSERVER_KEY",
            "sk-inline",
            {"X-Team": "qa"},
        ),
        "anthropic": ProviderSettings(base_url="http://127.0.0.1:9000"),
    }
    assert s.retry == RetryPolicy(5, 0.25, 4.0)
    assert s.compaction == CompactionSettings(False, 1000, 2000)
    assert s.tool_execution == "sequential"
    assert s.steering_mode == "all"
    assert s.follow_up_mode == "all"
    assert s.agents == AgentsSettings(
        max_concurrent=2,
        max_outstanding=4,
        extensions=("ext/one.py", "ext/two.py"),
        abort_timeout_ms=1500,
        agent_api="supervision",
        spawn_placement="tmux",
        context_retirement=False,
        inline_attachment_limit_bytes=1024,
        mailbox_payload_limit_bytes=2048,
        lease_renew_ms=1000,
        lease_lapse_ms=4000,
    )
    assert s.store == "postgresql://pi@db.example:5432/agents"


def test_an_empty_object_gives_the_defaults_without_warnings() -> None:
    assert parse_settings({}) == Settings()


def test_a_missing_file_gives_the_defaults_without_warnings(home: Path) -> None:
    assert load_settings(home) == Settings()


def test_an_empty_file_gives_the_defaults_without_warnings(home: Path) -> None:
    write_settings(home, "  \n")

    assert load_settings(home) == Settings()


def test_every_setting_key_is_read_from_the_file(home: Path) -> None:
    write_settings(home, EVERY_KEY)

    assert load_settings(home) == parse_settings(EVERY_KEY, str(home / "settings.json"))


@pytest.mark.parametrize("level", ["off", "minimal", "low", "medium", "high", "xhigh", "max"])
def test_each_thinking_level_is_accepted_as_the_default(level: str) -> None:
    s = parse_settings({"defaultThinkingLevel": level})

    assert s.default_thinking == level and s.warnings == ()


def test_a_provider_without_api_is_kept_for_the_registry_to_default() -> None:
    s = parse_settings({"providers": {"local": {"baseUrl": "http://localhost:1234/v1"}}})

    assert s.providers["local"] == ProviderSettings(base_url="http://localhost:1234/v1")
    assert s.warnings == ()


def test_home_comes_from_pi_agents_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PI_AGENTS_HOME", str(tmp_path / "h"))

    assert default_home() == tmp_path / "h"


def test_home_defaults_to_dot_pi_agents(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PI_AGENTS_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))

    assert default_home() == tmp_path / ".pi-agents"


# ---- broken files --------------------------------------------------------------


def test_invalid_json_warns_with_file_and_position_and_uses_defaults(home: Path) -> None:
    raw = b'{"defaultModel": "openai/gpt-5",\n  oops}'
    path = write_settings(home, raw)

    s = load_settings(home)

    assert s.default_model is None
    assert len(s.warnings) == 1
    assert str(path) in s.warnings[0]
    assert "invalid JSON at line 2" in s.warnings[0]
    assert path.read_bytes() == raw


@pytest.mark.parametrize("content", ["[]", '"text"', "42", "null"])
def test_a_file_that_is_not_an_object_warns_and_uses_defaults(home: Path, content: str) -> None:
    path = write_settings(home, content)

    s = load_settings(home)

    assert s.warnings == (f"{path}: expected a JSON object; using the defaults.",)
    assert s.default_model is None


def test_a_file_that_is_not_utf8_warns_instead_of_crashing(home: Path) -> None:
    raw = b'\xff\xfe{"defaultModel": "openai/gpt-5"}'
    path = write_settings(home, raw)

    s = load_settings(home)

    assert s.default_model is None
    assert len(s.warnings) == 1
    assert str(path) in s.warnings[0] and "not UTF-8" in s.warnings[0]
    assert path.read_bytes() == raw


def test_a_utf8_byte_order_mark_is_accepted(home: Path) -> None:
    write_settings(home, b'\xef\xbb\xbf{"toolExecution": "sequential"}')

    s = load_settings(home)

    assert s.tool_execution == "sequential"
    assert s.warnings == ()


@pytest.mark.parametrize("text", ["NaN", "Infinity", "-Infinity"])
def test_a_delay_that_is_not_a_finite_number_warns(home: Path, text: str) -> None:
    write_settings(home, '{"retry": {"maxDelayMs": ' + text + "}}")

    s = load_settings(home)

    assert s.retry == RetryPolicy()
    assert len(s.warnings) == 1 and "retry.maxDelayMs" in s.warnings[0]


def test_an_unreadable_settings_path_warns_and_uses_defaults(home: Path) -> None:
    (home / "settings.json").mkdir()

    s = load_settings(home)

    assert len(s.warnings) == 1
    assert str(home / "settings.json") in s.warnings[0]
    assert "cannot read" in s.warnings[0]


def test_an_invalid_json_file_with_overrides_still_uses_the_overrides(home: Path) -> None:
    write_settings(home, "{nope")

    s = load_settings(home, {"toolExecution": "sequential"})

    assert s.tool_execution == "sequential"
    assert len(s.warnings) == 1 and "invalid JSON" in s.warnings[0]


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        ({"colour": "blue"}, "colour"),
        ({"retry": {"tries": 1}}, "retry.tries"),
        ({"compaction": {"on": True}}, "compaction.on"),
        ({"pi-agents": {"maxAgents": 1}}, "pi-agents.maxAgents"),
        ({"providers": {"x": {"url": "http://h"}}}, "providers.x.url"),
    ],
)
def test_unknown_keys_warn_naming_file_and_key(raw: dict[str, Any], key: str) -> None:
    s = parse_settings(raw, "/h/settings.json")

    assert s.warnings == (f"/h/settings.json: {key}: unknown setting; ignored.",)


@pytest.mark.parametrize(
    ("raw", "key", "field", "default"),
    [
        ({"defaultModel": 3}, "defaultModel", "default_model", None),
        ({"defaultModel": ""}, "defaultModel", "default_model", None),
        ({"defaultModel": "no-slash"}, "defaultModel", "default_model", None),
        ({"defaultThinkingLevel": "huge"}, "defaultThinkingLevel", "default_thinking", "off"),
        ({"toolExecution": "serial"}, "toolExecution", "tool_execution", "parallel"),
        ({"steeringMode": 1}, "steeringMode", "steering_mode", "one-at-a-time"),
        ({"followUpMode": None}, "followUpMode", "follow_up_mode", "one-at-a-time"),
        ({"retry": {"maxRetries": -1}}, "retry.maxRetries", "retry", RetryPolicy()),
        ({"retry": {"maxRetries": True}}, "retry.maxRetries", "retry", RetryPolicy()),
        ({"retry": {"maxRetries": 1.5}}, "retry.maxRetries", "retry", RetryPolicy()),
        ({"retry": {"baseDelayMs": "1s"}}, "retry.baseDelayMs", "retry", RetryPolicy()),
        ({"retry": {"maxDelayMs": -5}}, "retry.maxDelayMs", "retry", RetryPolicy()),
        ({"retry": 3}, "retry", "retry", RetryPolicy()),
        ({"compaction": {"enabled": "yes"}}, "compaction.enabled", "compaction", None),
        ({"compaction": {"reserveTokens": 0}}, "compaction.reserveTokens", "compaction", None),
        (
            {"compaction": {"keepRecentTokens": 1.0}},
            "compaction.keepRecentTokens",
            "compaction",
            None,
        ),
        ({"compaction": []}, "compaction", "compaction", None),
        ({"providers": []}, "providers", "providers", {}),
        ({"providers": {"x": "http://h"}}, "providers.x", "providers", {}),
        ({"providers": {"x": {"api": "grpc"}}}, "providers.x.api", "providers", {}),
        ({"pi-agents": "fast"}, "pi-agents", "agents", None),
    ],
)
def test_wrong_types_warn_naming_file_and_key_and_use_the_default(
    raw: dict[str, Any], key: str, field: str, default: Any
) -> None:
    s = parse_settings(raw, "/h/settings.json")

    assert len(s.warnings) == 1, s.warnings
    assert s.warnings[0].startswith(f"/h/settings.json: {key}: ")
    expected = getattr(Settings(), field) if default is None else default
    assert getattr(s, field) == expected


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("maxConcurrent", 0),
        ("maxConcurrent", "3"),
        ("maxOutstanding", -1),
        ("abortTimeoutMs", 2.5),
        ("agentApi", "both"),
        ("extensions", "one.py"),
        ("extensions", [1, 2]),
    ],
)
def test_wrong_agent_settings_warn_naming_the_key_and_use_the_default(key: str, value: Any) -> None:
    s = parse_settings({"pi-agents": {key: value}}, "/h/settings.json")

    assert len(s.warnings) == 1, s.warnings
    assert s.warnings[0].startswith(f"/h/settings.json: pi-agents.{key}: ")
    assert s.agents == AgentsSettings()


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        (
            "spawnPlacement",
            "elsewhere",
            'expected one of process, tmux, inline, workers, got "elsewhere"',
        ),
        ("contextRetirement", 1, "expected true or false, got 1"),
        (
            "inlineAttachmentLimitBytes",
            False,
            "expected an integer from 1024 to 1048576, got false",
        ),
        ("inlineAttachmentLimitBytes", 1023, "expected an integer from 1024 to 1048576, got 1023"),
        ("mailboxPayloadLimitBytes", 1048577, "expected an integer from 1024 to 1048576"),
        ("mailboxPayloadLimitBytes", None, "expected an integer from 1024 to 1048576, got null"),
    ],
)
def test_wrong_supervision_settings_are_errors_naming_the_key(
    key: str, value: Any, expected: str
) -> None:
    s = parse_settings({"pi-agents": {key: value}}, "/h/settings.json")

    assert s.warnings == ()
    assert len(s.errors) == 1
    assert s.errors[0].startswith(f"/h/settings.json: pi-agents.{key}: {expected}")


def test_supervision_settings_have_the_documented_defaults_and_bounds() -> None:
    d = parse_settings({}, "f").agents
    assert (d.spawn_placement, d.context_retirement) == (None, True)
    assert d.inline_attachment_limit_bytes == d.mailbox_payload_limit_bytes == 131072
    edge = parse_settings(
        {"pi-agents": {"inlineAttachmentLimitBytes": 1024, "mailboxPayloadLimitBytes": 1048576}},
        "f",
    )
    assert edge.errors == ()
    assert edge.agents.inline_attachment_limit_bytes == 1024
    assert edge.agents.mailbox_payload_limit_bytes == 1048576


def test_a_bad_provider_header_map_warns_and_keeps_the_rest_of_the_provider() -> None:
    s = parse_settings(
        {"providers": {"x": {"baseUrl": "http://127.0.0.1:1", "headers": {"A": 1}}}}, "f"
    )

    assert s.warnings == (
        "f: providers.x.headers: expected an object of strings; using the default.",
    )
    assert s.providers["x"] == ProviderSettings(base_url="http://127.0.0.1:1")


def test_one_bad_value_leaves_the_good_ones_in_force() -> None:
    s = parse_settings({"toolExecution": "sequential", "steeringMode": "sometimes"}, "f")

    assert s.tool_execution == "sequential"
    assert s.steering_mode == "one-at-a-time"
    assert len(s.warnings) == 1


def test_max_concurrent_above_max_outstanding_warns_and_uses_both_defaults() -> None:
    s = parse_settings({"pi-agents": {"maxConcurrent": 9, "maxOutstanding": 4}}, "/h/s.json")

    assert s.agents.max_concurrent == AgentsSettings().max_concurrent
    assert s.agents.max_outstanding == AgentsSettings().max_outstanding
    assert len(s.warnings) == 1
    assert s.warnings[0].startswith("/h/s.json: pi-agents")
    assert "maxConcurrent (9)" in s.warnings[0] and "maxOutstanding (4)" in s.warnings[0]


def test_max_concurrent_above_the_default_max_outstanding_alone_also_warns() -> None:
    s = parse_settings({"pi-agents": {"maxConcurrent": 20}}, "f")

    assert (s.agents.max_concurrent, s.agents.max_outstanding) == (3, 8)
    assert "maxConcurrent (20)" in s.warnings[0]


def test_max_concurrent_equal_to_max_outstanding_is_fine() -> None:
    s = parse_settings({"pi-agents": {"maxConcurrent": 5, "maxOutstanding": 5}})

    assert (s.agents.max_concurrent, s.agents.max_outstanding, s.warnings) == (5, 5, ())


def test_warnings_from_a_file_never_change_the_file(home: Path) -> None:
    raw = b'{"colour": 1, "retry": {"maxRetries": "x"}, "pi-agents": {"maxConcurrent": 99}}'
    path = write_settings(home, raw)

    s = load_settings(home)

    assert len(s.warnings) == 3
    assert all(w.startswith(f"{path}: ") for w in s.warnings)
    assert path.read_bytes() == raw


# ---- overrides -----------------------------------------------------------------


def test_overrides_merge_deeply_over_the_file(home: Path) -> None:
    write_settings(
        home,
        {
            "defaultModel": "openai/gpt-5",
            "retry": {"maxRetries": 7, "baseDelayMs": 100},
            "pi-agents": {"maxConcurrent": 2, "maxOutstanding": 6},
            "providers": {"myserver": {"baseUrl": "http://127.0.0.1:8000/v1", "apiKey": "k"}},
        },
    )

    s = load_settings(
        home,
        {
            "retry": {"maxRetries": 1},
            "pi-agents": {"maxConcurrent": 4},
            "providers": {"myserver": {"api": "openai-responses"}},
        },
    )

    assert s.warnings == ()
    assert s.default_model == "openai/gpt-5"
    assert s.retry == RetryPolicy(1, 0.1, 60.0)
    assert (s.agents.max_concurrent, s.agents.max_outstanding) == (4, 6)
    assert s.providers["myserver"] == ProviderSettings(
        "openai-responses", "http://127.0.0.1:8000/v1", None, "k"
    )


def test_an_override_replaces_a_value_that_is_not_an_object() -> None:
    assert merge({"a": {"b": 1}, "c": [1]}, {"a": 2, "c": [2, 3]}) == {"a": 2, "c": [2, 3]}
    assert merge({"a": 1}, {"a": {"b": 2}}) == {"a": {"b": 2}}


def test_merge_leaves_both_inputs_unchanged() -> None:
    base = {"a": {"b": 1, "c": 2}}
    over = {"a": {"c": 3}, "d": 4}

    assert merge(base, over) == {"a": {"b": 1, "c": 3}, "d": 4}
    assert base == {"a": {"b": 1, "c": 2}}
    assert over == {"a": {"c": 3}, "d": 4}


def test_bad_overrides_warn_like_bad_file_values(home: Path) -> None:
    s = load_settings(home, {"pi-agents": {"maxConcurrent": "lots"}})

    assert len(s.warnings) == 1
    assert "pi-agents.maxConcurrent" in s.warnings[0]


# ---- hostile files and absurd numbers ---------------------------------------------------

HUGE = int("1" + "0" * 400)
NUMERIC_KEYS = [
    ("retry", "maxRetries"),
    ("retry", "baseDelayMs"),
    ("retry", "maxDelayMs"),
    ("compaction", "reserveTokens"),
    ("compaction", "keepRecentTokens"),
    ("pi-agents", "maxConcurrent"),
    ("pi-agents", "maxOutstanding"),
    ("pi-agents", "abortTimeoutMs"),
]


@pytest.mark.parametrize(("section", "key"), NUMERIC_KEYS)
@pytest.mark.parametrize("value", [HUGE, 2**63, float("inf"), float("nan"), True, 1e300])
def test_every_numeric_setting_refuses_absurd_numbers_and_booleans(
    section: str, key: str, value: Any
) -> None:
    settings = parse_settings({section: {key: value}}, "s.json")
    [warning] = settings.warnings
    assert warning.startswith(f"s.json: {section}.{key}: expected ")
    assert warning.endswith("; using the default.") and len(warning) < 200
    assert settings == Settings(warnings=settings.warnings)  # the defaults


def test_the_largest_accepted_timeout_can_still_be_waited_for() -> None:
    import threading

    settings = parse_settings({"pi-agents": {"abortTimeoutMs": 2**31 - 1}})
    assert settings.warnings == ()
    assert settings.agents.abort_timeout_ms / 1000 < threading.TIMEOUT_MAX


def test_a_deeply_nested_settings_file_warns_instead_of_a_recursion_error(home: Path) -> None:
    (home / "settings.json").write_text('{"x": ' + "[" * 20_000 + "]" * 20_000 + "}")
    settings = load_settings(home)
    [warning] = settings.warnings
    assert warning == (
        f"{home / 'settings.json'}: nested more than 64 levels deep; using the defaults. "
        "The file was left as it is."
    )


def test_brackets_inside_strings_do_not_count_as_nesting(home: Path) -> None:
    (home / "settings.json").write_text(json.dumps({"defaultModel": "a/[[[[" + "[" * 100 + '"'}))
    assert load_settings(home).default_model == "a/[[[[" + "[" * 100 + '"'


def test_an_integer_too_long_for_python_warns(home: Path) -> None:
    (home / "settings.json").write_text('{"retry": {"maxRetries": 1' + "0" * 5000 + "}}")
    [warning] = load_settings(home).warnings
    assert "settings.json: invalid JSON" in warning and len(warning) < 300


def test_a_long_bad_value_is_not_echoed_whole() -> None:
    [warning] = parse_settings({"pi-agents": {"maxConcurrent": "x" * 100_000}}).warnings
    assert len(warning) < 300


def test_a_settings_file_that_is_a_fifo_does_not_block(home: Path) -> None:
    import os

    os.mkfifo(home / "settings.json")
    [warning] = load_settings(home).warnings
    assert "not a regular file" in warning


def test_an_oversized_settings_file_is_not_read(home: Path) -> None:
    (home / "settings.json").write_text('{"x": "' + "y" * 2_000_000 + '"}')
    [warning] = load_settings(home).warnings
    assert "larger than 1 MiB" in warning


def test_a_long_unknown_key_is_shortened() -> None:
    [warning] = parse_settings({"k" * 100_000: 1}).warnings
    assert len(warning) < 200


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("sqlite:///tmp/x.db", "unknown store 'sqlite': expected a PostgreSQL URL such as"),
        ("db.example:5432", "unknown store 'db.example': expected a PostgreSQL URL"),
        ("postgresql://pi@db.example:port/agents", "not a valid URL"),
        ("postgresql://pi@db.example:5432", "the URL names no database"),
        ("", "expected a PostgreSQL URL such as postgresql://"),
        (5432, "expected a PostgreSQL URL such as postgresql://"),
    ],
)
def test_a_store_that_is_not_a_postgresql_url_is_an_error(value: object, problem: str) -> None:
    s = parse_settings({"store": value}, "/h/settings.json")

    assert s.store is None
    assert len(s.errors) == 1
    assert s.errors[0].startswith(f"/h/settings.json: store: {problem}")


def test_without_a_store_setting_the_home_keeps_its_sqlite_store() -> None:
    assert parse_settings({"store": None}).store is None
    assert parse_settings({}).store is None


def test_lease_heartbeats_are_set_under_pi_agents_and_a_bad_one_warns() -> None:
    assert (AgentsSettings().lease_renew_ms, AgentsSettings().lease_lapse_ms) == (5_000, 15_000)
    s = parse_settings({"pi-agents": {"leaseRenewMs": 200, "leaseLapseMs": 900}})
    assert (s.agents.lease_renew_ms, s.agents.lease_lapse_ms) == (200, 900)
    bad = parse_settings({"pi-agents": {"leaseLapseMs": 0}}, "s.json")
    assert bad.agents.lease_lapse_ms == 15_000
    assert bad.warnings == (
        "s.json: pi-agents.leaseLapseMs: expected a positive integer, got 0; using the default.",
    )
