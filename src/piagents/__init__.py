"""pi-agents: a runtime in which LLM coding agents discover, message, wait for,
supervise and abort each other."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from piagents.agent import Agent, RunFailed, ToolCallResult
    from piagents.heap import settle_long_lived
    from piagents.runtime import Runtime

__all__ = ["Agent", "RunFailed", "Runtime", "ToolCallResult", "__version__", "settle_long_lived"]


def __getattr__(name: str) -> Any:
    # Imported on first use, so `pi-agents --version` stays fast.
    if name == "Runtime":
        from piagents.runtime import Runtime

        return Runtime
    if name == "settle_long_lived":
        from piagents.heap import settle_long_lived

        return settle_long_lived
    if name in ("Agent", "RunFailed", "ToolCallResult"):
        from piagents import agent

        return getattr(agent, name)
    raise AttributeError(f"module 'piagents' has no attribute {name!r}")
