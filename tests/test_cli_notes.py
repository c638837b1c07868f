"""What the command line says on stderr before a one-shot run."""

from __future__ import annotations

import pytest

from piagents.ai.models import ModelRef
from piagents.cli_notes import level_in, startup_notes

LOCAL = ModelRef.parse("local/smollm2")


def test_a_level_for_a_model_without_levels_is_one_line() -> None:
    assert startup_notes(LOCAL, "high", "agents") == [
        "local/smollm2 has no thinking levels; --thinking high has no effect."
    ]


@pytest.mark.parametrize(
    ("model", "level"),
    [("local/smollm2", None), ("local/smollm2", "off"), ("anthropic/claude-sonnet-4-5", "high")],
)
def test_nothing_is_said_when_the_level_can_apply_or_none_was_asked(model, level) -> None:
    assert startup_notes(ModelRef.parse(model), level, "agents") == []


def test_a_supervision_lead_on_the_embedded_model_is_told_it_cannot_lead() -> None:
    [note] = startup_notes(LOCAL, None, "supervision")
    assert note.startswith("note: the embedded local/smollm2 (135M parameters) cannot lead")
    assert startup_notes(ModelRef.parse("openai/gpt-5"), None, "supervision") == []


def test_the_level_of_a_model_reference_is_read_from_it() -> None:
    assert level_in("anthropic/claude-sonnet-4-5:high") == "high"
    assert level_in("anthropic/claude-sonnet-4-5") is None
    assert level_in(None) is None
