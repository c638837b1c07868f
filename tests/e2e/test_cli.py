"""End-to-end: the installed `pi-agents` command, driven by a scripted model.

Every test runs the real command in a subprocess with a temporary home and
working directory; the model is a route of `scripted_model.py`
(`--model faux/scripted_model:<function>`), found through PYTHONPATH.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import piagents
from support import eventually

E2E_DIR = Path(__file__).resolve().parent
RUN_TIMEOUT = 30


def pi_agents_command() -> list[str]:
    """The installed console script of this interpreter, else `python -m piagents.cli`."""
    beside = Path(sys.executable).parent / "pi-agents"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("pi-agents")
    return [found] if found else [sys.executable, "-m", "piagents.cli"]


def route(name: str) -> str:
    return f"faux/scripted_model:{name}"


@dataclass
class Cli:
    home: Path
    cwd: Path
    env: dict[str, str]

    home_first: bool = False

    def _argv(self, args: tuple[str, ...]) -> list[str]:
        home = ["--home", str(self.home)]
        if self.home_first:
            return [*pi_agents_command(), *home, *args]
        return [*pi_agents_command(), *args, *home]

    def run(
        self,
        *args: str,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        stdin: str | None = None,
        stdout: int = subprocess.PIPE,
        shell_prefix: tuple[str, ...] = (),
    ) -> subprocess.CompletedProcess[str]:
        """Run the command; `stdin` is text piped to it (default: /dev/null), `stdout`
        where its output goes, `shell_prefix` a wrapper such as `sh -c 'exec "$@" <&-'`."""
        return subprocess.run(
            [*shell_prefix, *self._argv(args)],
            cwd=cwd or self.cwd,
            env={**self.env, **(env or {})},
            stdin=subprocess.DEVNULL if stdin is None else None,
            input=stdin,
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            timeout=RUN_TIMEOUT,
        )

    def start(
        self, *args: str, env: dict[str, str] | None = None, stdin: int = subprocess.DEVNULL
    ) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self._argv(args),
            cwd=self.cwd,
            env={**self.env, **(env or {})},
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def prompt(self, model: str, *args: str, **kw: object) -> subprocess.CompletedProcess[str]:
        return self.run("--model", route(model), *args, **kw)  # type: ignore[arg-type]

    def session_ids(self) -> list[str]:
        out = self.run("sessions")
        assert out.returncode == 0, out.stderr
        return [line.split()[0] for line in out.stdout.splitlines()[1:]]


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return new_cli(tmp_path)


def new_cli(tmp_path: Path) -> Cli:
    """The command with a home and a working directory of its own under `tmp_path`."""
    home, cwd = tmp_path / "home", tmp_path / "work"
    cwd.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")}
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(E2E_DIR), os.environ.get("PYTHONPATH", "")) if p
    )
    env["PI_AGENTS_HOME"] = str(tmp_path / "not-the-home")
    return Cli(home, cwd, env)


def ok(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stderr}"
    return result


def failed(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode != 0, result.stdout
    assert "Traceback" not in result.stderr, result.stderr
    return result


def json_lines(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines()]


# ---- tools ------------------------------------------------------------------


def test_a_scripted_model_writes_edits_and_reads_a_file(cli: Cli) -> None:
    result = ok(cli.prompt("edit_files", "-p", "make the notes"))

    assert (cli.cwd / "notes.txt").read_text(encoding="utf-8") == "alpha\ngamma\n"
    answer = result.stdout.strip()
    assert answer.startswith("final: ")
    assert "alpha" in answer and "gamma" in answer and "beta" not in answer


def test_a_scripted_model_runs_a_shell_command_and_answers_with_its_output(cli: Cli) -> None:
    result = ok(cli.prompt("shell", "-p", "run it"))

    assert (cli.cwd / "out.txt").read_text(encoding="utf-8") == "hi\n"
    assert result.stdout.strip() == "saw: out.txt"


# ---- output modes -----------------------------------------------------------


def test_json_mode_prints_a_session_line_then_one_event_per_line(cli: Cli) -> None:
    result = ok(cli.prompt("shell", "--mode", "json", "-p", "run it"))

    lines = json_lines(result.stdout)
    first = lines[0]
    assert first["type"] == "session"
    assert first["cwd"] == str(cli.cwd.resolve())
    assert first["model"] == route("shell")
    assert first["id"] in cli.session_ids()
    # The runtime's events (README: Events): the turn's own, with the Agent's id, and
    # the runtime's (the input accepted and ended, states, the Agent going offline).
    events = lines[1:]
    assert all(isinstance(line["type"], str) for line in events)
    types = [line["type"] for line in events]
    assert "message" in types and "tool_start" in types
    assert all(line["agent"] == first["id"] for line in events if line["type"] == "message")
    assert types.index("input_accepted") < types.index("run_start") < types.index("input_ended")
    ends = [line for line in events if line["type"] == "run_end"]
    assert len(ends) == 1
    assert ends[0]["status"] == "completed"
    assert ends[0]["answer"] == "saw: out.txt"
    roles = [line["message"]["role"] for line in events if line["type"] == "message"]  # type: ignore[index]
    assert roles == ["user", "assistant", "toolResult", "assistant"]
    assert types[-1] == "agent_unloaded"  # the runtime closed


def test_version_prints_the_version_and_exits_zero(cli: Cli) -> None:
    result = ok(cli.run("--version"))

    assert result.stdout.strip() == f"pi-agents {piagents.__version__}"


# ---- the prompt: words and standard input ------------------------------------


def test_a_reply_cut_off_at_the_output_limit_is_said_so_on_stderr(cli: Cli) -> None:
    result = ok(cli.prompt("cut_off", "-p", "tell me everything"))

    assert result.stdout.strip() == "The first half of"
    assert "pi-agents: the model's last reply stopped at its output limit" in result.stderr


def test_a_reply_that_ends_normally_has_no_such_note(cli: Cli) -> None:
    result = ok(cli.prompt("hello", "-p", "hi"))

    assert "output limit" not in result.stderr


def test_a_prompt_piped_to_standard_input_is_sent_to_the_model(cli: Cli) -> None:
    result = ok(cli.prompt("history", "-p", stdin="what is in this directory?\n"))

    assert json.loads(result.stdout) == [["user", "what is in this directory?"]]


def test_piped_input_is_appended_to_the_prompt_given(cli: Cli) -> None:
    result = ok(cli.prompt("history", "-p", "summarise this log", stdin="line one\nline two\n"))

    assert json.loads(result.stdout) == [["user", "summarise this log\n\nline one\nline two"]]


def test_piped_input_without_print_flag_runs_in_print_mode(cli: Cli) -> None:
    result = ok(cli.prompt("history", stdin="hello over a pipe"))

    assert json.loads(result.stdout) == [["user", "hello over a pipe"]]


def test_empty_piped_input_is_no_prompt(cli: Cli) -> None:
    result = failed(cli.prompt("hello", "-p", stdin="  \n"))

    assert result.returncode == 2
    assert "no prompt" in result.stderr


def test_a_closed_standard_input_is_no_input_and_never_blocks(cli: Cli) -> None:
    closed = ("sh", "-c", 'exec "$@" <&-', "sh")

    result = ok(cli.prompt("history", "-p", "hi", shell_prefix=closed))

    assert json.loads(result.stdout) == [["user", "hi"]]


def test_a_terminal_on_standard_input_is_not_read(cli: Cli) -> None:
    import pty

    leader, follower = pty.openpty()
    try:
        proc = cli.start("--model", route("history"), "-p", "hi", stdin=follower)
        out, err = proc.communicate(timeout=RUN_TIMEOUT)
    finally:
        os.close(leader)
        os.close(follower)

    assert proc.returncode == 0, err
    assert json.loads(out) == [["user", "hi"]]


def test_a_slow_pipe_is_waited_for_and_the_wait_is_explained(cli: Cli) -> None:
    proc = cli.start("--model", route("history"), "-p", "review", stdin=subprocess.PIPE)
    assert proc.stdin is not None and proc.stderr is not None and proc.stdout is not None
    try:
        notice = proc.stderr.readline()  # nothing arrived yet: it says what it waits for
        assert "standard input" in notice and "/dev/null" in notice, notice
        proc.stdin.write("the late part\n")
        proc.stdin.close()
        out, err = proc.stdout.read(), proc.stderr.read()  # to the end: the process ended
        proc.wait(timeout=RUN_TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()

    assert proc.returncode == 0, err
    assert json.loads(out) == [["user", "review\n\nthe late part"]]


@pytest.mark.parametrize(
    ("argv", "suggested"),
    [
        pytest.param(("sessoins",), "pi-agents sessions", id="sessoins"),
        pytest.param(("sessoins", "--all"), "pi-agents sessions", id="with-an-option"),
        pytest.param(("exprot",), "pi-agents export", id="exprot"),
        pytest.param(("--mode", "text", "trsut"), "pi-agents trust", id="after-options"),
        pytest.param(("-p", "sessions"), "pi-agents sessions", id="a-command-not-first"),
    ],
)
def test_a_mistyped_command_is_a_usage_error_and_reaches_no_model(
    cli: Cli, argv: tuple[str, ...], suggested: str
) -> None:
    result = failed(cli.run(*argv, "--model", route("hello")))

    assert result.returncode == 2
    assert suggested in result.stderr
    assert "-- " in result.stderr  # how to send the word as a prompt after all
    assert result.stdout == ""
    assert cli.session_ids() == []


def test_a_command_word_after_double_dash_is_a_prompt(cli: Cli) -> None:
    cli.home_first = True  # everything after `--` is the prompt

    result = ok(cli.prompt("history", "-p", "--", "sessions"))

    assert json.loads(result.stdout) == [["user", "sessions"]]


def test_a_command_like_word_with_piped_input_is_a_prompt(cli: Cli) -> None:
    result = ok(cli.prompt("history", "-p", "report", stdin="the log\n"))

    assert json.loads(result.stdout) == [["user", "report\n\nthe log"]]


@pytest.mark.parametrize("prompt", ["hello", "test", "server logs are noisy"])
def test_a_word_that_is_not_near_a_command_is_a_prompt(cli: Cli, prompt: str) -> None:
    result = ok(cli.prompt("history", *prompt.split()))

    assert json.loads(result.stdout) == [["user", prompt]]


# ---- sessions ---------------------------------------------------------------


def test_continue_resumes_the_latest_session_of_this_directory(cli: Cli, tmp_path: Path) -> None:
    ok(cli.prompt("history", "-p", "first"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ok(cli.prompt("history", "-p", "other directory", cwd=elsewhere))

    result = ok(cli.prompt("history", "--continue", "-p", "second"))

    seen = json.loads(result.stdout)
    assert [role for role, _ in seen] == ["user", "assistant", "user"]
    assert seen[0] == ["user", "first"]
    assert seen[2] == ["user", "second"]
    assert len(cli.session_ids()) == 2


def test_continue_without_an_earlier_session_says_so_and_sends_nothing(
    cli: Cli, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ok(cli.prompt("history", "-p", "a session in another directory", cwd=elsewhere))

    result = failed(cli.prompt("history", "-c", "-p", "hello"))

    assert result.returncode == 1
    assert "no earlier session" in result.stderr
    assert str(cli.cwd) in result.stderr
    assert result.stdout == ""
    assert len(cli.session_ids()) == 1  # only the other directory's


def test_session_flag_resumes_that_session_by_id_or_unique_prefix(cli: Cli) -> None:
    first = ok(cli.prompt("history", "--mode", "json", "-p", "one"))
    session_id = json_lines(first.stdout)[0]["id"]
    assert isinstance(session_id, str)
    ok(cli.prompt("history", "-p", "a newer session"))

    by_id = ok(cli.prompt("history", "--session", session_id, "-p", "two"))
    by_prefix = ok(cli.prompt("history", "--session", session_id[:8], "-p", "three"))

    assert [text for role, text in json.loads(by_id.stdout) if role == "user"] == ["one", "two"]
    assert [text for role, text in json.loads(by_prefix.stdout) if role == "user"] == [
        "one",
        "two",
        "three",
    ]


def test_an_unknown_session_id_is_a_clear_error(cli: Cli) -> None:
    ok(cli.prompt("hello", "-p", "hi"))

    result = failed(cli.prompt("hello", "--session", "no-such-session", "-p", "hi"))

    assert "No session matches 'no-such-session'" in result.stderr


def test_sessions_lists_each_session_with_its_id_cwd_and_model(cli: Cli) -> None:
    result = ok(cli.prompt("hello", "--mode", "json", "-p", "hi"))
    session_id = json_lines(result.stdout)[0]["id"]

    listing = ok(cli.run("sessions")).stdout.splitlines()

    assert listing[0].split() == ["ID", "NAME", "UPDATED", "MODEL", "CWD", "PROMPT"]
    assert len(listing) == 2
    row = listing[1]
    assert row.split()[0] == session_id
    assert route("hello") in row.split()
    assert str(cli.cwd.resolve()) in row.split()


def test_sessions_shows_each_sessions_latest_prompt_on_one_line(cli: Cli) -> None:
    ok(cli.prompt("hello", "-p", "the first question"))
    ok(cli.prompt("hello", "--continue", "-p", "and then\na second,   longer one"))
    ok(cli.prompt("hello", "-p", "x" * 200, cwd=cli.cwd))

    rows = ok(cli.run("sessions")).stdout.splitlines()[1:]

    newest, older = rows
    assert newest.endswith("  " + "x" * 59 + "…")
    assert older.endswith("  and then a second, longer one")
    assert "the first question" not in older


def test_sessions_on_an_empty_home_says_so(cli: Cli) -> None:
    assert ok(cli.run("sessions")).stdout.strip() == "No sessions."


def test_export_prints_the_session_as_pi_style_jsonl(cli: Cli) -> None:
    result = ok(cli.prompt("shell", "--mode", "json", "-p", "run it"))
    session_id = json_lines(result.stdout)[0]["id"]
    assert isinstance(session_id, str)

    exported = json_lines(ok(cli.run("export", session_id)).stdout)

    header, entries = exported[0], exported[1:]
    assert header["type"] == "session"
    assert header["id"] == session_id
    assert header["cwd"] == str(cli.cwd.resolve())
    assert header["model"] == route("shell")
    assert all(e["type"] == "message" for e in entries)
    assert [e["message"]["role"] for e in entries] == [  # type: ignore[index]
        "user",
        "assistant",
        "toolResult",
        "assistant",
    ]
    assert entries[0]["parentId"] is None
    for parent, child in itertools.pairwise(entries):
        assert child["parentId"] == parent["id"]
    tool_call = entries[1]["message"]["content"][0]  # type: ignore[index]
    assert tool_call["type"] == "toolCall" and tool_call["name"] == "bash"


def test_export_to_a_file_writes_the_same_lines(cli: Cli, tmp_path: Path) -> None:
    result = ok(cli.prompt("hello", "--mode", "json", "-p", "hi"))
    session_id = json_lines(result.stdout)[0]["id"]
    assert isinstance(session_id, str)
    target = tmp_path / "s.jsonl"

    written = ok(cli.run("export", session_id[:8], "-o", str(target)))

    assert written.stdout == ""
    assert session_id in written.stderr
    assert target.read_text(encoding="utf-8") == ok(cli.run("export", session_id)).stdout


def test_home_may_come_before_the_sessions_and_export_commands(cli: Cli) -> None:
    result = ok(cli.prompt("hello", "--mode", "json", "-p", "hi"))
    session_id = json_lines(result.stdout)[0]["id"]
    assert isinstance(session_id, str)
    cli.home_first = True

    listing = ok(cli.run("sessions"))
    exported = ok(cli.run("export", session_id))

    assert session_id in listing.stdout
    assert json_lines(exported.stdout)[0]["id"] == session_id
    assert len(cli.session_ids()) == 1  # neither word went to the model as a prompt


def test_export_to_an_unwritable_path_fails_clearly(cli: Cli, tmp_path: Path) -> None:
    result = ok(cli.prompt("hello", "--mode", "json", "-p", "hi"))
    session_id = json_lines(result.stdout)[0]["id"]
    assert isinstance(session_id, str)
    target = tmp_path / "no" / "such" / "dir" / "s.jsonl"

    failed_export = failed(cli.run("export", session_id, "-o", str(target)))

    assert str(target) in failed_export.stderr


def test_a_model_given_when_continuing_is_recorded_in_the_session(cli: Cli) -> None:
    ok(cli.prompt("history", "-p", "first"))

    switched = ok(cli.run("--model", route("hello") + ":high", "--continue", "-p", "second"))
    kept = ok(cli.run("--continue", "-p", "third"))

    assert switched.stdout.strip() == "hello from the scripted model"
    assert kept.stdout.strip() == "hello from the scripted model"
    (session_id,) = cli.session_ids()
    header = json_lines(ok(cli.run("export", session_id)).stdout)[0]
    assert (header["model"], header["thinkingLevel"]) == (route("hello"), "high")
    assert route("hello") in ok(cli.run("sessions")).stdout


def test_exported_entry_timestamps_have_millisecond_precision_like_pi(cli: Cli) -> None:
    result = ok(cli.prompt("hello", "--mode", "json", "-p", "hi"))
    session_id = json_lines(result.stdout)[0]["id"]
    assert isinstance(session_id, str)

    exported = json_lines(ok(cli.run("export", session_id)).stdout)

    for line in exported:
        stamp = str(line["timestamp"])
        assert stamp.endswith("Z") and len(stamp.split(".")[-1]) == 4, stamp


def test_export_of_an_unknown_session_fails_clearly(cli: Cli) -> None:
    result = failed(cli.run("export", "nope"))

    assert "No session matches 'nope'" in result.stderr


# ---- output into a closed pipe ------------------------------------------------


@pytest.fixture
def closed_pipe() -> Iterator[int]:
    """The write end of a pipe whose reader is gone, as `| head` leaves it once done."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    yield write_end
    os.close(write_end)


