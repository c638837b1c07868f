"""The shell commands each Agent is running right now, for `inspect`.

The bash tool registers a command while its process runs; supervision reads
the registry to show an agent's foreground processes (pid and command).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


class ForegroundProcesses:
    def __init__(self) -> None:
        self._running: dict[str, dict[int, str]] = {}

    @contextmanager
    def running(self, agent_id: str, pid: int, command: str) -> Iterator[None]:
        self._running.setdefault(agent_id, {})[pid] = command
        try:
            yield
        finally:
            procs = self._running.get(agent_id, {})
            procs.pop(pid, None)
            if not procs:
                self._running.pop(agent_id, None)

    def of(self, agent_id: str) -> list[tuple[int, str]]:
        """(pid, command) of the agent's running commands, oldest first."""
        return sorted(self._running.get(agent_id, {}).items())


foreground = ForegroundProcesses()
