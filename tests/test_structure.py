"""The shape of the package, checked: no import cycles (imports under TYPE_CHECKING and
inside functions count), no module over 500 lines, and no private attribute reached
from another module. (What the UI may import: tests/tui/test_imports.py.)"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import piagents

PACKAGE = Path(piagents.__file__).parent
MAX_LINES = 500

# Private names of other libraries that pi-agents must reach, each for a reason
# given where it is used: (module, attribute).
FOREIGN_PRIVATES = {
    ("piagents.ai.local", "_input_ids"),  # llama-cpp-python's evaluated tokens
    ("piagents.harness.abandoned", "_unregister_task"),  # asyncio: forget a stuck task
    ("piagents.harness.abandoned", "_log_destroy_pending"),  # asyncio: quiet its warning
    ("piagents.tui.keys", "_ansi_sequences"),  # Textual's key table
    ("piagents.workers.placements", "_recover_pending_workflows"),  # DBOS 3.4: recovery
}


@dataclass(frozen=True)
class Module:
    name: str
    path: Path

    @property
    def is_package(self) -> bool:
        return self.path.name == "__init__.py"

    @property
    def tree(self) -> ast.Module:
        return _parse(self.path)


@cache
def _parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


@cache
def modules() -> dict[str, Module]:
    found: dict[str, Module] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        name = ".".join(parts)
        found[name] = Module(name, path)
    return found


def _known(name: str) -> str | None:
    """The package module that `name` (a module or a name inside one) lives in."""
    mods = modules()
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: Module) -> set[str]:
    """Every piagents module `module` imports, wherever the import statement stands."""
    targets: set[str] = set()
    for node in ast.walk(module.tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.name.split(".")
                if not module.is_package:
                    parts = parts[:-1]
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*parts, base] if base else parts)
            names = [f"{base}.{alias.name}" for alias in node.names]
        for name in names:
            target = _known(name)
            if target is None or target == module.name or target == "piagents":
                continue
            if module.name.startswith(target + "."):
                continue  # a package's own __init__, run first anyway
            targets.add(target)
    return targets


def cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    graph = {name: sorted(imports_of(m)) for name, m in modules().items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(graph[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(graph[target])))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component: list[str] = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_the_cycle_finder_sees_type_checking_and_function_imports(tmp_path: Path) -> None:
    (tmp_path / "piagents").mkdir()
    (tmp_path / "piagents" / "__init__.py").write_text("")
    (tmp_path / "piagents" / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from piagents.b import B\n"
    )
    (tmp_path / "piagents" / "b.py").write_text("def f():\n    from . import c\n")
    (tmp_path / "piagents" / "c.py").write_text("import piagents.a\n")
    (tmp_path / "piagents" / "d.py").write_text("from piagents import a\n")
    global PACKAGE
    saved = PACKAGE
    PACKAGE = tmp_path / "piagents"
    modules.cache_clear()
    try:
        assert cycles() == [["piagents.a", "piagents.b", "piagents.c"]]
    finally:
        PACKAGE = saved
        modules.cache_clear()


def test_no_import_cycles() -> None:
    assert cycles() == []


def test_no_module_is_over_500_lines() -> None:
    long = {
        name: n
        for name, m in modules().items()
        if (n := len(m.path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


def _own_names(module: Module) -> set[str]:
    """Names a module defines: its functions, classes and attributes it assigns."""
    names: set[str] = set()
    for node in ast.walk(module.tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_reaches() -> set[tuple[str, str]]:
    """(module, name) for each private name a module uses but another one defines."""
    found: set[tuple[str, str]] = set()
    for name, module in modules().items():
        own = _own_names(module)
        for node in ast.walk(module.tree):
            if isinstance(node, ast.ImportFrom):
                found |= {(name, a.name) for a in node.names if _private(a.name)}
            elif isinstance(node, ast.Attribute) and _private(node.attr):
                value = node.value
                if isinstance(value, ast.Name) and value.id in ("self", "cls"):
                    continue
                if isinstance(value, ast.Call) and ast.unparse(value.func) == "super":
                    continue
                if node.attr not in own:
                    found.add((name, node.attr))
    return found


def test_no_module_reaches_another_modules_private_attributes() -> None:
    assert private_reaches() - FOREIGN_PRIVATES == set()
