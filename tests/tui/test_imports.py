"""The UI reads the runtime's events and its read model, never its internals."""

import ast
from pathlib import Path

import piagents.tui

TUI = Path(piagents.tui.__file__).parent
# What a widget may not import: where the runtime keeps its state and does its work.
INTERNALS = (
    "piagents.store.sqlite",
    "piagents.agents.coordinator",
    "piagents.agents.operations",
    "piagents.supervision.supervisor",
    "piagents.supervision.controls",
    "piagents.supervision.remote",
    "piagents.harness.loop",
    "piagents.cli",
)


def imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


def test_no_tui_module_imports_the_runtimes_internals_or_the_command_line() -> None:
    reached = {
        (path.name, name)
        for path in sorted(TUI.glob("*.py"))
        for name in imported(path)
        if any(name == i or name.startswith(i + ".") or name.startswith(i + "_") for i in INTERNALS)
    }
    assert reached == set()
