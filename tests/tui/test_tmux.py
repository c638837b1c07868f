"""The real command in a real terminal: tmux runs `pi-agents`, we type and read the screen."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import piagents
from support import eventually

HERE = Path(__file__).parent
TMUX = shutil.which("tmux")
pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")


class Terminal:
    """A tmux server of our own (its own socket) with one 100x30 window."""

    def __init__(self) -> None:
        self.socket = f"pi-agents-test-{uuid.uuid4().hex[:8]}"

    def tmux(self, *args: str) -> str:
        assert TMUX is not None
        done = subprocess.run(
            [TMUX, "-L", self.socket, *args], capture_output=True, text=True, timeout=30
        )
        return done.stdout

    def start(self, command: str, cwd: Path, env: dict[str, str]) -> None:
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        shell = f"env {exports} {command}; echo EXITED $?; sleep 60"
        self.tmux("new-session", "-d", "-x", "100", "-y", "30", "-c", str(cwd), shell)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", *keys)

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-l", text)

    def wait_for(self, predicate: Callable[[str], bool], what: str, timeout: float = 60) -> str:
        screen = ""

        def shown() -> bool:
            nonlocal screen
            screen = self.screen()
            return predicate(screen)

        try:
            eventually(shown, what, timeout=timeout)
        except AssertionError as failed:
            raise AssertionError(f"{failed}; the screen:\n{screen}") from None
        return screen

    def close(self) -> None:
        self.tmux("kill-server")


@pytest.fixture
def terminal() -> Iterator[Terminal]:
    term = Terminal()
    try:
        yield term
    finally:
        term.close()


def start_pi_agents(terminal: Terminal, home: Path, work: Path, *options: str) -> None:
    """`pi-agents --model faux/tmux_model:route` in `work`, running the code under test."""
    shutil.copy(HERE / "tmux_model.py", work / "tmux_model.py")
    pi_agents = shutil.which("pi-agents") or f"{sys.executable} -m piagents.cli"
    source = Path(piagents.__file__).resolve().parent.parent
    env = {"PYTHONPATH": f"{source}:{work}", "TERM": "xterm-256color", "PYTHONUNBUFFERED": "1"}
    env.update({k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL")})
    command = f"{pi_agents} --home {shlex.quote(str(home))} --model faux/tmux_model:route"
    command += "".join(f" {shlex.quote(o)}" for o in options)
    terminal.start(command, work, env)
    terminal.wait_for(lambda s: "Ask anything" in s, "the editor")


def test_pi_agents_answers_a_prompt_and_shows_the_task_panel_in_a_real_terminal(
    terminal, home, work
):
    start_pi_agents(terminal, home, work)
    terminal.type("hello from tmux")
    terminal.keys("Enter")
    screen = terminal.wait_for(
        lambda s: "ANSWER-OK" in s and "Tasks (1 live, /tasks to view)" in s, "the answer and panel"
    )
    assert "hello from tmux" in screen
    assert "  Agent worker (" in screen and ")  running" in screen
    assert "faux/tmux_model:route" in screen

    (work / "release").touch()
    terminal.wait_for(lambda s: "Tasks (" not in s and "Noted." in s, "the tree to go idle")
    terminal.type("/quit")
    terminal.keys("Enter")
    terminal.wait_for(lambda s: "EXITED 0" in s, "pi-agents to exit")


def test_alt_enter_queues_a_follow_up_and_escape_brings_queued_text_back_in_a_real_terminal(
    terminal, home, work
):
    start_pi_agents(terminal, home, work)
    terminal.type("hold")
    terminal.keys("Enter")
    terminal.wait_for(lambda s: "● running" in s, "the turn")
    terminal.type("steer one")
    terminal.keys("Enter")
    terminal.wait_for(lambda s: "Steer: steer one" in s, "the steer")
    terminal.type("follow two")
    terminal.keys("M-Enter")
    terminal.wait_for(lambda s: "Follow-up: follow two" in s, "the followUp")

    terminal.keys("Escape")
    screen = terminal.wait_for(lambda s: "(aborted)" in s, "the abort")
    assert "│ steer one" in screen and "│ follow two" in screen


def test_a_background_program_and_its_agent_show_in_the_task_panel_in_a_real_terminal(
    terminal, home, work
):
    start_pi_agents(terminal, home, work, "--tools", "+program")
    terminal.type("program")
    terminal.keys("Enter")
    screen = terminal.wait_for(
        lambda s: "PROGRAM-OK" in s and "  Agent helper" in s, "the Program and its Agent"
    )
    program_row = next(
        line for line in screen.splitlines() if "Program " in line and "running" in line
    )
    assert program_row.strip().startswith("Program ") and program_row.rstrip().endswith("running")
    rows = screen.splitlines()
    assert rows.index(program_row) < next(i for i, r in enumerate(rows) if "Agent helper" in r)

    (work / "release").touch()
    terminal.wait_for(
        lambda s: "Noted the Program." in s and "Tasks (" not in s, "the Program to end"
    )
    terminal.type("/quit")
    terminal.keys("Enter")
    terminal.wait_for(lambda s: "EXITED 0" in s, "pi-agents to exit")
