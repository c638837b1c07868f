"""Asking a declared server what its models' limits are, where its API says.

- `GET {base}/models` (OpenAI form): llama-server's `meta.n_ctx` (newer builds) or
  `meta.n_ctx_train`, vLLM's `max_model_len`, `context_length` (OpenRouter, LM Studio);
- `GET {root}/props` (llama-server): the context each slot really has,
  `default_generation_settings.n_ctx` (smaller than `n_ctx_train` when started with `-c`);
- `GET {base}/model/info` (the LiteLLM proxy): `max_input_tokens`, `max_output_tokens`.

Each probe has a short timeout and any failure just means "not known": discovery runs
once per model, at its first request, and never stops a request from being made.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

PROBE_TIMEOUT_S = 2.0  # per request
DISCOVERY_BUDGET_S = 4.0  # for all probes of one model


@dataclass(frozen=True, slots=True)
class ServerLimits:
    context_window: int | None = None
    max_tokens: int | None = None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _entries(body: Any, model_id: str, key: str) -> Mapping[str, Any] | None:
    """The entry of a model list for `model_id` (the only one when the server serves one)."""
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        return None
    entries = [e for e in data if isinstance(e, dict)]
    for entry in entries:
        if entry.get(key) == model_id:
            return entry
    return entries[0] if len(entries) == 1 else None


def from_models(body: Any, model_id: str) -> tuple[ServerLimits, bool]:
    """Limits from a `/models` answer, and whether it came from llama-server (whose
    `/props` says the real context size)."""
    entry = _entries(body, model_id, "id")
    if entry is None:
        return ServerLimits(), False
    meta = entry.get("meta") if isinstance(entry.get("meta"), dict) else {}
    assert isinstance(meta, dict)
    llama = entry.get("owned_by") == "llamacpp" or "n_ctx_train" in meta
    window = (
        _count(meta.get("n_ctx"))
        or _count(entry.get("max_model_len"))
        or _count(entry.get("context_length"))
        or _count(entry.get("context_window"))
        or _count(meta.get("n_ctx_train"))
    )
    top = entry.get("top_provider")
    max_tokens = _count(entry.get("max_output_tokens")) or (
        _count(top.get("max_completion_tokens")) if isinstance(top, dict) else None
    )
    return ServerLimits(window, max_tokens), llama and _count(meta.get("n_ctx")) is None


def from_props(body: Any) -> int | None:
    settings = body.get("default_generation_settings") if isinstance(body, dict) else None
    return _count(settings.get("n_ctx")) if isinstance(settings, dict) else None


def from_model_info(body: Any, model_id: str) -> ServerLimits:
    entry = _entries(body, model_id, "model_name")
    info = entry.get("model_info") if entry is not None else None
    if not isinstance(info, dict):
        return ServerLimits()
    return ServerLimits(
        _count(info.get("max_input_tokens")),
        _count(info.get("max_output_tokens")) or _count(info.get("max_tokens")),
    )


async def _get(client: Any, url: str) -> Any:
    """The decoded JSON of `GET url`, or None for any failure."""
    try:
        response = await client.get(url)
        if response.status_code != 200:
            return None
        return response.json()
    except Exception:
        return None


async def discover(base_url: str, model_id: str, headers: Mapping[str, str]) -> ServerLimits:
    """What the server at `base_url` (its OpenAI-style `/v1` base) says of `model_id`."""
    import httpx2

    base = base_url.rstrip("/")
    root = base[: -len("/v1")] if base.endswith("/v1") else base
    api_base = base if base.endswith("/v1") else base + "/v1"
    timeout = httpx2.Timeout(PROBE_TIMEOUT_S)
    try:
        async with (
            asyncio.timeout(DISCOVERY_BUDGET_S),
            httpx2.AsyncClient(headers=dict(headers), timeout=timeout) as client,
        ):
            limits, llama = from_models(await _get(client, api_base + "/models"), model_id)
            if llama:
                n_ctx = from_props(await _get(client, root + "/props"))
                if n_ctx is not None:
                    return ServerLimits(n_ctx, limits.max_tokens)
            if limits.context_window is not None:
                return limits
            return from_model_info(await _get(client, api_base + "/model/info"), model_id)
    except TimeoutError:
        return ServerLimits()