def quiet_end(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 128 + signal.SIGPIPE, result.stderr
    assert result.stderr == "", result.stderr


@pytest.mark.parametrize("argv", [("sessions",), ("trust", "--list")], ids=" ".join)
def test_a_listing_into_a_closed_pipe_ends_quietly(
    cli: Cli, closed_pipe: int, argv: tuple[str, ...]
) -> None:
    ok(cli.prompt("hello", "-p", "hi"))

    quiet_end(cli.run(*argv, stdout=closed_pipe))


def test_export_into_a_closed_pipe_ends_quietly(cli: Cli, closed_pipe: int) -> None:
    session_id = json_lines(ok(cli.prompt("shell", "--mode", "json", "-p", "x")).stdout)[0]["id"]
    assert isinstance(session_id, str)

    quiet_end(cli.run("export", session_id, stdout=closed_pipe))


def test_an_answer_into_a_closed_pipe_ends_quietly(cli: Cli, closed_pipe: int) -> None:
    quiet_end(cli.prompt("hello", "-p", "hi", stdout=closed_pipe))

    assert len(cli.session_ids()) == 1  # the run itself was done and recorded


def test_json_events_into_a_closed_pipe_end_quietly_before_the_model_is_called(
    cli: Cli, closed_pipe: int, tmp_path: Path
) -> None:
    started = tmp_path / "started"

    quiet_end(
        cli.prompt(
            "slow",
            "--mode",
            "json",
            "-p",
            "hi",
            stdout=closed_pipe,
            env={"SCRIPTED_SLEEP": "60", "SCRIPTED_STARTED": str(started)},
        )
    )

    assert not started.exists()


def test_json_events_into_a_pipe_closed_mid_run_stop_the_turn(cli: Cli, tmp_path: Path) -> None:
    started, go = tmp_path / "started", tmp_path / "go"
    read_end, write_end = os.pipe()
    proc = subprocess.Popen(
        cli._argv(("--model", route("gated_tool_then_slow"), "--mode", "json", "-p", "x")),
        cwd=cli.cwd,
        env={
            **cli.env,
            "SCRIPTED_STARTED": str(started),
            "SCRIPTED_GO": str(go),
            "SCRIPTED_SLEEP": "60",  # beyond RUN_TIMEOUT: only a stopped turn ends in time
        },
        stdin=subprocess.DEVNULL,
        stdout=write_end,
        stderr=subprocess.PIPE,
        text=True,
    )
    os.close(write_end)
    try:
        with os.fdopen(read_end, encoding="utf-8") as reader:
            assert json.loads(reader.readline())["type"] == "session"
            eventually(lambda: started_by(proc, started), "the model call", timeout=RUN_TIMEOUT)
        go.write_text("")  # the reader is gone: the tool's events cannot be written
        _, err = proc.communicate(timeout=RUN_TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()

    assert proc.returncode == 128 + signal.SIGPIPE, err
    assert err == ""


# ---- what the model is offered -----------------------------------------------


def test_all_built_in_tools_and_agent_are_offered_by_default(cli: Cli) -> None:
    result = ok(cli.prompt("offered_tools", "-p", "which?"))

    offered = result.stdout.strip().removeprefix("tools: ").split(",")
    assert sorted(offered) == sorted(
        ["read", "write", "edit", "bash", "grep", "find", "ls", "agent"]
    )


def test_no_tools_offers_nothing(cli: Cli) -> None:
    result = ok(cli.prompt("offered_tools", "--no-tools", "-p", "which?"))

    assert result.stdout.strip() == "tools:"


def test_tools_flag_offers_only_the_listed_tools(cli: Cli) -> None:
    result = ok(cli.prompt("offered_tools", "--tools", "read,ls", "-p", "which?"))

    assert sorted(result.stdout.strip().removeprefix("tools: ").split(",")) == ["ls", "read"]


def test_plus_program_adds_the_program_tool_to_the_defaults(cli: Cli) -> None:
    default = ok(cli.prompt("offered_tools", "-p", "which?")).stdout.strip()
    added = ok(cli.prompt("offered_tools", "--tools", "+program", "-p", "which?")).stdout.strip()

    assert "program" not in default.removeprefix("tools: ").split(",")
    assert added == f"{default},program"


def test_program_only_offers_program_alone_and_a_program_reaches_the_other_tools(
    cli: Cli,
) -> None:
    (cli.cwd / "a.txt").write_text("a")
    offered = ok(cli.prompt("offered_tools", "--program-only", "-p", "which?"))
    result = ok(cli.prompt("run_program", "--program-only", "-p", "list the files"))

    assert offered.stdout.strip() == "tools: program"
    assert result.stdout.startswith("Script completed\nWall time ")
    assert result.stdout.strip().endswith('Output:\n["a.txt"]')


def test_an_unknown_tool_name_is_a_usage_error_listing_the_known_ones(cli: Cli) -> None:
    result = failed(cli.prompt("offered_tools", "--tools", "read,reed", "-p", "which?"))

    assert result.returncode == 2
    assert "reed" in result.stderr and "grep" in result.stderr
    assert cli.session_ids() == []


def test_system_prompt_replaces_the_default_one(cli: Cli) -> None:
    default = ok(cli.prompt("system_prompt", "-p", "x")).stdout
    custom = ok(cli.prompt("system_prompt", "--system-prompt", "You are TEST-BOT.", "-p", "x"))

    assert custom.stdout.startswith("You are TEST-BOT.")
    assert "You are TEST-BOT." not in default
    assert default.split("\n")[0] not in custom.stdout


def test_append_system_prompt_adds_to_the_default_one(cli: Cli) -> None:
    default = ok(cli.prompt("system_prompt", "-p", "x")).stdout
    appended = ok(cli.prompt("system_prompt", "--append-system-prompt", "EXTRA-RULE", "-p", "x"))

    assert "EXTRA-RULE" in appended.stdout
    assert "EXTRA-RULE" not in default
    assert appended.stdout.split("\n")[0] == default.split("\n")[0]


def test_system_prompt_and_append_system_prompt_combine(cli: Cli) -> None:
    result = ok(
        cli.prompt(
            "system_prompt",
            "--system-prompt",
            "You are TEST-BOT.",
            "--append-system-prompt",
            "EXTRA-RULE",
            "-p",
            "x",
        )
    )

    assert result.stdout.startswith("You are TEST-BOT.")
    assert "EXTRA-RULE" in result.stdout


# ---- failures ---------------------------------------------------------------


def test_an_unknown_provider_fails_with_the_reason_on_stderr(cli: Cli) -> None:
    result = failed(cli.run("--model", "nosuch/model-1", "-p", "hi"))

    assert 'Unknown provider "nosuch"' in result.stderr
    assert "openai" in result.stderr and "anthropic" in result.stderr
    assert result.stdout == ""


def test_openai_without_a_key_fails_naming_openai_api_key(cli: Cli) -> None:
    result = failed(cli.run("--model", "openai/gpt-5", "-p", "hi"))

    assert "OPENAI_API_KEY" in result.stderr


def test_a_model_that_fails_makes_a_non_zero_exit_with_its_error_on_stderr(cli: Cli) -> None:
    result = failed(cli.prompt("fail", "-p", "hi"))

    assert "boom" in result.stderr
    assert "boom" not in result.stdout


def test_a_failed_run_in_json_mode_exits_non_zero_and_reports_it(cli: Cli) -> None:
    result = cli.prompt("fail", "--mode", "json", "-p", "hi")

    assert result.returncode != 0
    [end] = [line for line in json_lines(result.stdout) if line["type"] == "run_end"]
    assert end["status"] == "failed"
    assert "boom" in str(end["answer"])


def test_a_missing_prompt_is_a_usage_error(cli: Cli) -> None:
    result = failed(cli.prompt("hello", "-p"))

    assert result.returncode == 2
    assert "no prompt" in result.stderr


def test_a_route_that_cannot_be_imported_is_a_clear_error(cli: Cli) -> None:
    result = failed(cli.run("--model", "faux/no_such_module_here:route", "-p", "hi"))

    assert "no_such_module_here" in result.stderr


def test_a_failing_model_choice_records_no_session(cli: Cli) -> None:
    failed(cli.run("--model", "nosuch/model-1", "-p", "hi"))

    assert cli.session_ids() == []


@pytest.mark.parametrize(
    ("content", "named"),
    [
        pytest.param(b'{"defaultThinkingLevel": "low",,}', "invalid JSON", id="invalid-json"),
        pytest.param(b'{"bogusSetting": 1}\n', "bogusSetting", id="unknown-key"),
        pytest.param(
            b'{"retry": {"maxRetries": "many"}, "pi-agents": {"maxConcurrent": 0}}',
            "retry.maxRetries",
            id="bad-value",
        ),
        pytest.param(b"[1, 2, 3]", "expected a JSON object", id="not-an-object"),
    ],
)
def test_a_broken_settings_file_warns_and_the_run_still_works(
    cli: Cli, content: bytes, named: str
) -> None:
    cli.home.mkdir()
    settings = cli.home / "settings.json"
    settings.write_bytes(content)

    result = ok(cli.prompt("hello", "-p", "hi"))

    assert result.stdout.strip() == "hello from the scripted model"
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    assert warnings, result.stderr
    assert any(str(settings) in w and named in w for w in warnings), result.stderr
    assert settings.read_bytes() == content


def test_settings_default_model_is_used_when_no_model_is_given(cli: Cli) -> None:
    cli.home.mkdir()
    (cli.home / "settings.json").write_text(json.dumps({"defaultModel": route("hello")}))

    result = ok(cli.run("-p", "hi"))

    assert result.stdout.strip() == "hello from the scripted model"
    assert result.stderr == ""


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(b"this is not a database at all\n" * 20, id="text"),
        pytest.param(b"SQLite format 3\x00" + bytes(range(256)) * 16, id="damaged-sqlite"),
    ],
)
@pytest.mark.parametrize("command", ["prompt", "sessions", "export"])
def test_a_corrupt_store_is_a_clear_error_and_is_left_untouched(
    cli: Cli, content: bytes, command: str
) -> None:
    cli.home.mkdir()
    store = cli.home / "store.db"
    store.write_bytes(content)
    argv = {
        "prompt": ["--model", route("hello"), "-p", "hi"],
        "sessions": ["sessions"],
        "export": ["export", "abc"],
    }[command]

    result = failed(cli.run(*argv))

    assert str(store) in result.stderr
    assert "untouched" in result.stderr
    assert store.read_bytes() == content
    assert sorted(p.name for p in cli.home.iterdir()) == ["store.db"]


