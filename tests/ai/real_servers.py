"""How servers nobody here wrote behave on the wire, for the loopback server to speak.

Each function reproduces one behaviour of a real server as its source has it: llama.cpp's
`llama-server` (tools/server: `convert_responses_to_chatcmpl`, `format_error_response`,
`/v1/models`, `/props`) and the LiteLLM proxy (`async_data_generator`, `ProxyException`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from loopback import Failure, Raw, Scripted

# ---- llama-server ---------------------------------------------------------------------


def llama_error(code: int, message: str, kind: str) -> dict[str, Any]:
    """llama-server's error body (`format_error_response`)."""
    return {"error": {"code": code, "message": message, "type": kind}}


def _typed(item: dict[str, Any], kind: str) -> bool:
    return isinstance(item.get("type"), str) and item["type"] == kind


def _llama_item_error(item: Any) -> str | None:
    """Why llama-server's `convert_responses_to_chatcmpl` refuses one input item, if it does."""
    if not isinstance(item, dict):
        return "Cannot determine type of 'item'"
    content = item.get("content")
    if isinstance(content, str):  # only an input message may carry a string; it becomes input_text
        content = [{"type": "input_text", "text": content}]
    role = item.get("role")
    if isinstance(content, list) and role in ("user", "system", "developer"):
        for part in content:
            if part.get("type") not in ("input_text", "input_image", "input_file"):
                return "'type' must be one of 'input_text', 'input_image', or 'input_file'"
        return None
    if isinstance(content, list) and role == "assistant" and _typed(item, "message"):
        for part in content:
            if part.get("type") != "output_text":
                return "'type' must be 'output_text'"
        return None
    if _typed(item, "function_call") and all(
        isinstance(item.get(k), str) for k in ("arguments", "call_id", "name")
    ):
        return None
    if (
        _typed(item, "function_call_output")
        and isinstance(item.get("call_id"), str)
        and isinstance(item.get("output"), str | list)
    ):
        if isinstance(item["output"], list) and any(
            part.get("type") != "input_text" for part in item["output"]
        ):
            return "Output of tool call should be 'Input text'"
        return None
    if _typed(item, "reasoning") and isinstance(item.get("summary"), list):
        parts = item.get("content")
        if not isinstance(parts, list) or not parts or not isinstance(parts[0].get("text"), str):
            return "item['content'] is not an array"
        return None
    return "Cannot determine type of 'item'"


def llama_server_responses(body: Any) -> Failure | None:
    """llama-server's check of a `/v1/responses` body: HTTP 400 for the first item it cannot
    read, as `convert_responses_to_chatcmpl` throws and the handler answers."""
    items = body.get("input") if isinstance(body, dict) else None
    if not isinstance(items, list):
        return None
    for item in items:
        problem = _llama_item_error(item)
        if problem is not None:
            return Failure(400, llama_error(400, problem, "invalid_request_error"))
    return None


def llama_models(model_id: str, *, n_ctx_train: int, n_ctx: int | None = None) -> dict[str, Any]:
    """llama-server's `GET /v1/models` (the `meta` of newer builds also carries `n_ctx`)."""
    meta: dict[str, Any] = {
        "vocab_type": 2,
        "n_vocab": 151936,
        "n_ctx_train": n_ctx_train,
        "n_embd": 1024,
        "n_params": 596049920,
        "size": 484220928,
    }
    if n_ctx is not None:
        meta["n_ctx"] = n_ctx
    entry = {"id": model_id, "object": "model", "created": 1764547200, "owned_by": "llamacpp"}
    return {"object": "list", "data": [{**entry, "meta": meta}]}


def llama_props(n_ctx: int) -> dict[str, Any]:
    """The part of llama-server's `GET /props` that says the context each slot has."""
    return {
        "default_generation_settings": {"n_ctx": n_ctx, "params": {"n_predict": -1}},
        "total_slots": 1,
        "model_path": "/models/qwen3-0.6b-q8_0.gguf",
    }


# ---- LiteLLM proxy ----------------------------------------------------------------------


def litellm_error(message: str, kind: str, code: int) -> dict[str, Any]:
    """LiteLLM's `{"error": ProxyException.to_dict()}`: the status travels as a string code."""
    return {"error": {"message": message, "type": kind, "param": None, "code": str(code)}}


def litellm_stream_error(message: str, kind: str, code: int) -> str:
    """The frame LiteLLM's `async_data_generator` sends when the upstream fails mid-stream."""
    return f"data: {json.dumps(litellm_error(message, kind, code))}\n\n"


LITELLM_500 = litellm_stream_error(
    "litellm.InternalServerError: InternalServerError: OpenAIException - Connection error.",
    "internal_server_error",
    500,
)
LITELLM_429 = litellm_stream_error(
    "litellm.RateLimitError: RateLimitError: OpenAIException - Rate limit reached",
    "throttling_error",
    429,
)


def litellm_model_info(model_name: str, *, max_input: int, max_output: int) -> dict[str, Any]:
    """LiteLLM's `GET /v1/model/info` for one deployment."""
    return {
        "data": [
            {
                "model_name": model_name,
                "litellm_params": {"model": f"openai/{model_name}"},
                "model_info": {
                    "id": "5f7f3e0c",
                    "max_tokens": max_output,
                    "max_input_tokens": max_input,
                    "max_output_tokens": max_output,
                    "mode": "chat",
                },
            }
        ]
    }


def litellm_responses_error(message: str, code: int, sequence_number: int = 3) -> str:
    """The `error` event LiteLLM ends a Responses stream with (`serialize_responses_error_event`):
    the status again as a string code."""
    body = {
        "type": "error",
        "code": str(code),
        "message": message,
        "param": None,
        "sequence_number": sequence_number,
    }
    return f"event: error\ndata: {json.dumps(body, separators=(',', ':'))}\n\n"


# ---- llama-cpp-python's server ------------------------------------------------------------


def llama_cpp_python_chat(
    tool_answer: dict[str, Any], plain_answer: Scripted
) -> Callable[[Any], Scripted | None]:
    """llama-cpp-python's `chatml-function-calling` handler: with no `tool_choice` the tools
    are left out of the prompt (`# Case 1: No tool choice by user`), so the model answers in
    prose (`plain_answer`); with `"auto"` it answers a whole completion with the call
    (`tool_answer`), which it cannot stream. What it does with a streaming request for tools
    is not modelled: the check refuses it, so a test sending one fails."""

    def check(body: Any) -> Scripted | None:
        if not isinstance(body, dict) or not body.get("tools"):
            return None
        if body.get("tool_choice") in (None, "none"):
            return plain_answer
        if body.get("stream"):
            return Failure(
                500, {"error": {"message": "loopback: streamed tool calls not modelled"}}
            )
        return Raw(200, "application/json", json.dumps(tool_answer))

    return check
