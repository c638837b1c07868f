"""Supervision: managed agents launched from agent definitions, and their owner's
controls (the other face of the `agent` tool, and `ask_owner`).

Its public names, each imported on first use from the module that defines it:

- `Supervisor` (`supervisor`): one per runtime, the entry points of the nine
  actions; the work is done in `delegation`, `controls`, `ask_owner`, `recovery`
  and `remote`, and `generations` is the one writer of a live generation's flags.
- `SupervisionTool` (`tool`): the supervision face of the `agent` tool for one
  caller; every failure is a `SupervisionError` (`errors`).
- `SupervisionPorts` (`ports`): what it needs of the runtime around it, wired in
  `piagents.composition`.
- `AgentDefinition` (`definition_file`), `discover` (`discovery`), `Roster`
  (`roster`): one definition file, the three layers read together, and what a
  caller may delegate to.
- `settled_answer` (`settle`): a one-shot run's answer, once its delegations are back.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from piagents.supervision.definition_file import AgentDefinition
    from piagents.supervision.discovery import discover
    from piagents.supervision.errors import SupervisionError
    from piagents.supervision.ports import SupervisionPorts
    from piagents.supervision.roster import Roster
    from piagents.supervision.settle import settled_answer
    from piagents.supervision.supervisor import Supervisor
    from piagents.supervision.tool import SupervisionTool

__all__ = [
    "AgentDefinition",
    "Roster",
    "SupervisionError",
    "SupervisionPorts",
    "SupervisionTool",
    "Supervisor",
    "discover",
    "settled_answer",
]

_DEFINED_IN = {
    "AgentDefinition": "definition_file",
    "discover": "discovery",
    "SupervisionError": "errors",
    "SupervisionPorts": "ports",
    "Roster": "roster",
    "settled_answer": "settle",
    "Supervisor": "supervisor",
    "SupervisionTool": "tool",
}


def __getattr__(name: str) -> Any:
    # Imported on first use, so importing one module of the package imports no other.
    if name not in _DEFINED_IN:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_DEFINED_IN[name]}"), name)