# ---- damaged and misplaced homes ----------------------------------------------------

STORE_COMMANDS = {
    "prompt": ("--model", route("hello"), "-p", "hi"),
    "sessions": ("sessions",),
    "export": ("export", "abc"),
}


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    """A failure told in one line on stderr, with no traceback."""
    failed(result)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def damage_an_interior_page(path: Path) -> None:
    """A store whose `sessions` table spans pages, with its root (interior) page wiped."""
    import sqlite3

    from piagents.store.records import SessionRecord
    from piagents.store.sqlite import SQLiteStore

    store = SQLiteStore(path)
    for i in range(400):
        store.create_session(SessionRecord(id=f"s{i:04}", cwd="/" + "w" * 200))
    store.close()
    with sqlite3.connect(path) as db:
        (root,) = db.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'sessions'"
        ).fetchone()
    db.close()
    data = bytearray(path.read_bytes())
    data[(root - 1) * 4096 : root * 4096] = b"\xff" * 4096
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("command", ["prompt", "sessions", "export"])
def test_a_store_with_a_damaged_interior_page_is_one_clear_line(cli: Cli, command: str) -> None:
    store = cli.home / "store.db"
    cli.home.mkdir()
    damage_an_interior_page(store)

    line = one_line_error(cli.run(*STORE_COMMANDS[command]))

    assert f"{store} is damaged" in line and "malformed" in line


