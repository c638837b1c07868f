"""What settings.json may say about a declared provider's models: their limits and how the
server must be spoken to.

The keys follow Pi's models.json: `contextWindow` and `maxTokens` per model (under
`models`, as Pi's list of `{"id": ...}` objects or as an object keyed by id) and per
provider as the default for its models; and a `compat` block, per provider or per model:

    "providers": {"myserver": {"api": "openai-completions", "baseUrl": "...",
                               "contextWindow": 8192,
                               "compat": {"toolChoice": "auto", "streamTools": false},
                               "models": {"qwen3": {"contextWindow": 32768, "maxTokens": 4096}}}}

- `toolChoice` (`"auto"` or `"required"`): sent with every request that offers tools, for
  servers that ignore tools without it (llama-cpp-python's server).
- `streamTools` (default true): false makes a request that offers tools without streaming,
  for servers that cannot stream tool calls; the reply becomes the same events.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, cast

from piagents.ai.discovery import ServerLimits
from piagents.ai.models import ModelInfo

ToolChoice = Literal["auto", "required"]
TOOL_CHOICES: tuple[ToolChoice, ...] = ("auto", "required")
LIMIT_KEYS = {"contextWindow", "maxTokens", "compat"}
PROVIDER_KEYS = LIMIT_KEYS | {"models"}
COMPAT_KEYS = {"toolChoice", "streamTools"}
MIN_CONTEXT_WINDOW = 512  # below this no system prompt and answer fit


@dataclass(frozen=True, slots=True)
class Compat:
    """How a server must be spoken to; None means not said here."""

    tool_choice: ToolChoice | None = None
    stream_tools: bool | None = None

    def over(self, base: Compat) -> Compat:
        return Compat(
            self.tool_choice if self.tool_choice is not None else base.tool_choice,
            self.stream_tools if self.stream_tools is not None else base.stream_tools,
        )


@dataclass(frozen=True, slots=True)
class ModelOptions:
    """A model's limits and compat as settings give them; None means not given."""

    context_window: int | None = None
    max_tokens: int | None = None
    compat: Compat = Compat()

    def over(self, base: ModelOptions) -> ModelOptions:
        return ModelOptions(
            self.context_window if self.context_window is not None else base.context_window,
            self.max_tokens if self.max_tokens is not None else base.max_tokens,
            self.compat.over(base.compat),
        )


@dataclass(frozen=True, slots=True)
class ProviderOptions:
    """A provider's defaults for its models and each model's own options."""

    defaults: ModelOptions = ModelOptions()
    models: Mapping[str, ModelOptions] = field(default_factory=dict)
    discover: bool = False  # ask the server for its models' limits (declared servers only)

    def for_model(self, model_id: str) -> ModelOptions:
        own = self.models.get(model_id)
        return own.over(self.defaults) if own is not None else self.defaults


def effective_info(known: ModelInfo, given: ModelOptions, server: ServerLimits | None) -> ModelInfo:
    """A model's facts: limits from settings win, then what its server said, then `known`
    (the table of well-known models, else conservative defaults). The output limit stays
    below the context window: without one given, a quarter of a window that was."""
    server = server or ServerLimits()
    window = given.context_window or server.context_window or known.context_window
    max_tokens = given.max_tokens or server.max_tokens
    if max_tokens is None:
        max_tokens = known.max_output
        if window != known.context_window:
            max_tokens = min(max_tokens, window // 4)
    if max_tokens >= window:
        max_tokens = window // 4
    return replace(known, context_window=window, max_output=max_tokens)


Warn = Callable[[str, str], None]  # (key path, problem and what is done instead)


def parse_provider_options(raw: Mapping[str, Any], path: str, warn: Warn) -> ProviderOptions:
    """The limit, compat and model keys of one provider's settings (others are left alone)."""
    models: dict[str, ModelOptions] = {}
    entries = raw.get("models")
    if isinstance(entries, list):  # Pi's form: [{"id": "qwen3", ...}, ...]
        for i, entry in enumerate(entries):
            where = f"{path}.models[{i}]"
            if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
                warn(where, 'expected an object with a string "id"; ignored')
                continue
            _unknown(entry, LIMIT_KEYS | {"id"}, where, warn)
            models[entry["id"]] = _options(entry, where, warn)
    elif isinstance(entries, dict):  # keyed by model id
        for model_id, entry in entries.items():
            where = f"{path}.models.{model_id}"
            if not isinstance(entry, dict):
                warn(where, f"expected an object, got {_show(entry)}; ignored")
                continue
            _unknown(entry, LIMIT_KEYS, where, warn)
            models[model_id] = _options(entry, where, warn)
    elif entries is not None:
        warn(path + ".models", "expected a list of models or an object keyed by model id; ignored")
    return ProviderOptions(_options(raw, path, warn), models)


def _unknown(raw: Mapping[str, Any], known: set[str], path: str, warn: Warn) -> None:
    for key in raw:
        if key not in known:
            warn(f"{path}.{key}", "unknown setting; ignored")


def _options(raw: Mapping[str, Any], path: str, warn: Warn) -> ModelOptions:
    window = _count(raw, "contextWindow", path, warn, MIN_CONTEXT_WINDOW)
    max_tokens = _count(raw, "maxTokens", path, warn, 1)
    if window is not None and max_tokens is not None and max_tokens >= window:
        warn(
            path + ".maxTokens",
            f"must be less than contextWindow ({window}), got {max_tokens}; "
            "a quarter of the context window is used",
        )
        max_tokens = None
    return ModelOptions(window, max_tokens, _compat(raw.get("compat"), path + ".compat", warn))


def _count(raw: Mapping[str, Any], key: str, path: str, warn: Warn, least: int) -> int | None:
    if key not in raw or raw[key] is None:
        return None
    value = raw[key]
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= 10**9:
        warn(
            f"{path}.{key}",
            f"expected a whole number of tokens from {least}, got {_show(value)}; ignored",
        )
        return None
    return value


def _compat(raw: Any, path: str, warn: Warn) -> Compat:
    if raw is None:
        return Compat()
    if not isinstance(raw, dict):
        warn(path, f"expected an object, got {_show(raw)}; ignored")
        return Compat()
    _unknown(raw, COMPAT_KEYS, path, warn)
    choice = raw.get("toolChoice")
    if choice is not None and choice not in TOOL_CHOICES:
        warn(
            path + ".toolChoice",
            f"expected one of {', '.join(TOOL_CHOICES)}, got {_show(choice)}; ignored",
        )
        choice = None
    stream = raw.get("streamTools")
    if stream is not None and not isinstance(stream, bool):
        warn(path + ".streamTools", f"expected true or false, got {_show(stream)}; ignored")
        stream = None
    return Compat(cast(ToolChoice | None, choice), stream)


def _show(value: Any) -> str:
    try:
        text = json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        text = type(value).__name__
    return text if len(text) <= 80 else text[:77] + "..."
