"""Run the UI on a runtime (not yet entered) and the root `open_root` opens in it."""

from __future__ import annotations

from piagents.runtime import Runtime
from piagents.tui.app import PiAgentsApp, RootOpener


async def run_app(runtime: Runtime, open_root: RootOpener) -> int:
    """Run the app until it exits; returns its exit code."""
    app = PiAgentsApp(runtime, open_root)
    result = await app.run_async()
    if result is not None:
        return result
    return app.return_code or 0