@pytest.mark.parametrize("command", ["prompt", "sessions", "export"])
def test_a_store_path_that_is_a_directory_is_one_clear_line(cli: Cli, command: str) -> None:
    store = cli.home / "store.db"
    store.mkdir(parents=True)

    line = one_line_error(cli.run(*STORE_COMMANDS[command]))

    assert f"{store} is a directory" in line


@pytest.mark.parametrize("command", ["prompt", "sessions", "export"])
@pytest.mark.parametrize("given_by", ["--home", "PI_AGENTS_HOME"])
def test_a_home_that_is_a_regular_file_is_one_clear_line(
    cli: Cli, tmp_path: Path, command: str, given_by: str
) -> None:
    home = tmp_path / "a-file"
    home.write_text("not a directory")
    if given_by == "--home":
        result = Cli(home, cli.cwd, cli.env).run(*STORE_COMMANDS[command])
    else:
        result = subprocess.run(
            [*pi_agents_command(), *STORE_COMMANDS[command]],
            cwd=cli.cwd,
            env={**cli.env, "PI_AGENTS_HOME": str(home)},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
        )

    line = one_line_error(result)

    assert f"{home} is not a directory" in line
    assert home.read_text() == "not a directory"


def test_a_home_that_cannot_be_created_is_one_clear_line(
    cli: Cli, tmp_path: Path, make_read_only: Any
) -> None:
    parent = tmp_path / "locked"
    parent.mkdir()
    make_read_only(parent)
    home = parent / "home"

    line = one_line_error(Cli(home, cli.cwd, cli.env).run(*STORE_COMMANDS["prompt"]))

    assert f"cannot create {home}" in line
    assert ok(Cli(home, cli.cwd, cli.env).run("sessions")).stdout.strip() == "No sessions."


