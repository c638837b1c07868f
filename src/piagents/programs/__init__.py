"""Programs: Python that composes a caller's tools and Agents, run in a sandbox.

Its public names, each imported on first use from the module that defines it:

- The sandbox (`sandbox`): `run_script` runs a script (the body of an async
  function) in a worker of a `SandboxPool` under `Limits`, with host functions
  (`HostFunction`) and a `Prelude`, and returns a `ScriptOutcome`;
  `SandboxError` when it cannot run one.
- The script API (`script_api`): `script_prelude` defines `tools.*`, `agent()`,
  `text()`, `store()` / `load()` and `ToolError` inside the sandbox over the flat
  functions `script_externals` makes of a `ScriptHost`; `ToolError` is what a
  host function raises for a failed call.
- `JsonValue`, `to_json_value` (`script_values`): what crosses the boundary.
- The tool's face: `texts` (every model-facing text of the `program` tool, as
  pure functions), `calls` (its argument schema, each call checked into one
  request) and `addressing` (Programs' short IDs, targets by ID or unique prefix).

- Running them: `runner` (`ProgramRunner`, one per runtime: the sandbox's pool,
  the Programs running, their records, stops and notifications), `script_host`
  (the runtime's side of one Program's script API), `run_result` and
  `wait_output` (their results as the caller reads them, pure), and `tool`
  (`ProgramTool`, the `program` tool of one caller). `ports` is what they need of
  the Agents face (`ProgramAgents`).
- The SDK's face (`sdk`): `ProgramScopeSession`, what `Agent.program()` opens,
  and its `ProgramAgentHandle`s, the embedder's own Python with a Program's handles;
  `scopes` records a runtime's scopes as Programs of kind `scope`.

The script's traceback text (`script_errors`) and its source edits
(`script_source`) are the sandbox's own.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from piagents.programs.sandbox import (
        HostFunction,
        Limits,
        Prelude,
        SandboxError,
        SandboxPool,
        ScriptOutcome,
        run_script,
    )
    from piagents.programs.script_api import (
        ScriptHost,
        ToolError,
        script_externals,
        script_prelude,
    )
    from piagents.programs.script_values import JsonValue, to_json_value
    from piagents.programs.sdk import ProgramAgentHandle, ProgramScopeSession

__all__ = [
    "HostFunction",
    "JsonValue",
    "Limits",
    "Prelude",
    "ProgramAgentHandle",
    "ProgramScopeSession",
    "SandboxError",
    "SandboxPool",
    "ScriptHost",
    "ScriptOutcome",
    "ToolError",
    "addressing",
    "calls",
    "run_script",
    "script_externals",
    "script_prelude",
    "texts",
    "to_json_value",
]

_MODULES = ("addressing", "calls", "texts")
_SCRIPT_API = ("ScriptHost", "ToolError", "script_externals", "script_prelude")
_SCRIPT_VALUES = ("JsonValue", "to_json_value")
_SDK = ("ProgramAgentHandle", "ProgramScopeSession")


def __getattr__(name: str) -> Any:
    # Imported on first use, so importing one module of the package imports no other.
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name in _MODULES:
        return import_module(f"{__name__}.{name}")
    if name in _SCRIPT_API:
        module = "script_api"
    elif name in _SCRIPT_VALUES:
        module = "script_values"
    elif name in _SDK:
        module = "sdk"
    else:
        module = "sandbox"
    return getattr(import_module(f"{__name__}.{module}"), name)
