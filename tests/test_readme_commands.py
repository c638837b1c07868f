"""The README's two commands near the top are what CI and a fresh machine run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def bash_blocks(text: str) -> list[str]:
    return [b.strip() for b in re.findall(r"```bash\n(.*?)```", text, re.S)]


def test_ci_runs_exactly_the_readmes_test_command() -> None:
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text().splitlines()

    test_command = bash_blocks(readme)[1]

    assert test_command.endswith("python -m pytest -q")
    assert test_command in ci


def test_both_commands_build_llama_cpp_portably_with_the_local_extra() -> None:
    main_job, tests = bash_blocks((ROOT / "README.md").read_text())[:2]

    for command in (main_job, tests):
        assert command.startswith('CMAKE_ARGS="-DGGML_NATIVE=OFF ')
        assert "-DGGML_AVX512=OFF" in command
    assert "pip install -e '.[local]' && pi-agents -p " in main_job
    assert "pip install -e '.[dev,local]'" in tests


# ---- the rest of the README: what it shows must run, what it names must exist ----------


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, re.S)


def test_the_readmes_python_examples_run_as_they_are_and_print_what_they_say(
    tmp_path: Path,
) -> None:
    blocks = python_blocks((ROOT / "README.md").read_text())
    assert blocks, "the README shows the SDK"
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")}
    env["PI_AGENTS_HOME"] = str(tmp_path / "not-the-home")

    for block in blocks:
        result = subprocess.run(
            [sys.executable, "-c", block],
            cwd=tmp_path,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )

        assert result.returncode == 0, result.stderr
        # `print(...)  # text` promises that text, in that order.
        promised = re.findall(r"^\s*print\(.*\)\s+#\s*(.+)$", block, re.M)
        printed = result.stdout.splitlines()
        assert len(printed) == len(promised), result.stdout
        for line, text in zip(printed, promised, strict=True):
            assert line.startswith(text.strip()), (line, text)


def pi_agents_options() -> set[str]:
    """Every option of `pi-agents` and of its commands, as their --help lists them."""
    options: set[str] = set()
    for argv in ([], ["sessions"], ["workers"], ["worker"], ["export"], ["trust"], ["serve"]):
        result = subprocess.run(
            [sys.executable, "-m", "piagents.cli", *argv, "--help"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, result.stderr
        options.update(re.findall(r"(?<![\w-])--[a-z][a-z-]*", result.stdout))
    return options


def test_every_option_the_readme_names_exists() -> None:
    readme = (ROOT / "README.md").read_text()
    spans = re.findall(r"`((?:pi-agents|--)[^`]*)`", readme)
    commands = [line for b in bash_blocks(readme) for line in b.splitlines()]
    named = {
        opt
        for text in (*spans, *(c for c in commands if c.startswith("pi-agents")))
        for opt in re.findall(r"(?<![\w-])--[a-z][a-z-]*", text)
    }

    assert {"--tools", "--no-tools", "--continue"} <= named
    assert named - pi_agents_options() == set()


def test_the_readme_names_the_project_files_every_system_prompt_reads() -> None:
    from piagents.harness.system_prompt import CONTEXT_FILE_NAMES

    readme = (ROOT / "README.md").read_text()

    for name in CONTEXT_FILE_NAMES:
        assert f"`{name}`" in readme


def test_the_readme_says_tools_run_without_approval_and_describes_serve() -> None:
    readme = (ROOT / "README.md").read_text()

    assert "no approval prompts" in readme
    assert "`pi-agents serve --session ID`" in readme