def test_a_read_only_home_is_listed_and_exported_and_a_prompt_names_the_home(
    cli: Cli, make_read_only: Any
) -> None:
    session_id = json_lines(ok(cli.prompt("hello", "--mode", "json", "-p", "hi")).stdout)[0]["id"]
    make_read_only(cli.home)

    assert cli.session_ids() == [session_id]
    exported = ok(cli.run("export", session_id))
    assert json_lines(exported.stdout)[0]["id"] == session_id
    line = one_line_error(cli.prompt("hello", "-p", "again"))
    assert f"cannot write in {cli.home}" in line
    assert "store.db is" not in line


@pytest.mark.parametrize("command", ["prompt", "sessions", "export"])
def test_a_store_of_a_newer_schema_is_refused_before_anything_is_written(
    cli: Cli, command: str
) -> None:
    import sqlite3

    ok(cli.prompt("hello", "-p", "hi"))
    store = cli.home / "store.db"
    with sqlite3.connect(store) as db:
        db.execute("DROP TABLE search_docs")  # what a newer schema might have done
        db.execute("PRAGMA user_version = 99")
    db.close()
    before = store.read_bytes()
    files = sorted(p.name for p in cli.home.iterdir())

    line = one_line_error(cli.run(*STORE_COMMANDS[command]))

    assert f"{store} was written by a newer pi-agents" in line
    assert store.read_bytes() == before
    assert sorted(p.name for p in cli.home.iterdir()) == files


