"""Extensions: Python files that add tools to Agents.

An extension is a `.py` file (or an importable module name) with a function
`register(api)`; it calls `api.add_tool(tool)` for each tool it offers. The
paths come from `"pi-agents": {"extensions": [...]}` in settings.json. An
owned Agent can use only tools its owner can use.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from piagents.harness.tools.base import Tool


class ExtensionApi:
    """What `register(api)` receives."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.tools: list[Tool] = []

    def add_tool(self, tool: Tool) -> None:
        for attr in ("name", "description", "parameters", "execute"):
            if not hasattr(tool, attr):
                raise TypeError(f"a tool needs `{attr}`")
        self.tools.append(tool)


def _module(spec: str, base: Path) -> ModuleType:
    path = Path(spec).expanduser()
    if not path.is_absolute():
        path = base / path
    if path.suffix == ".py" or path.exists():
        if not path.is_file():
            raise FileNotFoundError(f"no such file {path}")
        name = f"piagents_extension_{abs(hash(str(path)))}"
        cached = sys.modules.get(name)
        if cached is not None:
            return cached
        loader_spec = importlib.util.spec_from_file_location(name, path)
        if loader_spec is None or loader_spec.loader is None:
            raise ImportError(f"cannot load {path}")
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[name] = module
        loader_spec.loader.exec_module(module)
        return module
    return importlib.import_module(spec)


def load_extensions(specs: Sequence[str], base: Path) -> tuple[list[Tool], list[str]]:
    """Tools of every extension that loads, and a warning for each that does not."""
    tools: list[Tool] = []
    warnings: list[str] = []
    for spec in specs:
        try:
            module = _module(spec, base)
            register = getattr(module, "register", None)
            if not callable(register):
                raise TypeError("it has no register(api) function")
            api = ExtensionApi(spec)
            register(api)
            tools.extend(api.tools)
        except Exception as exc:
            warnings.append(f"extension {spec}: {type(exc).__name__}: {exc}; not loaded.")
    return tools, warnings
