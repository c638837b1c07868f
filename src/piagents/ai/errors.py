"""Provider failures as `ProviderError`s: one classifier of what is worth retrying, for
every API, whether the failure came as an HTTP status, an error body or an error event
inside a stream; and the delay a server asks for before a retry."""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Callable, Mapping
from typing import Any

from piagents.ai.provider import ProviderError

# Error types and codes that APIs and proxies report for transient trouble: OpenAI,
# Anthropic, llama-server (`unavailable_error`) and LiteLLM (`internal_server_error`,
# `throttling_error`, ...).
TRANSIENT_KINDS = frozenset(
    {
        "api_error",
        "overloaded_error",
        "rate_limit_error",
        "timeout_error",
        "server_error",
        "server_is_overloaded",
        "rate_limit_exceeded",
        "slow_down",
        "internal_server_error",
        "throttling_error",
        "service_unavailable",
        "service_unavailable_error",
        "unavailable_error",
        "too_many_requests",
        "timeout",
        "api_connection_error",
    }
)


def is_retryable_status(status: int) -> bool:
    return status in (408, 429) or status >= 500


def status_of(code: object) -> int | None:
    """An HTTP status carried as an error code (`500`, or LiteLLM's `"500"`)."""
    if isinstance(code, bool):
        return None
    if isinstance(code, int):
        return code if 100 <= code <= 599 else None
    if isinstance(code, str) and code.isdigit() and len(code) == 3:
        return int(code)
    return None


def is_transient(status: int | None, *kinds: object) -> bool:
    """The one classifier: an HTTP status, or any error type or code naming transient trouble
    (a code that is itself a status counts as that status)."""
    if status is not None and is_retryable_status(status):
        return True
    for kind in kinds:
        code = status_of(kind)
        if code is not None and is_retryable_status(code):
            return True
        if isinstance(kind, str) and kind.lower() in TRANSIENT_KINDS:
            return True
    return False


def status_error(
    provider: str,
    status: int,
    body: object,
    fallback: str,
    *,
    retry_after_s: float | None = None,
) -> ProviderError:
    """An HTTP error answer (`body` is its decoded JSON, or its text)."""
    detail = error_detail(body)
    text = _message(detail, fallback)
    if status < 400:  # an error event inside a 200 stream
        return stream_error(provider, _kind(detail), text, detail.get("code"))
    return ProviderError(
        f"{provider} returned HTTP {status}: {text}",
        retryable=is_transient(status, detail.get("type"), detail.get("code")),
        status=status,
        retry_after_s=retry_after_s,
    )


def stream_error(
    provider: str, kind: str | None, message: str, code: object = None
) -> ProviderError:
    """An error the server reported inside an otherwise successful stream."""
    label = f" ({kind})" if kind else ""
    return ProviderError(
        f"{provider} reported an error mid-stream{label}: {message}",
        retryable=is_transient(None, kind, code),
    )


def body_error(provider: str, body: object, fallback: str) -> ProviderError:
    """An error object in place of a stream chunk."""
    detail = error_detail(body)
    status = status_of(detail.get("code"))
    if status is not None and status >= 400:  # a proxy passing on an upstream HTTP status
        return status_error(provider, status, body, fallback)
    return stream_error(provider, _kind(detail), _message(detail, fallback), detail.get("code"))


def connection_error(provider: str, exc: BaseException, url: str | None = None) -> ProviderError:
    """A failed connection or a stream that broke off; always worth retrying."""
    cause = exc.__cause__ or exc
    detail = str(cause) or type(cause).__name__
    where = f" on {url}" if url else ""
    return ProviderError(f"{provider}: connection error{where}: {detail}", retryable=True)


def incomplete_stream(provider: str, received: str | None = None) -> ProviderError:
    what = f" (received: {received})" if received else ""
    return ProviderError(
        f"{provider}: the stream ended before the response was complete{what}", retryable=True
    )


def error_detail(body: object) -> dict[str, Any]:
    """The error object of a body: `{"error": {...}}`, the object itself, or a text body's
    message (a JSON text, or an SSE stream such as llama-server sends with a 500)."""
    if isinstance(body, str):
        decoded = _decode_text(body)
        if decoded is None:
            return {"message": body.strip()[:500]}
        body = decoded
    if not isinstance(body, dict):
        return {}
    inner = body.get("error")
    if isinstance(inner, dict):
        return inner
    if isinstance(inner, str) and inner:
        return {**body, "message": body.get("message") or inner}
    return body


def _decode_text(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, dict):
        return value
    for line in text.splitlines():
        field, sep, data = line.partition(":")
        if not sep or field.strip() not in ("data", "error"):
            continue
        try:
            value = json.loads(data.strip())
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _message(detail: Mapping[str, Any], fallback: str) -> str:
    message = detail.get("message")
    return message if isinstance(message, str) and message else fallback


def _kind(detail: Mapping[str, Any]) -> str | None:
    for key in ("type", "code"):
        value = detail.get(key)
        if isinstance(value, str) and value and value != "error":
            return value
    return None


# ---- the delay a server asks for -----------------------------------------------------------


def retry_after(
    headers: Mapping[str, str] | None, now: Callable[[], float] = time.time
) -> float | None:
    """Seconds to wait before retrying, from `retry-after-ms` or `retry-after` (seconds or an
    HTTP date); None when the answer names no valid delay."""
    if not headers:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms is not None:
        seconds = _seconds(raw_ms)
        if seconds is not None:
            return seconds / 1000
    raw = headers.get("retry-after")
    if raw is None:
        return None
    seconds = _seconds(raw)
    if seconds is not None:
        return seconds
    try:
        moment = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - now())


def _seconds(raw: str) -> float | None:
    try:
        value = float(raw.strip())
    except ValueError:
        return None
    return value if value >= 0 and value == value and value != float("inf") else None


# ---- the SDKs' exceptions --------------------------------------------------------------------


def _request_url(exc: BaseException) -> str | None:
    try:
        request = getattr(exc, "request", None)
    except RuntimeError:  # httpx raises when the exception was made without a request
        return None
    url = getattr(request, "url", None)
    method = getattr(request, "method", None)
    if url is None:
        return None
    return f"{method} {url}" if method else str(url)


def _headers(exc: Any) -> Mapping[str, str] | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    return headers if isinstance(headers, Mapping) else None


def openai_error(provider: str, exc: Exception) -> ProviderError | None:
    """Map an OpenAI SDK or transport failure to a `ProviderError` (None if it is neither)."""
    import openai

    return _sdk_error(provider, exc, openai)


def anthropic_error(provider: str, exc: Exception) -> ProviderError | None:
    """Map an Anthropic SDK or transport failure to a `ProviderError` (None if it is neither)."""
    import anthropic

    return _sdk_error(provider, exc, anthropic)


def _sdk_error(provider: str, exc: Exception, sdk: Any) -> ProviderError | None:
    """Both official SDKs name their failures alike: a status, a connection, an error
    object inside the stream."""
    import httpx2

    if isinstance(exc, sdk.APIStatusError):
        return status_error(
            provider,
            exc.status_code,
            exc.body,
            exc.message,
            retry_after_s=retry_after(_headers(exc)),
        )
    if isinstance(exc, sdk.APIConnectionError | httpx2.TransportError):
        return connection_error(provider, exc, _request_url(exc))
    if isinstance(exc, sdk.APIError):
        return body_error(provider, exc.body, exc.message)
    return None
