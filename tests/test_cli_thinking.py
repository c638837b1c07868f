"""`--thinking` on a model that has no thinking levels: one line on stderr."""

from __future__ import annotations

import pytest

from piagents import cli
from piagents.ai.models import ModelRef


def test_a_level_for_a_model_without_levels_is_one_line_on_stderr(capsys) -> None:
    cli.say_if_no_thinking_levels(ModelRef.parse("local/smollm2"), "high")

    assert capsys.readouterr().err == (
        "pi-agents: local/smollm2 has no thinking levels; --thinking high has no effect.\n"
    )


@pytest.mark.parametrize(
    ("model", "level"),
    [("local/smollm2", None), ("local/smollm2", "off"), ("anthropic/claude-sonnet-4-5", "high")],
)
def test_nothing_is_said_when_the_level_can_apply_or_none_was_asked(capsys, model, level) -> None:
    cli.say_if_no_thinking_levels(ModelRef.parse(model), level)

    assert capsys.readouterr().err == ""
