"""The README's two commands near the top are what CI and a fresh machine run."""

from __future__ import annotations

import re
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
