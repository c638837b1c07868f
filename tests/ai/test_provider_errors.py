"""One classifier of retryable failures for every API, and the delay a server asks for."""

from __future__ import annotations

import pytest
import real_servers

from piagents.ai.errors import body_error, is_transient, retry_after, status_error, stream_error


@pytest.mark.parametrize(
    "body",
    [
        real_servers.litellm_error(
            "litellm.InternalServerError: boom", "internal_server_error", 500
        ),
        real_servers.litellm_error("litellm.RateLimitError: slow down", "throttling_error", 429),
        real_servers.llama_error(503, "Loading model", "unavailable_error"),
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        {"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}},
    ],
    ids=["litellm-500", "litellm-429", "llama-server-503", "anthropic-overloaded", "openai-429"],
)
def test_transient_errors_are_retryable_however_they_arrive(body: dict[str, object]) -> None:
    assert body_error("p", body, "fallback").retryable
    assert status_error("p", 200, body, "fallback").retryable  # inside a 200 stream


@pytest.mark.parametrize(
    "body",
    [
        real_servers.litellm_error("litellm.BadRequestError: bad", "invalid_request_error", 400),
        real_servers.llama_error(400, "Cannot determine type of 'item'", "invalid_request_error"),
        {"error": {"message": "Incorrect API key", "type": "invalid_request_error"}},
    ],
)
def test_errors_of_the_request_itself_are_not_retryable(body: dict[str, object]) -> None:
    assert not body_error("p", body, "fallback").retryable


def test_a_status_carried_as_a_string_code_counts_as_that_status() -> None:
    error = body_error("p", real_servers.litellm_error("boom", "None", 502), "fallback")

    assert str(error) == "p returned HTTP 502: boom"
    assert error.retryable


def test_a_mid_stream_error_event_is_classified_by_its_code_too() -> None:
    assert stream_error("p", "None", "boom", "500").retryable
    assert stream_error("p", "server_error", "boom").retryable
    assert not stream_error("p", "invalid_prompt", "no").retryable


def test_statuses_worth_retrying() -> None:
    assert [s for s in (400, 401, 404, 408, 413, 429, 500, 503) if is_transient(s)] == [
        408,
        429,
        500,
        503,
    ]


def test_retry_after_reads_seconds_milliseconds_and_http_dates() -> None:
    assert retry_after({"retry-after": "5"}) == 5.0
    assert retry_after({"retry-after": "0.5"}) == 0.5
    assert retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    date = "Wed, 21 Oct 2015 07:28:05 GMT"
    assert retry_after({"retry-after": date}, now=lambda: 1445412480.0) == 5.0


@pytest.mark.parametrize("value", ["soon", "-3", "nan", "inf", ""])
def test_a_retry_after_that_names_no_delay_is_ignored(value: str) -> None:
    assert retry_after({"retry-after": value}) is None
    assert retry_after({"retry-after-ms": value}) is None


def test_an_answer_without_headers_asks_for_no_delay() -> None:
    assert retry_after(None) is None
    assert retry_after({}) is None
