"""Settings: `<home>/settings.json`, validated key by key.

A bad file or a bad value never stops the runtime: each problem becomes a
warning naming the file and key, the default is used, and the file is left
as it is.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from piagents.ai.model_options import PROVIDER_KEYS, ProviderOptions, parse_provider_options
from piagents.ai.models import THINKING_LEVELS, ThinkingLevel
from piagents.ai.retry import RetryPolicy
from piagents.harness.loop_guard import DEFAULT_MAX_MODEL_CALLS
from piagents.json_depth import json_depth
from piagents.regular_file import FileTooLarge, NotARegularFile, read_regular_file
from piagents.store.url import checked_url

ProviderApi = Literal["openai-completions", "openai-responses", "anthropic-messages"]
PROVIDER_APIS = ("openai-completions", "openai-responses", "anthropic-messages")
QUEUE_MODES = ("one-at-a-time", "all")
AGENT_APIS = ("agents", "supervision")


def check_agent_api(agent_api: str) -> None:
    if agent_api not in AGENT_APIS:
        raise ValueError(
            f"unknown agent API {agent_api!r}; expected one of {', '.join(AGENT_APIS)}"
        )


Placement = Literal["process", "tmux", "inline", "workers"]
PLACEMENTS: tuple[Placement, ...] = ("process", "tmux", "inline", "workers")
MESSAGE_LIMIT_DEFAULT = 131_072
MESSAGE_LIMIT_RANGE = (1024, 1_048_576)
# Bounds of the file and of every number in it: a count, a size or a time in
# milliseconds above 2**31 - 1 (about 24 days) is a mistake, and larger ones overflow
# the floats and timeouts they become.
MAX_NUMBER = 2**31 - 1
MAX_FILE_BYTES = 1_048_576
MAX_DEPTH = 64
_SHOWN_CHARS = 60


class SettingsError(ValueError):
    """Settings that cannot be used with a default in their place (the supervision face's)."""


def default_home() -> Path:
    env = os.environ.get("PI_AGENTS_HOME")
    return Path(env).expanduser() if env else Path.home() / ".pi-agents"


@dataclass(frozen=True, slots=True)
class ProviderSettings:
    api: ProviderApi | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    api_key: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    options: ProviderOptions = field(default_factory=ProviderOptions)  # limits, compat


@dataclass(frozen=True, slots=True)
class CompactionSettings:
    enabled: bool = True
    reserve_tokens: int = 16_384
    keep_recent_tokens: int = 20_000


@dataclass(frozen=True, slots=True)
class AgentsSettings:
    max_concurrent: int = 3
    max_outstanding: int = 8
    extensions: tuple[str, ...] = ()
    abort_timeout_ms: int = 10_000
    max_model_calls_per_run: int = DEFAULT_MAX_MODEL_CALLS  # the loop guard's bound
    agent_api: Literal["agents", "supervision"] = "agents"
    # The supervision face. Placement None: `process` on the command line, `inline` in the SDK.
    spawn_placement: Placement | None = None
    context_retirement: bool = True
    inline_attachment_limit_bytes: int = MESSAGE_LIMIT_DEFAULT
    mailbox_payload_limit_bytes: int = MESSAGE_LIMIT_DEFAULT
    # Leases are heartbeats: renewed this often, gone (and open to takeover) once this old.
    lease_renew_ms: int = 5_000
    lease_lapse_ms: int = 15_000


@dataclass(frozen=True, slots=True)
class Settings:
    default_model: str | None = None
    default_thinking: ThinkingLevel = "off"
    providers: dict[str, ProviderSettings] = field(default_factory=dict)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    compaction: CompactionSettings = CompactionSettings()
    tool_execution: Literal["parallel", "sequential"] = "parallel"
    steering_mode: Literal["one-at-a-time", "all"] = "one-at-a-time"
    follow_up_mode: Literal["one-at-a-time", "all"] = "one-at-a-time"
    agents: AgentsSettings = AgentsSettings()
    # Tool names offered by default; `+name` adds an optional tool (`program`) to them.
    default_tools: tuple[str, ...] = ()
    store: str | None = None  # `postgresql://...`: that store; None: the home's SQLite
    warnings: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()  # each names its file and key; see SettingsError


def shown(value: object) -> str:
    """A value as a warning quotes it: its JSON, shortened; never the whole of a long one."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (ValueError, TypeError, RecursionError):  # too deep, or an int too long to print
        text = type(value).__name__
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"


class _Reader:
    def __init__(self, source: str) -> None:
        self.source = source
        self.warnings: list[str] = []
        self.errors: list[str] = []

    def warn(self, key: str, problem: str) -> None:
        self.warnings.append(f"{self.source}: {key}: {problem}; using the default.")

    def fail(self, key: str, problem: str) -> None:
        self.errors.append(f"{self.source}: {key}: {problem}.")

    def unknown(self, raw: Mapping[str, Any], known: set[str], prefix: str = "") -> None:
        for key in raw:
            if key not in known:
                name = key if len(key) <= _SHOWN_CHARS else key[: _SHOWN_CHARS - 1] + "…"
                self.warnings.append(f"{self.source}: {prefix}{name}: unknown setting; ignored.")

    def positive_int(
        self, raw: Mapping[str, Any], key: str, default: int, path: str, low: int = 1
    ) -> int:
        if key not in raw:
            return default
        value = raw[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            kind = "a positive integer" if low == 1 else "a non-negative integer"
            self.warn(path, f"expected {kind}, got {shown(value)}")
            return default
        if value > MAX_NUMBER:
            self.warn(path, f"expected at most {MAX_NUMBER}, got {shown(value)}")
            return default
        return value

    def number(self, raw: Mapping[str, Any], key: str, default: float, path: str) -> float:
        if key not in raw:
            return default
        value = raw[key]
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or (isinstance(value, float) and not math.isfinite(value))
            or value < 0
        ):
            self.warn(path, f"expected a non-negative number, got {shown(value)}")
            return default
        if value > MAX_NUMBER:
            self.warn(path, f"expected at most {MAX_NUMBER}, got {shown(value)}")
            return default
        return float(value)

    def boolean(self, raw: Mapping[str, Any], key: str, default: bool, path: str) -> bool:
        if key not in raw:
            return default
        if not isinstance(raw[key], bool):
            self.warn(path, f"expected true or false, got {shown(raw[key])}")
            return default
        return bool(raw[key])

    def choice(
        self, raw: Mapping[str, Any], key: str, choices: tuple[str, ...], default: str, path: str
    ) -> str:
        if key not in raw:
            return default
        if raw[key] not in choices:
            self.warn(path, f"expected one of {', '.join(choices)}, got {shown(raw[key])}")
            return default
        return str(raw[key])

    def string(self, raw: Mapping[str, Any], key: str, path: str) -> str | None:
        if key not in raw or raw[key] is None:
            return None
        if not isinstance(raw[key], str) or not raw[key]:
            self.warn(path, f"expected a non-empty string, got {shown(raw[key])}")
            return None
        return str(raw[key])

    def section(self, raw: Mapping[str, Any], key: str) -> Mapping[str, Any]:
        value = raw.get(key, {})
        if not isinstance(value, dict):
            self.warn(key, f"expected an object, got {shown(value)}")
            return {}
        return value


TOP_KEYS = {
    "defaultModel",
    "defaultTools",
    "defaultThinkingLevel",
    "providers",
    "retry",
    "compaction",
    "toolExecution",
    "steeringMode",
    "followUpMode",
    "pi-agents",
    "store",
}


def parse_settings(raw: Mapping[str, Any], source: str = "settings") -> Settings:
    r = _Reader(source)
    r.unknown(raw, TOP_KEYS)
    default_model = r.string(raw, "defaultModel", "defaultModel")
    if default_model is not None and "/" not in default_model:
        r.warn("defaultModel", f"expected provider/modelId, got {shown(default_model)}")
        default_model = None
    thinking = cast(
        ThinkingLevel,
        r.choice(raw, "defaultThinkingLevel", THINKING_LEVELS, "off", "defaultThinkingLevel"),
    )

    providers: dict[str, ProviderSettings] = {}
    for name, value in r.section(raw, "providers").items():
        path = f"providers.{name}"
        if not isinstance(value, dict):
            r.warn(path, f"expected an object, got {shown(value)}")
            continue
        r.unknown(
            value, {"api", "baseUrl", "apiKeyEnv", "apiKey", "headers", *PROVIDER_KEYS}, path + "."
        )
        api = value.get("api")
        if api is not None and api not in PROVIDER_APIS:
            r.warn(path + ".api", f"expected one of {', '.join(PROVIDER_APIS)}, got {shown(api)}")
            continue
        headers = value.get("headers", {})
        if not isinstance(headers, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in headers.items()
        ):
            r.warn(path + ".headers", "expected an object of strings")
            headers = {}
        providers[name] = ProviderSettings(
            cast(ProviderApi | None, api),
            r.string(value, "baseUrl", path + ".baseUrl"),
            r.string(value, "apiKeyEnv", path + ".apiKeyEnv"),
            r.string(value, "apiKey", path + ".apiKey"),
            dict(headers),
            parse_provider_options(
                value,
                path,
                lambda key, problem: r.warnings.append(f"{r.source}: {key}: {problem}."),
            ),
        )

    retry_raw = r.section(raw, "retry")
    r.unknown(retry_raw, {"maxRetries", "baseDelayMs", "maxDelayMs"}, "retry.")
    max_retries = r.positive_int(retry_raw, "maxRetries", 3, "retry.maxRetries", low=0)
    retry = RetryPolicy(
        max_retries,
        r.number(retry_raw, "baseDelayMs", 2000, "retry.baseDelayMs") / 1000,
        r.number(retry_raw, "maxDelayMs", 60_000, "retry.maxDelayMs") / 1000,
    )

    comp_raw = r.section(raw, "compaction")
    r.unknown(comp_raw, {"enabled", "reserveTokens", "keepRecentTokens"}, "compaction.")
    compaction = CompactionSettings(
        r.boolean(comp_raw, "enabled", True, "compaction.enabled"),
        r.positive_int(comp_raw, "reserveTokens", 16_384, "compaction.reserveTokens"),
        r.positive_int(comp_raw, "keepRecentTokens", 20_000, "compaction.keepRecentTokens"),
    )

    # An invalid store URL is an error, not a warning: another store would be opened.
    store, problem = checked_url(raw.get("store"))
    if problem is not None:
        r.fail("store", problem)
    return Settings(
        default_model=default_model,
        default_thinking=thinking,
        providers=providers,
        retry=retry,
        compaction=compaction,
        tool_execution=cast(
            Literal["parallel", "sequential"],
            r.choice(raw, "toolExecution", ("parallel", "sequential"), "parallel", "toolExecution"),
        ),
        steering_mode=cast(
            Literal["one-at-a-time", "all"],
            r.choice(raw, "steeringMode", QUEUE_MODES, "one-at-a-time", "steeringMode"),
        ),
        follow_up_mode=cast(
            Literal["one-at-a-time", "all"],
            r.choice(raw, "followUpMode", QUEUE_MODES, "one-at-a-time", "followUpMode"),
        ),
        agents=_agents(r, r.section(raw, "pi-agents")),
        default_tools=_default_tools(r, raw),
        store=store,
        warnings=tuple(r.warnings),
        errors=tuple(r.errors),
    )


def _default_tools(r: _Reader, raw: Mapping[str, Any]) -> tuple[str, ...]:
    value = raw.get("defaultTools", [])
    if not isinstance(value, list) or not all(isinstance(x, str) and x.strip() for x in value):
        r.warn("defaultTools", f"expected a list of tool names, got {shown(value)}")
        return ()
    return tuple(x.strip() for x in value)


# The `pi-agents` settings a front end may change while the runtime runs: their key in
# the settings file and their field in AgentsSettings.
LIVE_AGENTS_FIELDS = {
    "contextRetirement": "context_retirement",
    "inlineAttachmentLimitBytes": "inline_attachment_limit_bytes",
    "mailboxPayloadLimitBytes": "mailbox_payload_limit_bytes",
}

AGENTS_KEYS = {
    "maxConcurrent",
    "maxOutstanding",
    "extensions",
    "abortTimeoutMs",
    "maxModelCallsPerRun",
    "agentApi",
    "spawnPlacement",
    "contextRetirement",
    "inlineAttachmentLimitBytes",
    "mailboxPayloadLimitBytes",
    "leaseRenewMs",
    "leaseLapseMs",
}


def _agents(r: _Reader, raw: Mapping[str, Any]) -> AgentsSettings:
    r.unknown(raw, AGENTS_KEYS, "pi-agents.")
    d = AgentsSettings()
    concurrent = r.positive_int(raw, "maxConcurrent", d.max_concurrent, "pi-agents.maxConcurrent")
    outstanding = r.positive_int(
        raw, "maxOutstanding", d.max_outstanding, "pi-agents.maxOutstanding"
    )
    if concurrent > outstanding:
        r.warnings.append(
            f"{r.source}: pi-agents: maxConcurrent ({concurrent}) must not exceed "
            f"maxOutstanding ({outstanding}); using the defaults "
            f"({d.max_concurrent} and {d.max_outstanding})."
        )
        concurrent, outstanding = d.max_concurrent, d.max_outstanding
    extensions: tuple[str, ...] = ()
    if "extensions" in raw:
        value = raw["extensions"]
        if isinstance(value, list) and all(isinstance(x, str) for x in value):
            extensions = tuple(value)
        else:
            r.warn("pi-agents.extensions", "expected a list of paths")
    return AgentsSettings(
        max_concurrent=concurrent,
        max_outstanding=outstanding,
        extensions=extensions,
        abort_timeout_ms=r.positive_int(
            raw, "abortTimeoutMs", d.abort_timeout_ms, "pi-agents.abortTimeoutMs"
        ),
        max_model_calls_per_run=r.positive_int(
            raw,
            "maxModelCallsPerRun",
            d.max_model_calls_per_run,
            "pi-agents.maxModelCallsPerRun",
        ),
        agent_api=cast(
            Literal["agents", "supervision"],
            r.choice(raw, "agentApi", AGENT_APIS, d.agent_api, "pi-agents.agentApi"),
        ),
        lease_renew_ms=r.positive_int(raw, "leaseRenewMs", 5_000, "pi-agents.leaseRenewMs"),
        lease_lapse_ms=r.positive_int(raw, "leaseLapseMs", 15_000, "pi-agents.leaseLapseMs"),
        **_supervision(r, raw),
    )


def _supervision(r: _Reader, raw: Mapping[str, Any]) -> dict[str, Any]:
    """The supervision face's settings: an invalid one is an error, not a warning."""
    out: dict[str, Any] = {}
    if "spawnPlacement" in raw:
        value = raw["spawnPlacement"]
        if value in PLACEMENTS:
            out["spawn_placement"] = value
        else:
            r.fail(
                "pi-agents.spawnPlacement",
                f"expected one of {', '.join(PLACEMENTS)}, got {shown(value)}",
            )
    if "contextRetirement" in raw:
        value = raw["contextRetirement"]
        if isinstance(value, bool):
            out["context_retirement"] = value
        else:
            r.fail("pi-agents.contextRetirement", f"expected true or false, got {shown(value)}")
    low, high = MESSAGE_LIMIT_RANGE
    for key, name in (
        ("inlineAttachmentLimitBytes", "inline_attachment_limit_bytes"),
        ("mailboxPayloadLimitBytes", "mailbox_payload_limit_bytes"),
    ):
        if key not in raw:
            continue
        value = raw[key]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            r.fail(
                f"pi-agents.{key}",
                f"expected an integer from {low} to {high}, got {shown(value)}",
            )
        else:
            out[name] = value
    return out


def merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """Deep-merge `over` onto `base` (objects merge, everything else replaces)."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def read_settings_file(path: Path) -> tuple[dict[str, Any], list[str]]:
    """The raw settings object and any warning; a missing file is an empty object. Only
    a regular file of at most `MAX_FILE_BYTES`, nested at most `MAX_DEPTH`, is read."""
    kept = "using the defaults. The file was left as it is."
    try:
        data = read_regular_file(path, MAX_FILE_BYTES)
    except FileNotFoundError:
        return {}, []
    except FileTooLarge:
        return {}, [f"{path}: larger than {MAX_FILE_BYTES >> 20} MiB; {kept}"]
    except NotARegularFile:
        return {}, [f"{path}: cannot read (not a regular file); using the defaults."]
    except OSError as exc:
        return {}, [f"{path}: cannot read ({exc.strerror}); using the defaults."]
    try:
        # utf-8-sig: a byte order mark (some editors write one) is not an error.
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return {}, [
            f"{path}: not UTF-8 text (byte {exc.start}); using the defaults. "
            "The file was left as it is."
        ]
    if json_depth(text) > MAX_DEPTH:
        return {}, [f"{path}: nested more than {MAX_DEPTH} levels deep; {kept}"]
    try:
        raw = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        return {}, [
            f"{path}: invalid JSON at line {exc.lineno} column {exc.colno} ({exc.msg}); "
            "using the defaults. The file was left as it is."
        ]
    except ValueError:  # an integer of more digits than Python converts
        return {}, [f"{path}: invalid JSON (a number too long to read); {kept}"]
    if not isinstance(raw, dict):
        return {}, [f"{path}: expected a JSON object; using the defaults."]
    return raw, []


def load_settings(home: Path, overrides: Mapping[str, Any] | None = None) -> Settings:
    path = home / "settings.json"
    raw, warnings = read_settings_file(path)
    settings = parse_settings(merge(raw, overrides or {}), str(path))
    if warnings:
        from dataclasses import replace

        settings = replace(settings, warnings=(*warnings, *settings.warnings))
    return settings
