"""Model references (`provider/modelId[:thinking]`), thinking levels and model facts."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Literal, TypeAlias

ThinkingLevel: TypeAlias = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]
THINKING_LEVELS: tuple[ThinkingLevel, ...] = (
    "off",
    "minimal",
    "low",
    "medium",
    "high",
    "xhigh",
    "max",
)


def parse_thinking_level(value: str) -> ThinkingLevel:
    if value not in THINKING_LEVELS:
        raise ValueError(
            f"unknown thinking level {value!r}; expected one of {', '.join(THINKING_LEVELS)}"
        )
    return value


@dataclass(frozen=True, slots=True)
class ModelRef:
    """A model addressed as `provider/modelId`, with an optional thinking level."""

    provider: str
    model_id: str
    thinking: ThinkingLevel | None = None

    @classmethod
    def parse(cls, text: str) -> ModelRef:
        """Parse `provider/modelId[:thinking]`.

        A `:suffix` is read as a thinking level only when it names one, so model
        ids that contain colons (`ollama/qwen3:8b`) keep them. The answer is immutable
        and remembered for the short texts seen last: a spawn parses its model twice.
        """
        return _remembered(text) if len(text) <= _REMEMBERED_LENGTH else _parse(text)

    def __str__(self) -> str:
        return f"{self.provider}/{self.model_id}"


def _parse(text: str) -> ModelRef:
    """`ModelRef.parse`: raises ValueError (which is not remembered) for a bad text."""
    text = text.strip()
    provider, sep, rest = text.partition("/")
    if not sep or not provider or not rest or any(c.isspace() for c in text):
        raise ValueError(f"model {text!r} must be given as provider/modelId")
    thinking: ThinkingLevel | None = None
    head, colon, tail = rest.rpartition(":")
    if colon and tail in THINKING_LEVELS:
        rest, thinking = head, tail
    if not rest or rest.endswith((":", "/")):
        raise ValueError(f"model {text!r} must be given as provider/modelId[:thinking]")
    return ModelRef(provider, rest, thinking)


_REMEMBERED_LENGTH = 200  # a model's name; a longer text (a model's mistake) is not kept
_remembered = functools.lru_cache(maxsize=256)(_parse)


@dataclass(frozen=True, slots=True)
class ModelInfo:
    context_window: int = 128_000
    max_output: int = 16_384
    input_cost: float = 0.0  # dollars per million tokens
    output_cost: float = 0.0
    cache_read_cost: float = 0.0
    cache_write_cost: float = 0.0
    reasoning: bool | None = None  # whether it has thinking levels; None: not known


# A few well-known models; anything else gets conservative defaults.
_KNOWN: dict[str, ModelInfo] = {
    "gpt-4o": ModelInfo(128_000, 16_384, 2.5, 10.0, 1.25, 0.0, False),
    "gpt-4o-mini": ModelInfo(128_000, 16_384, 0.15, 0.6, 0.075, 0.0, False),
    "gpt-4.1": ModelInfo(1_047_576, 32_768, 2.0, 8.0, 0.5, 0.0, False),
    "gpt-5": ModelInfo(400_000, 128_000, 1.25, 10.0, 0.125, 0.0, True),
    "gpt-5-mini": ModelInfo(400_000, 128_000, 0.25, 2.0, 0.025, 0.0, True),
    "o3": ModelInfo(200_000, 100_000, 2.0, 8.0, 0.5, 0.0, True),
    "o4-mini": ModelInfo(200_000, 100_000, 1.1, 4.4, 0.275, 0.0, True),
    "claude-sonnet-4-5": ModelInfo(200_000, 64_000, 3.0, 15.0, 0.3, 3.75, True),
    "claude-sonnet-4-0": ModelInfo(200_000, 64_000, 3.0, 15.0, 0.3, 3.75, True),
    "claude-opus-4-1": ModelInfo(200_000, 32_000, 15.0, 75.0, 1.5, 18.75, True),
    "claude-haiku-4-5": ModelInfo(200_000, 64_000, 1.0, 5.0, 0.1, 1.25, True),
}


# Models known by provider and id: the embedded model (its window is the one
# `piagents.ai.local` loads it with, CONTEXT_WINDOW and DEFAULT_MAX_OUTPUT there).
_KNOWN_REFS: dict[tuple[str, str], ModelInfo] = {
    ("local", "smollm2"): ModelInfo(8192, 384, reasoning=False),
}


# Longest first, so gpt-4o-mini is never read as gpt-4o.
_PREFIXES = tuple(
    (name + "-", info) for name, info in sorted(_KNOWN.items(), key=lambda k: -len(k[0]))
)


@functools.lru_cache(maxsize=256)  # a pure function of a constant table; asked every turn
def model_info(ref: ModelRef) -> ModelInfo:
    """Facts of a known model: an exact id, else the longest known name that is
    followed by `-` (dated or suffixed ids); ids routed through another vendor's
    prefix (`openai/gpt-5` on a gateway) are matched by their last part too."""
    known = _KNOWN_REFS.get((ref.provider, ref.model_id))
    if known is not None:
        return known
    for model_id in dict.fromkeys((ref.model_id, ref.model_id.rsplit("/", 1)[-1])):
        info = _KNOWN.get(model_id)
        if info is not None:
            return info
        for prefix, info in _PREFIXES:
            if model_id.startswith(prefix):
                return info
    return ModelInfo()


def has_thinking_levels(ref: ModelRef) -> bool:
    """False for a model known to have none (the embedded model, gpt-4o, …), where a
    thinking level does nothing; True for the others (an unknown one may think)."""
    return model_info(ref).reasoning is not False


def cost_parts(
    info: ModelInfo, inp: int, out: int, cache_read: int, cache_write: int
) -> tuple[float, float, float, float]:
    """Dollars for input, output, cache reads and cache writes."""
    return (
        inp * info.input_cost / 1_000_000,
        out * info.output_cost / 1_000_000,
        cache_read * info.cache_read_cost / 1_000_000,
        cache_write * info.cache_write_cost / 1_000_000,
    )


def cost_of(info: ModelInfo, inp: int, out: int, cache_read: int, cache_write: int) -> float:
    return sum(cost_parts(info, inp, out, cache_read, cache_write))


# ---- thinking level mapping per provider ------------------------------------

ANTHROPIC_BUDGETS: dict[ThinkingLevel, int] = {
    "minimal": 1024,
    "low": 4096,
    "medium": 10_240,
    "high": 20_480,
    "xhigh": 32_000,
    "max": 63_999,
}

OPENAI_EFFORTS: dict[ThinkingLevel, str] = {
    "minimal": "minimal",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "high",
    "max": "high",
}


def loadable_elsewhere(model: str) -> bool:
    """Whether another process (a managed agent's worker, a `pi-agents worker`) can load
    `model` by name: the SDK's in-process `FunctionModel` (`faux/function`) exists only
    in the process that made it; `faux/<module>:<function>` is imported anywhere."""
    provider, _, model_id = model.partition("/")
    return provider != "faux" or ":" in model_id
