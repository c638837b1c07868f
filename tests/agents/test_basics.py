"""The `agent` tool through the SDK contract, with the faux model."""

import piagents
from piagents.testing import FunctionModel


def last_user_text(call):
    return [m for m in call.messages if m.role == "user"][-1].text


async def test_spawn_starts_an_owned_agent_and_wait_returns_its_answer_alone(home, work, script):
    script.on("w", lambda call: "the answer")
    async with piagents.Runtime(home=home, model=FunctionModel(script)) as rt:
        root = await rt.open_root(cwd=work)
        res = await root.call_tool("agent", {"action": "spawn", "name": "w", "message": "hi"})
        assert not res.is_error, res.text
        child_id = res.details["id"]
        short = child_id[:8]
        assert res.text == f"Agent w ({short}) started."
        assert res.details == {"id": child_id, "name": "w", "queued": False}
        waited = await root.call_tool("agent", {"action": "wait", "target": "w"})
        assert waited.text == "the answer"
        assert waited.details == {
            "results": [
                {
                    "id": child_id,
                    "name": "w",
                    "state": "completed",
                    "history": False,
                    "result": "the answer",
                }
            ],
            "pending": [],
        }
        again = await root.call_tool("agent", {"action": "wait"})
        assert again.text == "No results."


async def test_the_child_sees_its_first_input_wrapped_with_its_owner(home, work, script):
    seen = []
    script.on("w", lambda call: seen.append(last_user_text(call)) or "ok")
    async with piagents.Runtime(home=home, model=FunctionModel(script)) as rt:
        root = await rt.open_root(cwd=work, name="boss")
        await root.call_tool("agent", {"action": "spawn", "name": "w", "message": "do it"})
        await root.call_tool("agent", {"action": "wait", "target": "w"})
    assert seen == [f'<agent-message from="boss" id="{root.id[:8]}">\ndo it\n</agent-message>']


async def test_an_unnamed_root_is_shown_by_id_alone(home, work, script):
    seen = []
    script.on("w", lambda call: seen.append(last_user_text(call)) or "ok")
    async with piagents.Runtime(home=home, model=FunctionModel(script)) as rt:
        root = await rt.open_root(cwd=work)
        await root.call_tool("agent", {"action": "spawn", "name": "w", "message": "do it"})
        await root.call_tool("agent", {"action": "wait", "target": "w"})
    assert seen == [f'<agent-message id="{root.id[:8]}">\ndo it\n</agent-message>']
