"""Models: conversation messages, model references, the providers that stream
answers (OpenAI, Anthropic, the embedded local model, the faux model) and retries.

Its public names, each imported on first use from the module that defines it:

- `Message`, `UserMessage`, `AssistantMessage`, `ToolResultMessage` (`messages`):
  the typed, immutable conversation.
- `ModelRef`, `ThinkingLevel` (`models`): `provider/modelId[:thinking]` and its levels.
- `Provider`, `ModelRequest`, `ToolSpec`, `ProviderError` (`provider`): the one
  interface every provider implements; a stream yields `StreamEvent`s (`events`).
- `ProviderRegistry` (`registry`): which provider serves a model reference.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from piagents.ai.events import StreamEvent
    from piagents.ai.messages import AssistantMessage, Message, ToolResultMessage, UserMessage
    from piagents.ai.models import ModelRef, ThinkingLevel
    from piagents.ai.provider import ModelRequest, Provider, ProviderError, ToolSpec
    from piagents.ai.registry import ProviderRegistry

__all__ = [
    "AssistantMessage",
    "Message",
    "ModelRef",
    "ModelRequest",
    "Provider",
    "ProviderError",
    "ProviderRegistry",
    "StreamEvent",
    "ThinkingLevel",
    "ToolResultMessage",
    "ToolSpec",
    "UserMessage",
]

_DEFINED_IN = {
    "StreamEvent": "events",
    "AssistantMessage": "messages",
    "Message": "messages",
    "ToolResultMessage": "messages",
    "UserMessage": "messages",
    "ModelRef": "models",
    "ThinkingLevel": "models",
    "ModelRequest": "provider",
    "Provider": "provider",
    "ProviderError": "provider",
    "ToolSpec": "provider",
    "ProviderRegistry": "registry",
}


def __getattr__(name: str) -> Any:
    # Imported on first use, so importing one module of the package imports no other.
    if name not in _DEFINED_IN:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_DEFINED_IN[name]}"), name)
