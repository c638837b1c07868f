from __future__ import annotations

from pathlib import Path

import pytest

from piagents.harness.tools.base import ToolContext


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


@pytest.fixture
def ctx(tmp_path: Path, workdir: Path) -> ToolContext:
    return ToolContext(cwd=workdir, output_dir=tmp_path / "outputs", call_id="call_1")
