"""The footer, driven with Pilot."""

from __future__ import annotations

import pytest
from tui_support import screen_text, started

import piagents
from piagents.tui.app import PiAgentsApp


async def test_the_footer_gives_the_embedded_models_own_context_window(home, work):
    from piagents.ai import local

    if not local.is_installed():
        pytest.skip("the `local` extra is not installed")
    # Only the model is named: nothing is asked of it, so it is never loaded.
    app = PiAgentsApp(piagents.Runtime(home=home, model=local.MODEL), lambda r: r.open_root(work))
    async with app.run_test(size=(120, 30)) as pilot:
        await started(pilot)
        footer = screen_text(app).splitlines()[-1]
        assert "0.0%/8.2k" in footer, footer
        assert footer.endswith("local/smollm2 • off")


async def test_the_footer_gives_the_window_a_declared_provider_says(home, work):
    settings = {
        "providers": {
            "myserver": {
                "api": "openai-completions",
                "baseUrl": "http://127.0.0.1:9/v1",
                "models": {"small": {"contextWindow": 4096}},
            }
        }
    }
    rt = piagents.Runtime(home=home, model="myserver/small", settings=settings)
    app = PiAgentsApp(rt, lambda r: r.open_root(work))
    async with app.run_test(size=(120, 30)) as pilot:
        await started(pilot)
        footer = screen_text(app).splitlines()[-1]
        assert "0.0%/4.1k" in footer, footer
