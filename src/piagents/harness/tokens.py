"""Token estimates of messages and contexts (chars / 4, like Pi's)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec

from piagents.ai.messages import (
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
)

CHARS_PER_TOKEN = 4
_json = msgspec.json.encode
IMAGE_CHARS = 4800  # an image counts as about 1200 tokens


def estimate_tokens(message: Message) -> int:
    """A conservative estimate (chars / 4) of the tokens `message` takes in a context."""
    chars = 0
    for c in message.content:
        if isinstance(c, TextContent):
            chars += len(c.text)
        elif isinstance(c, ThinkingContent):
            chars += len(c.thinking)
        elif isinstance(c, ImageContent):
            chars += IMAGE_CHARS
        else:
            chars += len(c.name) + len(_json(c.args))
    return math.ceil(chars / CHARS_PER_TOKEN)


def context_tokens(messages: Sequence[Message]) -> int:
    """Tokens of a context: the last reported usage plus estimates of what came after it."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if isinstance(m, AssistantMessage) and m.usage.total_tokens > 0:
            return m.usage.total_tokens + sum(estimate_tokens(x) for x in messages[i + 1 :])
    return sum(estimate_tokens(m) for m in messages)
