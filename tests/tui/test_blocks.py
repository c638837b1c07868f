"""How the blocks of a transcript read on screen (driven with Pilot)."""

from __future__ import annotations

from tui_support import make_app, runtime, screen_text, started, submit, until

from piagents.ai.messages import ToolResultMessage
from piagents.store.records import MessageEntry
from piagents.testing import Reply, ToolCall
from piagents.tui.app import PiAgentsApp
from piagents.tui.blocks import ManagedMessageBlock, UserBlock


async def test_wait_results_read_as_a_block_per_agent_with_the_answer_as_markdown(
    home, work, script
):
    def root(call):
        called = [
            c.args["action"] for m in call.messages if m.role == "assistant" for c in m.tool_calls
        ]
        if "spawn" not in called:
            spawns = [
                ToolCall("agent", {"action": "spawn", "name": n, "message": "go"})
                for n in ("poet", "chef")
            ]
            return Reply(tool_calls=spawns)
        if "wait" not in called:
            return Reply(tool_calls=[ToolCall("agent", {"action": "wait"})])
        return "Both answered."

    script.on(None, root)
    script.on("poet", lambda call: "Waves fold on sand,\nsalt wind hums.")
    script.on("chef", lambda call: "**Pasta**\nRisotto")
    app = make_app(home, work, script)
    async with app.run_test(size=(100, 40)) as pilot:
        await started(pilot)
        await submit(pilot, "ask them")
        await until(pilot, lambda: "Both answered." in screen_text(app), what="the answer")
        ids = app.runtime.coordinator.short_map(app.root.session.record)
        poet, chef = (
            next(a for a in app.runtime.agents.values() if a.name == n) for n in ("poet", "chef")
        )
        text = screen_text(app)
        assert "<agent-result" not in text and "</agent-result>" not in text
        lines = [line.strip() for line in text.splitlines()]
        at = lines.index(f"poet ({ids[poet.id]})  completed")
        assert lines[at + 1 : at + 3] == ["Waves fold on sand,", "salt wind hums."]
        at = lines.index(f"chef ({ids[chef.id]})  completed")
        assert lines[at + 1 : at + 3] == ["Pasta", "Risotto"]
        # The model read the spec's text, unchanged.
        [waited] = [
            e.message
            for e in app.root.session.entries
            if isinstance(e, MessageEntry)
            and isinstance(e.message, ToolResultMessage)
            and e.message.details.get("pending") is not None
        ]
        assert waited.text.startswith(f'<agent-result name="poet" id="{ids[poet.id]}"')


async def test_a_managed_agents_result_reads_as_a_block_with_its_status_and_answer(
    home, work, script
):
    def lead(call):
        called = [
            c.args["action"] for m in call.messages if m.role == "assistant" for c in m.tool_calls
        ]
        if "delegate" not in called:
            task = {"action": "delegate", "definition": "generalist", "task": "a haiku"}
            return Reply(tool_calls=[ToolCall("agent", task)])
        return "Delegated."

    script.on(None, lead)
    script.on("*", lambda call: "Waves fold on sand,\nsalt wind **hums**.")
    rt = runtime(home, script, spawnPlacement="inline")
    app = PiAgentsApp(rt, lambda r: r.open_root(cwd=work, agent_api="supervision"))
    async with app.run_test(size=(100, 40)) as pilot:
        await started(pilot)
        await submit(pilot, "haiku please")
        await until(pilot, lambda: app.query(ManagedMessageBlock), what="the result")
        await pilot.pause()
        lines = [line.strip() for line in screen_text(app).splitlines()]
        at = lines.index("▌ generalist-1 (generalist)  completed")
        assert lines[at + 1 : at + 3] == ["▌ Waves fold on sand,", "▌ salt wind hums."]
        assert lines[at + 3].startswith("▌ session ")
        assert "To continue this work later" not in screen_text(app)
        assert len(app.query(UserBlock)) == 1  # only the user's own input


async def test_an_answer_keeps_its_line_breaks_as_the_print_mode_prints_them(home, work):
    app = make_app(home, work, lambda call: "Roses are red,\nthe sea is blue,\n**sugar** is sweet.")
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await submit(pilot, "a poem")
        await until(pilot, lambda: "sweet." in screen_text(app), what="the answer")
        lines = [line.strip() for line in screen_text(app).splitlines()]
        assert lines[lines.index("Roses are red,") + 1 : lines.index("Roses are red,") + 3] == [
            "the sea is blue,",
            "sugar is sweet.",
        ]
