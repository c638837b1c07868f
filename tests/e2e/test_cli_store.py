"""End-to-end: `--store postgresql://...` keeps everything of the command in that
database (SDK-CONTRACT.md, "Another store"), and a store URL that is none is a
usage error. The commands are those of test_cli.py, on a database of the test's own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_cli import Cli, failed, json_lines, new_cli, ok


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return new_cli(tmp_path)


def test_a_prompt_continue_sessions_and_export_all_use_the_postgresql_store(
    cli: Cli, postgres_url: str
) -> None:
    store = ("--store", postgres_url)
    first = ok(cli.prompt("history", *store, "--mode", "json", "-p", "first"))
    session_id = json_lines(first.stdout)[0]["id"]

    again = ok(cli.prompt("history", *store, "--continue", "-p", "second"))

    assert json.loads(again.stdout) == [
        ["user", "first"],
        ["assistant", '[["user", "first"]]'],
        ["user", "second"],
    ]
    assert not (cli.home / "store.db").exists()  # nothing went to the home's SQLite store
    listing = ok(cli.run("sessions", *store)).stdout.splitlines()
    assert [line.split()[0] for line in listing[1:]] == [session_id]
    assert ok(cli.run("sessions")).stdout.strip() == "No sessions."  # the home's own store
    exported = json_lines(ok(cli.run("export", str(session_id), *store)).stdout)
    assert [e["message"]["role"] for e in exported[1:]] == [  # type: ignore[index]
        "user",
        "assistant",
        "user",
        "assistant",
    ]


def test_the_store_setting_of_the_home_is_used_by_every_command(
    cli: Cli, postgres_url: str
) -> None:
    cli.home.mkdir(parents=True, exist_ok=True)
    (cli.home / "settings.json").write_text(json.dumps({"store": postgres_url}))
    first = ok(cli.prompt("history", "--mode", "json", "-p", "first"))
    session_id = json_lines(first.stdout)[0]["id"]

    assert not (cli.home / "store.db").exists()
    assert [line.split()[0] for line in ok(cli.run("sessions")).stdout.splitlines()[1:]] == [
        session_id
    ]


def test_a_store_that_is_not_a_postgresql_url_is_a_usage_error(cli: Cli) -> None:
    result = failed(cli.prompt("history", "--store", "mysql://db/agents", "-p", "hi"))
    assert result.returncode == 2
    assert "--store: unknown store 'mysql'" in result.stderr
    result = failed(cli.run("sessions", "--store", "postgresql://db.example"))
    assert "the URL names no database" in result.stderr


def test_a_postgresql_server_that_is_down_is_a_clear_error(cli: Cli) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"postgresql://pi:secret@127.0.0.1:{port}/agents"
    result = failed(cli.prompt("history", "--store", url, "-p", "hi"))
    assert "cannot reach the PostgreSQL server" in result.stderr
    assert "secret" not in result.stderr
    result = failed(cli.run("sessions", "--store", url))
    assert "cannot reach the PostgreSQL server" in result.stderr


def test_sessions_reads_only_the_store_setting_of_the_home(cli: Cli) -> None:
    cli.home.mkdir(parents=True, exist_ok=True)
    settings = cli.home / "settings.json"
    settings.write_text(json.dumps({"pi-agents": {"agentApi": "nonsense"}}))
    assert ok(cli.run("sessions")).stdout.strip() == "No sessions."  # as before: not its business

    settings.write_text(json.dumps({"store": "sqlite:///elsewhere.db"}))
    result = failed(cli.run("sessions"))
    assert f"{settings}: store: unknown store 'sqlite'" in result.stderr