def test_a_full_disk_fails_a_prompt_in_one_line_and_work_resumes_once_space_is_freed(
    cli: Cli, tmp_path: Path
) -> None:
    """On a real full disk: a tmpfs of 600 KiB, mounted in a mount namespace of its own."""
    import shlex

    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare to mount a small tmpfs")
    disk = tmp_path / "disk"
    disk.mkdir()
    pi = " ".join(shlex.quote(a) for a in pi_agents_command())
    hello = shlex.quote(route("hello"))
    script = f"""
        mount -t tmpfs -o size=600k tmpfs {disk} || exit 77
        run() {{ {pi} --home {disk}/home "$@"; echo "rc=$?"; }}
        run --model {hello} -p first
        dd if=/dev/zero of={disk}/filler bs=4k 2>/dev/null
        echo "-- full"
        run --model {hello} -p second
        run sessions
        rm {disk}/filler
        echo "-- freed"
        run --model {hello} -p third
    """
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", script],
        cwd=cli.cwd,
        env=cli.env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT * 4,
    )
    if done.returncode == 77:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")

    before, full, freed = done.stdout.split("-- ")
    assert before.split() == ["hello", "from", "the", "scripted", "model", "rc=0"]
    prompt_rc, *listing, sessions_rc = full.splitlines()[1:]
    assert (prompt_rc, sessions_rc) == ("rc=1", "rc=0")
    assert len(listing) == 2 and route("hello") in listing[1]  # read-only: still listed
    assert freed.splitlines()[1:] == ["hello from the scripted model", "rc=0"]
    [error] = done.stderr.strip().splitlines()
    assert f"{disk}/home/store.db: the store cannot be written, the disk is full" in error


