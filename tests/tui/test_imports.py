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


# What a widget may not read of the runtime (of any object, so that neither a runtime
# nor a part handed on from it is walked): its state and its working parts.
RUNTIME_PARTS = {
    "store",
    "providers",
    "settings",
    "coordinator",
    "supervisor",
    "operations",
    "event_hub",
    "agent_states",
    "mailbox",
    "holder",
}


def runtime_reads(source: str) -> set[str]:
    """The expressions of `source` that read a runtime's parts, or read a runtime for
    anything but its read model."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Attribute):
            continue
        of = node.value
        of_runtime = (isinstance(of, ast.Name) and of.id in ("runtime", "rt")) or (
            isinstance(of, ast.Attribute) and of.attr == "runtime"
        )
        if node.attr in RUNTIME_PARTS or (of_runtime and node.attr != "read_model"):
            found.add(ast.unparse(node))
    return found


def test_the_scan_sees_a_runtime_read_however_it_is_reached() -> None:
    source = (
        "store = self.app.runtime.store\n"
        "agents = runtime.settings.agents\n"
        "provider = self.runtime.providers.resolve(model)\n"
        "shorts = rt.coordinator.short_map(record)\n"
        "await self.app.runtime.open_root(cwd)\n"
        "model = self.runtime.read_model\n"
        "page = self.model.root_sessions(exclude=root.id)\n"
    )
    assert runtime_reads(source) == {
        "self.app.runtime.store",
        "runtime.settings",
        "self.runtime.providers",
        "rt.coordinator",
        "self.app.runtime.open_root",
    }


def test_no_tui_module_reads_the_runtime_but_through_its_read_model() -> None:
    reached = {
        (path.name, expression)
        for path in sorted(TUI.glob("*.py"))
        for expression in runtime_reads(path.read_text())
    }
    assert reached == set()
