"""Run the UI on a host: the runtime (not yet entered) and the root it opens there."""

from __future__ import annotations

from piagents.hosting import RuntimeHost
from piagents.tui.app import PiAgentsApp


async def run_app(host: RuntimeHost) -> int:
    """Run the app until it exits; returns its exit code."""
    app = PiAgentsApp(host)
    result = await app.run_async()
    if result is not None:
        return result
    return app.return_code or 0
