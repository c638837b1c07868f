"""Which provider serves a `provider/modelId`: built-ins, settings, the embedded local model
and the faux model; and which model to use when none is named."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from piagents.ai._sdk import SDKProvider
from piagents.ai.faux import FunctionModel, load_route
from piagents.ai.model_options import ProviderOptions, effective_info
from piagents.ai.models import ModelInfo, ModelRef, model_info
from piagents.ai.provider import Provider
from piagents.config import ProviderApi, ProviderSettings, Settings

if TYPE_CHECKING:
    from piagents.ai.anthropic_messages import AnthropicMessagesProvider
    from piagents.ai.openai_completions import OpenAICompletionsProvider
    from piagents.ai.openai_responses import OpenAIResponsesProvider


class ProviderConfigError(Exception):
    """A model cannot be used as configured (unknown provider, missing key)."""


@dataclass(frozen=True, slots=True)
class BuiltinProvider:
    api: ProviderApi
    api_key_env: str | None
    base_url: str | None = None


BUILTINS: dict[str, BuiltinProvider] = {
    "openai": BuiltinProvider("openai-responses", "OPENAI_API_KEY"),
    "anthropic": BuiltinProvider("anthropic-messages", "ANTHROPIC_API_KEY"),
    "ollama": BuiltinProvider("openai-completions", None, "http://127.0.0.1:11434/v1"),
}


# The model used when settings name none, by the first key found in the environment.
DEFAULT_MODELS = (
    ("OPENAI_API_KEY", "openai/gpt-5"),
    ("ANTHROPIC_API_KEY", "anthropic/claude-sonnet-4-5"),
)


def default_model_from_env() -> str | None:
    for variable, model in DEFAULT_MODELS:
        if os.environ.get(variable):
            return model
    return None


def default_model(settings: Settings) -> str | None:
    """The model to use when none is named: `defaultModel` from settings, else a built-in
    provider whose key is in the environment, else the embedded `local/smollm2` when it is
    installed, else None (see `NO_MODEL`)."""
    if settings.default_model:
        return settings.default_model
    from_env = default_model_from_env()
    if from_env is not None:
        return from_env
    from piagents.ai.local import MODEL, is_installed

    return MODEL if is_installed() else None


NO_MODEL = (
    "No model configured. Either set OPENAI_API_KEY or ANTHROPIC_API_KEY; or pass --model "
    "provider/modelId (for example --model ollama/qwen3:8b for a local Ollama server); or set "
    "defaultModel in settings.json; or install the small embedded model that runs offline: "
    "pip install 'pi-agents[local]'."
)


def is_loopback(url: str | None) -> bool:
    """Whether `url` names this machine (`localhost`, 127.0.0.0/8 or ::1)."""
    if not url:
        return False
    try:
        host = urlparse(url).hostname or ""
    except ValueError:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name such as 127.example.com is not loopback


LOCAL = "local"  # the embedded model (piagents.ai.local), unless settings declare a "local"


def local_provider(ref: ModelRef) -> Provider:
    """The embedded model's provider; llama.cpp itself loads only when it first answers."""
    from piagents.ai.local import INSTALL_HINT, MODEL, MODEL_ID, LocalProvider, is_installed

    if ref.model_id != MODEL_ID:
        raise ProviderConfigError(
            f'Unknown local model "{ref.model_id}": the embedded model is {MODEL}. Serve other '
            "models with Ollama or any OpenAI-compatible server (see providers in settings.json)."
        )
    if not is_installed():
        raise ProviderConfigError(f"{MODEL} is not installed: {INSTALL_HINT}")
    return LocalProvider()


