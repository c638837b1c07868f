"""/thinking, and a level given at startup, on a model that has no thinking levels."""

from __future__ import annotations

import pytest
from tui_support import screen_text, started, submit, type_text, until

import piagents
from piagents.ai import local
from piagents.testing import FunctionModel
from piagents.tui.app import PiAgentsApp
from piagents.tui.blocks import Notice

pytestmark = pytest.mark.skipif(not local.is_installed(), reason="the `local` extra is missing")


def local_app(home, work, thinking=None) -> PiAgentsApp:
    # The embedded model is only named: nothing is asked of it, so it is never loaded.
    rt = piagents.Runtime(home=home, model=local.MODEL, thinking=thinking)
    return PiAgentsApp(rt, lambda r: r.open_root(work))


async def test_slash_thinking_says_the_model_has_no_levels_and_keeps_thinking_off(home, work):
    app = local_app(home, work)
    async with app.run_test(size=(120, 30)) as pilot:
        await started(pilot)
        await submit(pilot, "/thinking high")
        await until(pilot, lambda: "no thinking levels" in screen_text(app), what="the notice")
        assert "local/smollm2 has no thinking levels; thinking stays off." in screen_text(app)
        assert app.root.thinking == "off"
        assert app.runtime.store.get_session(app.root.id).thinking == "off"
        await submit(pilot, "/thinking")
        await until(pilot, lambda: "Thinking: off (local/smollm2" in screen_text(app))
        assert "Thinking: off (local/smollm2 has no thinking levels)" in screen_text(app)


async def test_a_level_given_at_startup_to_a_model_without_levels_is_called_out(home, work):
    app = local_app(home, work, thinking="high")
    async with app.run_test(size=(120, 30)) as pilot:
        await started(pilot)
        texts = [str(n.render()) for n in app.transcript.query(Notice)]
        assert (
            "Warning: local/smollm2 has no thinking levels: thinking high has no effect." in texts
        )


async def test_thinking_offers_only_off_and_switching_to_such_a_model_says_so(home, work, script):
    rt = piagents.Runtime(home=home, model=FunctionModel(script), thinking="high")
    app = PiAgentsApp(rt, lambda r: r.open_root(work))
    async with app.run_test(size=(120, 30)) as pilot:
        await started(pilot)
        await submit(pilot, f"/model {local.MODEL}")
        await until(pilot, lambda: str(app.root.model) == local.MODEL, what="the switch")
        await until(pilot, lambda: "has no effect" in screen_text(app), what="the note")
        assert (
            "Model: local/smollm2 (thinking high). local/smollm2 has no thinking levels: "
            "thinking high has no effect."
        ) in " ".join(screen_text(app).split())
        await pilot.press("escape")
        await type_text(pilot, "/thinking ")
        await until(pilot, lambda: app.completion_list.items, what="the completions")
        assert [c.value for c in app.completion_list.items] == ["/thinking off"]
