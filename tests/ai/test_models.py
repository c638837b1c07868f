"""Model references, thinking levels and model facts."""

from __future__ import annotations

import pytest

from piagents.ai.models import (
    THINKING_LEVELS,
    ModelInfo,
    ModelRef,
    cost_of,
    has_thinking_levels,
    loadable_elsewhere,
    model_info,
    parse_thinking_level,
)

# ---- ModelRef.parse -------------------------------------------------------------


def test_provider_and_model_id_are_split_at_the_first_slash() -> None:
    assert ModelRef.parse("anthropic/claude-sonnet-4-5") == ModelRef(
        "anthropic", "claude-sonnet-4-5", None
    )


def test_a_suffix_naming_a_thinking_level_becomes_the_thinking_level() -> None:
    assert ModelRef.parse("anthropic/claude-sonnet-4-5:high") == ModelRef(
        "anthropic", "claude-sonnet-4-5", "high"
    )


@pytest.mark.parametrize("level", THINKING_LEVELS)
def test_every_thinking_level_can_be_given_as_a_suffix(level: str) -> None:
    assert ModelRef.parse(f"openai/gpt-5:{level}").thinking == level


def test_a_colon_that_is_not_a_thinking_level_stays_in_the_model_id() -> None:
    assert ModelRef.parse("ollama/qwen3:8b") == ModelRef("ollama", "qwen3:8b", None)


def test_a_model_id_with_colons_can_still_take_a_thinking_level() -> None:
    assert ModelRef.parse("ollama/qwen3:8b:low") == ModelRef("ollama", "qwen3:8b", "low")


def test_a_faux_route_keeps_its_module_and_function() -> None:
    assert ModelRef.parse("faux/scripted_model:hello") == ModelRef(
        "faux", "scripted_model:hello", None
    )


def test_a_model_id_may_contain_slashes() -> None:
    ref = ModelRef.parse("openrouter/anthropic/claude-sonnet-4-5:medium")

    assert ref == ModelRef("openrouter", "anthropic/claude-sonnet-4-5", "medium")


def test_thinking_level_suffixes_are_case_sensitive() -> None:
    assert ModelRef.parse("openai/gpt-5:HIGH") == ModelRef("openai", "gpt-5:HIGH", None)


def test_surrounding_whitespace_is_ignored() -> None:
    assert ModelRef.parse("  openai/gpt-5\n") == ModelRef("openai", "gpt-5", None)


def test_str_gives_provider_and_model_id_without_the_thinking_level() -> None:
    assert str(ModelRef.parse("ollama/qwen3:8b:high")) == "ollama/qwen3:8b"
    assert ModelRef.parse(str(ModelRef("openrouter", "a/b:c"))) == ModelRef("openrouter", "a/b:c")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "gpt-5",
        "/gpt-5",
        "openai/",
        "openai/:high",
        "openai/gpt-5:",
        "openai/gpt-5::high",
        "openai/gpt-5/",
        "open ai/gpt-5",
        "openai/gpt 5",
    ],
)
def test_malformed_references_raise_value_error_quoting_the_input(text: str) -> None:
    with pytest.raises(ValueError, match="provider/modelId") as info:
        ModelRef.parse(text)

    assert repr(text.strip()) in str(info.value)


def test_model_refs_are_immutable_and_hashable() -> None:
    ref = ModelRef.parse("openai/gpt-5:low")

    with pytest.raises(AttributeError):
        ref.provider = "anthropic"  # type: ignore[misc]
    assert {ref, ModelRef("openai", "gpt-5", "low")} == {ref}


def test_a_reference_parsed_again_is_the_same_answer_and_a_bad_one_fails_every_time() -> None:
    assert ModelRef.parse("openai/gpt-5:low") is ModelRef.parse("openai/gpt-5:low")
    for _ in range(2):
        with pytest.raises(ValueError, match="provider/modelId"):
            ModelRef.parse("no-slash")


def test_a_long_reference_is_parsed_as_any_other() -> None:
    text = "gateway/" + "m" * 5_000 + ":high"

    ref = ModelRef.parse(text)

    assert (ref.provider, len(ref.model_id), ref.thinking) == ("gateway", 5_000, "high")


# ---- thinking levels --------------------------------------------------------------


def test_thinking_levels_are_ordered_from_off_to_max() -> None:
    assert THINKING_LEVELS == ("off", "minimal", "low", "medium", "high", "xhigh", "max")


@pytest.mark.parametrize("level", THINKING_LEVELS)
def test_each_known_thinking_level_parses_to_itself(level: str) -> None:
    assert parse_thinking_level(level) == level