class ProviderRegistry:
    def __init__(self, settings: Settings, function_model: FunctionModel | None = None) -> None:
        self.settings = settings
        self.function_model = function_model
        self._cache: dict[str, Provider] = {}

    def resolve(self, ref: ModelRef) -> Provider:
        key = f"{ref.provider}/{ref.model_id}" if ref.provider == "faux" else ref.provider
        provider = self._cache.get(key)
        if provider is None:
            provider = self._create(ref)
            self._cache[key] = provider
        return provider

    def check_model_choice(self, ref: ModelRef, chosen_by_user: Iterable[str | None]) -> None:
        """Refuse `ref` where a model, not the user, picked it (`spawn`'s `model`): a faux
        route imports and runs any module, so only the models in `chosen_by_user` (the
        command line's, settings', the caller's own) or the embedder's `FunctionModel`
        may be faux; any other provider must be one the settings or built-ins name."""
        if ref.provider != "faux":
            return
        if ":" not in ref.model_id and self.function_model is not None:
            return  # the embedder's own FunctionModel, whatever it is called
        user = {_without_thinking(m) for m in chosen_by_user if m}
        if str(ref) in user:
            return
        raise ProviderConfigError(
            "the faux provider runs Python code and is only for tests and scripts; "
            "an Agent may choose only configured providers "
            f"({', '.join(self.known_providers())}), or its own model"
        )

    def known_providers(self) -> list[str]:
        """The providers a model may name: built-ins, the embedded model and declared ones."""
        return sorted({*BUILTINS, *self.settings.providers, LOCAL})

    def _create(self, ref: ModelRef) -> Provider:
        if ref.provider == LOCAL and LOCAL not in self.settings.providers:
            return local_provider(ref)
        if ref.provider == "faux":
            if ":" in ref.model_id:
                try:
                    return FunctionModel(load_route(ref.model_id), ref.model_id)
                except ValueError as exc:
                    raise ProviderConfigError(str(exc)) from exc
                except Exception as exc:  # the route's module failed while importing
                    raise ProviderConfigError(
                        f"cannot load faux model {ref.model_id!r}: {type(exc).__name__}: {exc}"
                    ) from exc
            if self.function_model is None:
                raise ProviderConfigError(
                    "the faux provider needs a route: use --model faux/<module>:<function>"
                )
            return self.function_model
        builtin = BUILTINS.get(ref.provider)
        configured = self.settings.providers.get(ref.provider, ProviderSettings())
        api = configured.api or (builtin.api if builtin else None)
        if api is None:
            if ref.provider not in self.settings.providers:
                known = ", ".join(sorted({*BUILTINS, *self.settings.providers, "faux", LOCAL}))
                raise ProviderConfigError(
                    f'Unknown provider "{ref.provider}". Known providers: {known}. '
                    'Declare others under "providers" in settings.json.'
                )
            api = "openai-completions"  # a declared provider without api: OpenAI-compatible
        base_url = configured.base_url or (builtin.base_url if builtin else None)
        # A declared provider without apiKeyEnv reads <NAME>_API_KEY, the variable
        # the error below names.
        key_env = configured.api_key_env or (
            builtin.api_key_env if builtin else default_key_env(ref.provider)
        )
        api_key = configured.api_key or (os.environ.get(key_env) if key_env else None)
        if not api_key:
            if is_loopback(base_url) or key_env is None:
                api_key = "not-needed"
            else:
                raise ProviderConfigError(
                    f"No API key for provider {ref.provider}: set the environment variable "
                    f"{key_env} (or providers.{ref.provider}.apiKeyEnv in settings.json)."
                )
        options = replace(configured.options, discover=discovers(ref.provider, base_url))
        return make_provider(
            api, ref.provider, base_url, api_key, configured.headers, options=options
        )

    def model_info(self, ref: ModelRef) -> ModelInfo:
        """The facts of a model as this registry serves it: the limits settings give, or its
        server said (once asked, see `context_window`), or the table of known models. This
        is what the UI shows as the model's context window."""
        if ref.provider == LOCAL and LOCAL not in self.settings.providers:
            from piagents.ai.local import CONTEXT_WINDOW, DEFAULT_MAX_OUTPUT

            return replace(
                model_info(ref), context_window=CONTEXT_WINDOW, max_output=DEFAULT_MAX_OUTPUT
            )
        configured = self.settings.providers.get(ref.provider)
        provider = self._cache.get(ref.provider)
        if isinstance(provider, SDKProvider):
            return provider.model_info(ref.model_id)
        if configured is None:
            return model_info(ref)
        return effective_info(model_info(ref), configured.options.for_model(ref.model_id), None)

    async def context_window(self, ref: ModelRef) -> int:
        """The model's context window, asking its server first if that was not done yet
        (once, with a short timeout; a declared server only)."""
        try:
            provider = self.resolve(ref)
        except ProviderConfigError:
            return self.model_info(ref).context_window
        if isinstance(provider, SDKProvider):
            await provider.discover(ref.model_id)
        return self.model_info(ref).context_window


def discovers(provider: str, base_url: str | None) -> bool:
    """Whether to ask the server for its models' limits: only servers that are not the
    built-in providers' own APIs, whose models the table knows."""
    if base_url is None:
        return False
    host = (urlparse(base_url).hostname or "").lower()
    return host not in ("api.openai.com", "api.anthropic.com")


def _without_thinking(model: str) -> str:
    try:
        return str(ModelRef.parse(model))
    except ValueError:
        return model


def default_key_env(provider: str) -> str:
    """`MY_SERVER_API_KEY` for a provider named `my-server`."""
    return "".join(c if c.isalnum() else "_" for c in provider.upper()) + "_API_KEY"


def make_provider(
    api: ProviderApi,
    name: str,
    base_url: str | None,
    api_key: str,
    headers: dict[str, str],
    *,
    options: ProviderOptions | None = None,
) -> Provider:
    """Import the adapter for `api` lazily, so the SDKs load only when used."""
    adapter: type[OpenAICompletionsProvider | OpenAIResponsesProvider | AnthropicMessagesProvider]
    if api == "openai-completions":
        from piagents.ai.openai_completions import OpenAICompletionsProvider as adapter
    elif api == "openai-responses":
        from piagents.ai.openai_responses import OpenAIResponsesProvider as adapter
    else:
        from piagents.ai.anthropic_messages import AnthropicMessagesProvider as adapter
    return adapter(name, base_url=base_url, api_key=api_key, headers=headers, options=options)