# ---- the session lease -------------------------------------------------------


def started_by(proc: subprocess.Popen[str], marker: Path) -> bool:
    """Whether the process's model call has written its marker (it must not have exited)."""
    assert proc.poll() is None, proc.communicate()
    return marker.exists()


@pytest.fixture
def holder(cli: Cli, tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """A `pi-agents` process in the middle of a slow turn, and its session id."""
    started = tmp_path / "started"
    proc = cli.start(
        "--model",
        route("slow"),
        "--mode",
        "json",
        "-p",
        "take your time",
        env={"SCRIPTED_SLEEP": "60", "SCRIPTED_STARTED": str(started)},
    )
    try:
        eventually(lambda: started_by(proc, started), "the slow route", timeout=RUN_TIMEOUT)
        assert proc.stdout is not None
        session_line = json.loads(proc.stdout.readline())
        assert session_line["type"] == "session"
        yield proc, session_line["id"]
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=RUN_TIMEOUT)


def test_a_session_held_by_a_running_process_cannot_be_opened_by_another(
    cli: Cli, holder: tuple[subprocess.Popen[str], str]
) -> None:
    proc, session_id = holder

    result = failed(cli.prompt("hello", "--session", session_id, "-p", "me too"))

    assert f"pid {proc.pid}" in result.stderr
    assert socket.gethostname() in result.stderr
    assert session_id in result.stderr