@pytest.mark.parametrize("text", ["", "HIGH", "hi", "extreme", " low"])
def test_unknown_thinking_levels_raise_value_error_listing_the_levels(text: str) -> None:
    with pytest.raises(ValueError, match="off, minimal, low, medium, high, xhigh, max"):
        parse_thinking_level(text)


# ---- model facts ------------------------------------------------------------------


def test_a_known_model_has_its_own_facts() -> None:
    info = model_info(ModelRef("anthropic", "claude-sonnet-4-5"))

    assert info.context_window == 200_000
    assert info.input_cost == 3.0 and info.output_cost == 15.0
    assert info.reasoning


def test_a_dated_model_id_gets_the_facts_of_its_family() -> None:
    assert model_info(ModelRef("anthropic", "claude-sonnet-4-5-20250929")) == model_info(
        ModelRef("anthropic", "claude-sonnet-4-5")
    )


@pytest.mark.parametrize(
    ("model_id", "family"),
    [
        ("gpt-4o-mini", "gpt-4o-mini"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("gpt-5-mini", "gpt-5-mini"),
        ("gpt-5-mini-2025-08-07", "gpt-5-mini"),
        ("gpt-5-2025-08-07", "gpt-5"),
    ],
)
def test_a_model_is_never_mistaken_for_a_shorter_known_name(model_id: str, family: str) -> None:
    assert model_info(ModelRef("openai", model_id)) == model_info(ModelRef("openai", family))


def test_gpt_4o_mini_is_priced_as_the_mini_model() -> None:
    mini = model_info(ModelRef("openai", "gpt-4o-mini"))

    assert (mini.input_cost, mini.output_cost) == (0.15, 0.6)


def test_a_model_behind_a_gateway_prefix_is_recognised() -> None:
    assert model_info(ModelRef("openrouter", "openai/gpt-5")) == model_info(
        ModelRef("openai", "gpt-5")
    )


@pytest.mark.parametrize("model_id", ["qwen3:8b", "my-local-model", "gpt-5x", "o3mini", ""])
def test_an_unknown_model_gets_conservative_defaults(model_id: str) -> None:
    info = model_info(ModelRef("ollama", model_id))

    assert info == ModelInfo()
    assert info.context_window == 128_000 and info.max_output == 16_384
    assert info.input_cost == 0.0 and not info.reasoning


def test_the_embedded_model_has_the_window_it_is_loaded_with() -> None:
    from piagents.ai import local

    info = model_info(ModelRef.parse(local.MODEL))

    assert info.context_window == local.CONTEXT_WINDOW == 8192
    assert info.max_output == local.DEFAULT_MAX_OUTPUT
    assert info.reasoning is False


@pytest.mark.parametrize(
    ("model", "levels"),
    [
        ("local/smollm2", False),
        ("openai/gpt-4o", False),
        ("anthropic/claude-sonnet-4-5", True),
        ("ollama/qwen3:8b", True),  # not known: the server may think
    ],
)
def test_a_model_has_thinking_levels_unless_it_is_known_to_have_none(
    model: str, levels: bool
) -> None:
    assert has_thinking_levels(ModelRef.parse(model)) is levels


def test_the_provider_does_not_change_a_models_facts() -> None:
    assert model_info(ModelRef("myserver", "gpt-5")) == model_info(ModelRef("openai", "gpt-5"))


# ---- cost ---------------------------------------------------------------------------


def test_cost_is_priced_per_million_tokens_of_each_kind() -> None:
    info = ModelInfo(input_cost=2.0, output_cost=8.0, cache_read_cost=0.5, cache_write_cost=4.0)

    assert cost_of(info, 1_000_000, 0, 0, 0) == pytest.approx(2.0)
    assert cost_of(info, 0, 1_000_000, 0, 0) == pytest.approx(8.0)
    assert cost_of(info, 0, 0, 1_000_000, 0) == pytest.approx(0.5)
    assert cost_of(info, 0, 0, 0, 1_000_000) == pytest.approx(4.0)
    assert cost_of(info, 1000, 500, 2000, 100) == pytest.approx(
        (1000 * 2 + 500 * 8 + 2000 * 0.5 + 100 * 4) / 1_000_000
    )


def test_an_unpriced_model_costs_nothing() -> None:
    assert cost_of(ModelInfo(), 10**9, 10**9, 10**9, 10**9) == 0.0


def test_a_known_model_is_priced_from_its_facts() -> None:
    info = model_info(ModelRef("anthropic", "claude-opus-4-1"))

    assert cost_of(info, 1_000_000, 1_000_000, 0, 0) == pytest.approx(90.0)


def test_another_process_can_load_a_model_by_name_but_not_the_sdks_function_model() -> None:
    assert loadable_elsewhere("faux/routes:answer")
    assert loadable_elsewhere("anthropic/claude-sonnet-4-5")
    assert not loadable_elsewhere("faux/function")
