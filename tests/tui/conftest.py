"""Fixtures of the UI tests; the helpers live in tui_support.py."""

from __future__ import annotations

import random
import uuid

import pytest
from tui_support import Script

from support import Gate


@pytest.fixture
def script() -> Script:
    return Script()


@pytest.fixture
def gate() -> Gate:
    return Gate()


@pytest.fixture
def seeded_ids(monkeypatch):
    """Session ids from a seeded generator, so short IDs (and snapshots) are stable."""
    rng = random.Random(4)

    def new_id() -> str:
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))

    monkeypatch.setattr("piagents.harness.session.new_id", new_id)
    return new_id