def test_a_session_whose_holder_died_can_be_opened_again(
    cli: Cli, holder: tuple[subprocess.Popen[str], str]
) -> None:
    proc, session_id = holder
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=RUN_TIMEOUT)

    result = ok(cli.prompt("history", "--session", session_id, "-p", "after the crash"))

    users = [text for role, text in json.loads(result.stdout) if role == "user"]
    assert users == ["take your time", "after the crash"]


def test_a_supervision_lead_prints_its_answer_once_its_delegations_report(cli: Cli) -> None:
    cli.home.mkdir(parents=True, exist_ok=True)
    (cli.home / "settings.json").write_text(json.dumps({"pi-agents": {"spawnPlacement": "inline"}}))
    out = ok(cli.prompt("supervise", "--agent-api", "supervision", "-p", "map both sides"))
    assert out.stdout.strip() == ("Both done: left did: map the left | right did: map the right")


def test_print_mode_exits_after_printing_when_an_owned_agents_turn_is_abandoned(
    cli: Cli,
) -> None:
    cli.home.mkdir(parents=True, exist_ok=True)
    (cli.home / "settings.json").write_text(json.dumps({"pi-agents": {"abortTimeoutMs": 100}}))
    out = ok(cli.prompt("abandons_a_stuck_worker", "-p", "go"))
    assert out.stdout == "root done\n"
    assert "did not stop within 0.1 s" in out.stderr
    assert "Traceback" not in out.stderr and "error occurred" not in out.stderr


def test_a_model_repeating_the_same_call_is_stopped_with_a_clear_message(cli: Cli) -> None:
    result = failed(cli.prompt("lists_forever", "-p", "look around"))
    assert result.stderr.strip() == (
        "pi-agents: Stopped: the model called ls 5 times in a row with the same arguments "
        "and got the same result each time. Send a message to go on from here."
    )
