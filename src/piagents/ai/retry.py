"""Retries with exponential backoff around a provider stream.

A request that keeps failing ends as an assistant message with stop reason
`error`; it never raises, except for cancellation, which aborts the turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from piagents.ai.events import StreamEnd, StreamEvent, StreamRetry
from piagents.ai.messages import AssistantMessage
from piagents.ai.provider import ModelRequest, Provider, ProviderError


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_retries: int = 3
    base_delay_s: float = 2.0
    max_delay_s: float = 60.0

    def delay(self, attempt: int, requested_s: float | None = None) -> float:
        """The wait before retry `attempt` (1 for the first): the delay the server asked for
        (`retry-after`) when it named one, else exponential backoff; never above the cap."""
        if requested_s is not None:
            return float(min(self.max_delay_s, requested_s))
        return float(min(self.max_delay_s, self.base_delay_s * (2 ** (attempt - 1))))


def _too_long(policy: RetryPolicy, exc: ProviderError) -> str | None:
    """Why a retry the server asked to delay beyond the cap is not attempted."""
    asked = exc.retry_after_s
    if asked is None or asked <= policy.max_delay_s:
        return None
    return (
        f"{exc} (the server asked to retry after {asked:g} s, more than the "
        f"{policy.max_delay_s:g} s that retry.maxDelayMs allows; raise it to wait that long)"
    )


def error_message(request: ModelRequest, text: str, api: str = "") -> AssistantMessage:
    return AssistantMessage(
        (),
        "error",
        provider=request.model.provider,
        model=request.model.model_id,
        error_message=text,
        api=api,
    )


async def close_stream(events: AsyncIterator[StreamEvent]) -> None:
    """Close `events` (when it can be: an async generator) once its StreamEnd is read,
    rather than leave it to the collector: a provider's stream ends its HTTP response
    at once, and no finalizer is scheduled on the event loop (one a model call)."""
    close = getattr(events, "aclose", None)
    if close is not None:
        await close()


async def stream_with_retry(
    provider: Provider,
    request: ModelRequest,
    policy: RetryPolicy,
    *,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> AsyncIterator[StreamEvent]:
    """`sleep` waits between attempts (tests give one that does not really wait)."""
    attempt = 0
    api = provider.api
    while True:
        try:
            events = provider.stream(request)
            async for event in events:
                if isinstance(event, StreamEnd):
                    await close_stream(events)
                    yield event
                    return
                yield event
            yield StreamEnd(
                error_message(request, "the provider ended the stream without a response", api)
            )
            return
        except ProviderError as exc:
            attempt += 1
            if not exc.retryable or attempt > policy.max_retries:
                yield StreamEnd(error_message(request, str(exc), api))
                return
            too_long = _too_long(policy, exc)
            if too_long is not None:
                yield StreamEnd(error_message(request, too_long, api))
                return
            delay = policy.delay(attempt, exc.retry_after_s)
            yield StreamRetry(attempt, delay, str(exc))
            await sleep(delay)
        except (asyncio.CancelledError, GeneratorExit):
            raise
        except Exception as exc:  # a provider bug must not crash the turn
            yield StreamEnd(error_message(request, f"{type(exc).__name__}: {exc}", api))
            return
