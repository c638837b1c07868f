"""The `program` tool as SDK-CONTRACT.md's acceptance tests call it: turned on through
`Runtime(settings=...)`, called as the model would, optional parameters given as None."""

from __future__ import annotations

from pathlib import Path

import piagents
from piagents.testing import FunctionModel, ModelCall


async def test_the_contracts_calls_run_a_program_whose_agents_reach_the_route(
    home: Path, work: Path
) -> None:
    async def route(call: ModelCall) -> str:
        return f"{call.agent_name} answered"

    settings = {"defaultTools": ["+program"]}
    async with piagents.Runtime(home=home, model=FunctionModel(route), settings=settings) as rt:
        root = await rt.open_root(cwd=work)
        code = "w = agent(name='writer')\nreturn await w.send('hi')"
        ran = await root.call_tool(
            "program", {"action": "run", "code": code, "background": False, "timeout": None}
        )
        assert not ran.is_error, ran.text
        assert ran.text.endswith("Output:\nwriter answered")
        waited = await root.call_tool(
            "program", {"action": "wait", "target": None, "timeout": None}
        )
        assert (waited.is_error, waited.text) == (False, "No results.")
        listed = await root.call_tool("program", {"action": "list", "limit": None, "offset": None})
        assert (listed.is_error, listed.text) == (False, "No Programs.")
