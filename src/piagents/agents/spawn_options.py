"""The options of a new owned Agent (`spawn`'s, and a Program's `agent()`), checked
once for both: its working directory, model and thinking level and its context."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from piagents.agents import texts
from piagents.agents.errors import AgentCallError
from piagents.ai.models import ModelRef, ThinkingLevel, parse_thinking_level
from piagents.ai.registry import ProviderRegistry

if TYPE_CHECKING:
    from piagents.agent import Agent


@dataclass(frozen=True, slots=True)
class SpawnOptions:
    """What a new owned Agent is made with."""

    cwd: str
    model: str
    thinking: ThinkingLevel
    fork: bool


def spawn_options(
    caller: Agent,
    *,
    cwd: str | None,
    model: str | None,
    thinking: str | None,
    context: str | None,
    providers: ProviderRegistry,
    default_model: Callable[[], str | None],
) -> SpawnOptions:
    """The options as given, each defaulting to the caller's; raises AgentCallError
    with the text the caller reads for one it may not use."""
    me = caller.session.record
    if "\0" in str(cwd or ""):
        raise AgentCallError(texts.invalid(f"cwd {cwd!r} {texts.NUL_IN_PATH}."))
    if cwd:
        where = Path(cwd).expanduser()
        if not where.is_absolute():
            where = Path(me.cwd) / where
        chosen_cwd = str(where.resolve())
    else:
        chosen_cwd = _path_text(me.cwd)  # the caller's own, as its tools use it
    if not os.path.isdir(chosen_cwd):
        raise AgentCallError(texts.invalid(f"cwd {chosen_cwd!r} is not a directory."))
    chosen = model or str(caller.loop.model)
    try:
        ref = ModelRef.parse(chosen)
        if model:  # chosen by the model: never an arbitrary faux route
            providers.check_model_choice(ref, (str(caller.loop.model), default_model()))
        providers.resolve(ref)
    except Exception as exc:
        raise AgentCallError(texts.invalid(f"model {chosen!r}: {exc}")) from exc
    level = thinking or ref.thinking or caller.loop.thinking
    try:
        parsed = parse_thinking_level(level)
    except ValueError as exc:
        raise AgentCallError(texts.invalid(f"thinkingLevel {level!r}: {exc}")) from exc
    if context not in (None, "fresh", "fork"):
        raise AgentCallError(texts.invalid(f"context {context!r}: use fresh or fork."))
    return SpawnOptions(chosen_cwd, str(ref), parsed, context == "fork")


@functools.lru_cache(maxsize=64)
def _path_text(text: str) -> str:
    """`text` as a Path writes it (a spawn asks for its caller's cwd each time)."""
    return str(Path(text))
