"""A declared provider's model limits and compat: from settings.json, from its server, and
where they are used (requests, compaction, the footer's context window)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import real_servers
from loopback import LoopbackServer, Raw, Stream
from test_openai_completions import text_answer

from piagents.ai.discovery import ServerLimits
from piagents.ai.messages import UserMessage
from piagents.ai.model_options import Compat, ModelOptions, effective_info
from piagents.ai.models import ModelInfo, ModelRef
from piagents.ai.provider import ModelRequest, ToolSpec
from piagents.ai.registry import ProviderRegistry
from piagents.config import parse_settings


def settings(provider: dict[str, Any]) -> Any:
    return parse_settings({"providers": {"myserver": provider}}, "settings.json")


def registry(provider: dict[str, Any]) -> ProviderRegistry:
    parsed = settings(provider)
    assert parsed.warnings == ()
    return ProviderRegistry(parsed)


def request_for(ref: ModelRef, tools: tuple[ToolSpec, ...] = ()) -> ModelRequest:
    return ModelRequest(ref, "", (UserMessage.of("hi"),), tools)


QWEN = ModelRef.parse("myserver/qwen3")
SERVER = {"api": "openai-completions", "baseUrl": "http://127.0.0.1:9/v1"}


# ---- settings.json ----------------------------------------------------------------------


def test_limits_are_given_per_provider_and_per_model_as_pi_spells_them() -> None:
    parsed = settings(
        {
            **SERVER,
            "contextWindow": 8192,
            "maxTokens": 1024,
            "models": [{"id": "qwen3", "contextWindow": 32768, "maxTokens": 4096}],
        }
    )

    options = parsed.providers["myserver"].options
    assert parsed.warnings == ()
    assert options.for_model("qwen3") == ModelOptions(32768, 4096)
    assert options.for_model("other") == ModelOptions(8192, 1024)


def test_models_may_also_be_keyed_by_id_and_inherit_what_they_do_not_say() -> None:
    parsed = settings(
        {
            **SERVER,
            "contextWindow": 8192,
            "maxTokens": 1024,
            "models": {"qwen3": {"maxTokens": 2048}},
        }
    )

    assert parsed.warnings == ()
    assert parsed.providers["myserver"].options.for_model("qwen3") == ModelOptions(8192, 2048)


def test_compat_is_given_per_provider_and_a_model_may_override_it() -> None:
    parsed = settings(
        {
            **SERVER,
            "compat": {"toolChoice": "auto", "streamTools": False},
            "models": {"big": {"compat": {"streamTools": True}}},
        }
    )

    options = parsed.providers["myserver"].options
    assert parsed.warnings == ()
    assert options.for_model("small").compat == Compat("auto", False)
    assert options.for_model("big").compat == Compat("auto", True)


@pytest.mark.parametrize(
    ("provider", "key", "problem"),
    [
        ({"contextWindow": "8k"}, "providers.myserver.contextWindow", 'got "8k"'),
        ({"contextWindow": 100}, "providers.myserver.contextWindow", "from 512, got 100"),
        ({"maxTokens": -1}, "providers.myserver.maxTokens", "got -1"),
        ({"maxTokens": True}, "providers.myserver.maxTokens", "got true"),
        ({"contextWindow": 1e400}, "providers.myserver.contextWindow", "got Infinity"),
        (
            {"contextWindow": 4096, "maxTokens": 4096},
            "providers.myserver.maxTokens",
            "must be less than contextWindow (4096)",
        ),
        ({"models": {"q": {"contextWindw": 1}}}, "providers.myserver.models.q.contextWindw", ""),
        ({"models": [{"contextWindow": 8192}]}, "providers.myserver.models[0]", '"id"'),
        ({"models": "qwen3"}, "providers.myserver.models", "expected a list"),
        ({"compat": {"toolChoice": "always"}}, "providers.myserver.compat.toolChoice", "auto"),
        ({"compat": {"streamTools": "no"}}, "providers.myserver.compat.streamTools", '"no"'),
        ({"compat": {"stream": False}}, "providers.myserver.compat.stream", "unknown setting"),
    ],
)
def test_a_bad_limit_warns_naming_its_key_and_keeps_the_rest(
    provider: dict[str, Any], key: str, problem: str
) -> None:
    parsed = settings({**SERVER, **provider})

    [warning] = parsed.warnings
    assert warning.startswith(f"settings.json: {key}: ")
    assert problem in warning
    assert parsed.providers["myserver"].base_url == SERVER["baseUrl"]


# ---- which limit wins ---------------------------------------------------------------------

UNKNOWN = ModelInfo()  # 128k context, 16,384 output tokens


def test_settings_win_over_the_server_and_the_server_over_the_table() -> None:
    server = ServerLimits(16384, 2048)

    assert effective_info(UNKNOWN, ModelOptions(8192, 1024), server).context_window == 8192
    assert effective_info(UNKNOWN, ModelOptions(8192, 1024), server).max_output == 1024
    assert effective_info(UNKNOWN, ModelOptions(), server).context_window == 16384
    assert effective_info(UNKNOWN, ModelOptions(), server).max_output == 2048
    assert effective_info(UNKNOWN, ModelOptions(), None) == UNKNOWN


def test_a_small_window_without_an_output_limit_leaves_room_for_the_prompt() -> None:
    info = effective_info(UNKNOWN, ModelOptions(context_window=8192), None)

    assert (info.context_window, info.max_output) == (8192, 2048)


def test_a_declared_providers_limits_are_what_the_registry_and_the_footer_read() -> None:
    reg = registry({**SERVER, "contextWindow": 8192, "models": {"qwen3": {"contextWindow": 32768}}})

    assert reg.model_info(ModelRef.parse("myserver/qwen3")).context_window == 32768
    assert reg.model_info(ModelRef.parse("myserver/other")).context_window == 8192
    reg.resolve(ModelRef.parse("myserver/other"))  # made: the provider answers the same
    assert reg.model_info(ModelRef.parse("myserver/other")).context_window == 8192


def test_the_embedded_model_has_its_own_8k_window() -> None:
    reg = ProviderRegistry(parse_settings({}))

    assert reg.model_info(ModelRef.parse("local/smollm2")).context_window == 8192


def test_known_models_keep_their_facts() -> None:
    reg = ProviderRegistry(parse_settings({}))

    assert reg.model_info(ModelRef.parse("openai/gpt-5")).context_window == 400_000


# ---- used: requests and compaction ------------------------------------------------------


async def test_requests_carry_the_models_output_limit(server: LoopbackServer) -> None:
    reg = registry(
        {
            "api": "openai-completions",
            "baseUrl": server.url + "/v1",
            "models": {"qwen3": {"contextWindow": 8192, "maxTokens": 700}},
        }
    )
    server.reply(Stream(text_answer("ok")))

    async for _ in reg.resolve(QWEN).stream(request_for(QWEN)):
        pass

    assert server.requests[-1].body["max_tokens"] == 700


async def test_a_declared_small_window_starts_compaction_before_the_window_is_full(
    server: LoopbackServer, tmp_path: Path
) -> None:
    from piagents import Runtime

    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    server.reply(
        Stream(text_answer("first answer")),
        Stream(text_answer("## Goal\nSUMMARY")),
        Stream(text_answer("second answer")),
    )
    provider = {"api": "openai-completions", "baseUrl": server.url + "/v1", "contextWindow": 2048}
    options = {"providers": {"myserver": provider}, "pi-agents": {"maxConcurrent": 1}}

    async with Runtime(home=home, model="myserver/qwen3", settings=options) as rt:
        root = await rt.open_root(cwd=work)
        assert root.context_window == 2048
        await root.prompt("a" * 4000)
        answer = await root.prompt("b" * 8000)

    assert answer == "second answer"
    posts = [r.body for r in server.requests if r.method == "POST"]
    assert "<conversation>" in posts[1]["messages"][-1]["content"]
    assert "SUMMARY" in posts[2]["messages"][1]["content"]


# ---- asked of the server ------------------------------------------------------------------


def declared(
    server: LoopbackServer, api: str = "openai-completions", **extra: Any
) -> ProviderRegistry:
    base = server.url if api == "anthropic-messages" else server.url + "/v1"
    return registry({"api": api, "baseUrl": base, **extra})


def gets(server: LoopbackServer, path: str) -> int:
    return sum(1 for r in server.requests if r.method == "GET" and r.path == path)


@pytest.mark.parametrize("api", ["openai-completions", "openai-responses", "anthropic-messages"])
async def test_llama_server_says_the_context_its_slots_really_have(
    server: LoopbackServer, api: str
) -> None:
    # Started with -c 8192 on a model trained for 32k: /props has the real size.
    server.routes["/v1/models"] = Raw(
        200, "application/json", json.dumps(real_servers.llama_models("qwen3", n_ctx_train=32768))
    )
    server.routes["/props"] = Raw(
        200, "application/json", json.dumps(real_servers.llama_props(8192))
    )
    reg = declared(server, api)

    assert await reg.context_window(QWEN) == 8192
    assert await reg.context_window(QWEN) == 8192
    assert reg.model_info(QWEN).max_output == 2048
    assert gets(server, "/v1/models") == 1  # asked once


async def test_a_newer_llama_server_says_n_ctx_in_its_model_list(server: LoopbackServer) -> None:
    body = real_servers.llama_models("qwen3", n_ctx_train=32768, n_ctx=4096)
    server.routes["/v1/models"] = Raw(200, "application/json", json.dumps(body))

    assert await declared(server).context_window(QWEN) == 4096
    assert gets(server, "/props") == 0


async def test_vllm_says_max_model_len(server: LoopbackServer) -> None:
    body = {"object": "list", "data": [{"id": "qwen3", "owned_by": "vllm", "max_model_len": 16384}]}
    server.routes["/v1/models"] = Raw(200, "application/json", json.dumps(body))

    assert await declared(server).context_window(QWEN) == 16384


async def test_the_litellm_proxy_says_its_model_info(server: LoopbackServer) -> None:
    plain = {"object": "list", "data": [{"id": "qwen3", "object": "model", "owned_by": "openai"}]}
    server.routes["/v1/models"] = Raw(200, "application/json", json.dumps(plain))
    info = real_servers.litellm_model_info("qwen3", max_input=200_000, max_output=8192)
    server.routes["/v1/model/info"] = Raw(200, "application/json", json.dumps(info))
    reg = declared(server)

    assert await reg.context_window(QWEN) == 200_000
    assert reg.model_info(QWEN).max_output == 8192


async def test_a_server_that_says_nothing_leaves_the_defaults_and_is_asked_once(
    server: LoopbackServer,
) -> None:
    reg = declared(server)  # the loopback answers 404 to every GET

    assert await reg.context_window(QWEN) == 128_000
    assert await reg.context_window(QWEN) == 128_000
    assert gets(server, "/v1/models") == 1


async def test_a_server_that_does_not_answer_is_given_up_on_quickly(
    server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from piagents.ai import discovery

    monkeypatch.setattr(discovery, "PROBE_TIMEOUT_S", 0.2)
    server.routes["/v1/models"] = Stream([], hold_open=True)

    assert await declared(server).context_window(QWEN) == 128_000


async def test_limits_given_in_settings_are_not_asked_for(server: LoopbackServer) -> None:
    reg = declared(server, contextWindow=8192, maxTokens=1024)

    assert await reg.context_window(QWEN) == 8192
    assert server.requests == []


def test_only_servers_other_than_the_built_in_apis_are_asked() -> None:
    from piagents.ai.registry import discovers

    assert not discovers("openai", None)
    assert not discovers("openai", "https://api.openai.com/v1")
    assert not discovers("anthropic", "https://api.anthropic.com")
    assert discovers("myserver", "http://127.0.0.1:8080/v1")


async def test_the_first_request_asks_and_its_output_limit_fits_the_window(
    server: LoopbackServer,
) -> None:
    server.routes["/v1/models"] = Raw(
        200, "application/json", json.dumps(real_servers.llama_models("qwen3", n_ctx_train=8192))
    )
    server.routes["/props"] = Raw(
        200, "application/json", json.dumps(real_servers.llama_props(8192))
    )
    server.reply(Stream(text_answer("ok")))
    reg = declared(server)

    async for _ in reg.resolve(QWEN).stream(request_for(QWEN)):
        pass

    [post] = [r for r in server.requests if r.method == "POST"]
    assert post.body["max_tokens"] == 2048
    assert reg.model_info(QWEN).context_window == 8192


# ---- compat, as settings give it ---------------------------------------------------------


READ = ToolSpec(
    "read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}}
)


async def test_llama_cpp_python_calls_tools_once_compat_says_how_to_ask(
    server: LoopbackServer,
) -> None:
    from test_openai_completions import whole

    call = whole(None, [("call__0_read_cmpl-1", "read", '{"path": "a"}')])
    server.check = real_servers.llama_cpp_python_chat(call, Stream(text_answer("no tools here")))
    reg = declared(server, compat={"toolChoice": "auto", "streamTools": False}, contextWindow=4096)

    events = [e async for e in reg.resolve(QWEN).stream(request_for(QWEN, (READ,)))]

    [post] = [r for r in server.requests if r.method == "POST"]
    assert post.body["tool_choice"] == "auto"
    assert "stream" not in post.body
    answer = events[-1].message  # type: ignore[union-attr]
    assert answer.stop_reason == "toolUse"
    assert [(c.name, c.args) for c in answer.tool_calls] == [("read", {"path": "a"})]


async def test_without_compat_llama_cpp_python_answers_as_if_no_tools_were_offered(
    server: LoopbackServer,
) -> None:
    from test_openai_completions import whole

    call = whole(None, [("call__0_read_cmpl-1", "read", '{"path": "a"}')])
    server.check = real_servers.llama_cpp_python_chat(call, Stream(text_answer("no tools here")))
    reg = declared(server, contextWindow=4096, maxTokens=512)

    events = [e async for e in reg.resolve(QWEN).stream(request_for(QWEN, (READ,)))]

    assert events[-1].message.text == "no tools here"  # type: ignore[union-attr]
