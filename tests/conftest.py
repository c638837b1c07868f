import os

import pytest


@pytest.fixture(autouse=True)
def _no_real_keys(monkeypatch):
    """Tests never reach a real provider."""
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PI_AGENTS_HOME", os.path.join(os.sep, "nonexistent-pi-agents-home"))


@pytest.fixture
def home(tmp_path):
    h = tmp_path / "home"
    h.mkdir()
    return h


@pytest.fixture
def work(tmp_path):
    w = tmp_path / "work"
    w.mkdir()
    return w
