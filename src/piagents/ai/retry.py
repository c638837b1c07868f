"""Retries with exponential backoff around a provider stream.

A request that keeps failing ends as an assistant message with stop reason
`error`; it never raises, except for cancellation, which aborts the turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

from piagents.ai.events import StreamEnd, StreamEvent, StreamRetry
from piagents.ai.messages import AssistantMessage
from piagents.ai.provider import ModelRequest, Provider, ProviderError


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_retries: int = 3
    base_delay_s: float = 2.0
    max_delay_s: float = 60.0

    def delay(self, attempt: int) -> float:
        return float(min(self.max_delay_s, self.base_delay_s * (2 ** (attempt - 1))))


def error_message(request: ModelRequest, text: str) -> AssistantMessage:
    return AssistantMessage(
        (),
        "error",
        provider=request.model.provider,
        model=request.model.model_id,
        error_message=text,
    )


async def stream_with_retry(
    provider: Provider, request: ModelRequest, policy: RetryPolicy
) -> AsyncIterator[StreamEvent]:
    attempt = 0
    while True:
        try:
            async for event in provider.stream(request):
                yield event
                if isinstance(event, StreamEnd):
                    return
            yield StreamEnd(
                error_message(request, "the provider ended the stream without a response")
            )
            return
        except ProviderError as exc:
            attempt += 1
            if not exc.retryable or attempt > policy.max_retries:
                yield StreamEnd(error_message(request, str(exc)))
                return
            delay = policy.delay(attempt)
            yield StreamRetry(attempt, delay, str(exc))
            await asyncio.sleep(delay)
        except (asyncio.CancelledError, GeneratorExit):
            raise
        except Exception as exc:  # a provider bug must not crash the turn
            yield StreamEnd(error_message(request, f"{type(exc).__name__}: {exc}"))
            return
