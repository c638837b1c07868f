"""A Program's Agents go through the ProgramAgents port: made at once, sent inputs
concurrently, closed when the Program ends, and work that does not stop within the
cleanup timeout reported with the cleanup error."""

import asyncio

from program_support import runtime

from piagents.programs import texts
from piagents.programs.calls import Run
from piagents.programs.ports import Closed
from piagents.programs.runner import ProgramRunner
from piagents.programs.script_api import ToolError
from support import until


class EchoAgents:
    """Agents that answer each input with its text upper-cased (in-test, over the port)."""

    def __init__(self, abandoned=()):
        self.made = []
        self.closed = []
        self.abandoned = tuple(abandoned)
        self.both_sent = asyncio.Event()
        self.sending = 0

    def create(self, scope, options):
        name = options.get("name") or f"agent-{len(self.made) + 1}"
        self.made.append((scope.program_id, name))
        return f"id-{name}", name

    async def send(self, scope, agent_id, message, deliver_as, schema):
        if message == "fail":
            raise ToolError(f"the input to {agent_id} failed")
        self.sending += 1
        if self.sending == 2:
            self.both_sent.set()
        await self.both_sent.wait()  # both sends run at once, or this never returns
        return message.upper()

    async def abort(self, scope, agent_id):
        pass

    async def close(self, scope, timeout):
        self.closed.append((scope.program_id, timeout))
        return Closed(self.abandoned)


def runner_for(rt, agents):
    return ProgramRunner(rt.programs.ports, agents)


async def test_agents_of_a_program_answer_gathered_sends_and_are_closed_when_it_ends(home, work):
    agents = EchoAgents()
    code = (
        "a = agent(name='a')\n"
        "b = agent()\n"
        "answers = await asyncio.gather(a.send('one'), b.send('two'))\n"
        "return [a.id, b.name, answers]"
    )
    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)
        runner = runner_for(rt, agents)
        ended = await runner.run_foreground(root, Run(code), lambda: root.loop.tools)
        await runner.close()
    assert ended.state == "completed"
    assert ended.result.endswith('Output:\n["id-a", "agent-2", ["ONE", "TWO"]]')
    assert agents.made == [(ended.id, "a"), (ended.id, "agent-2")]
    assert agents.closed == [(ended.id, 10.0)]  # the abort timeout, 10 s by default


async def test_a_failed_send_raises_in_the_script_at_its_line(home, work):
    code = "w = agent(name='w')\nawait w.send('fail')"
    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)
        runner = runner_for(rt, EchoAgents())
        ended = await runner.run_foreground(root, Run(code), lambda: root.loop.tools)
        await runner.close()
    assert ended.state == "failed"
    assert "line 2" in ended.result
    assert "ToolError: the input to id-w failed" in ended.result


async def test_work_that_did_not_stop_ends_the_result_with_the_cleanup_error(home, work):
    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)
        runner = runner_for(rt, EchoAgents(abandoned=["id-w"]))
        ended = await runner.run_foreground(
            root, Run("agent(name='w')\nreturn 1"), lambda: root.loop.tools
        )
        await runner.close()
    assert ended.state == "completed"
    assert ended.result.endswith(f"Output:\n1\n\n{texts.CLEANUP_ERROR}")


async def test_a_program_without_agents_closes_none(home, work):
    agents = EchoAgents()
    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)
        runner = runner_for(rt, agents)
        await runner.run_foreground(root, Run("return 1"), lambda: root.loop.tools)
        await runner.close()
    assert agents.closed == []


class StuckAgents(EchoAgents):
    """Agents whose closing does not end until the test lets it."""

    def __init__(self):
        super().__init__()
        self.release = asyncio.Event()

    async def close(self, scope, timeout):
        await self.release.wait()
        return Closed(("id-w",))


async def test_stop_says_when_a_program_did_not_stop_within_the_timeout(home, work):
    from program_support import program

    from piagents.programs.tool import ProgramTool

    agents = StuckAgents()
    settings = {"pi-agents": {"abortTimeoutMs": 100}}
    async with runtime(home, settings=settings) as rt:
        root = await rt.open_root(cwd=work)
        runner = runner_for(rt, agents)
        tool = ProgramTool(runner, root)
        root.loop.tools["program"] = tool
        code = "agent(name='w')\nwhile True:\n    pass"
        pid = (await program(root, action="run", code=code, background=True)).details["id"]
        short = tool.runner.short_id(root.id, pid)
        await until(lambda: agents.made, "the Program made its Agent")
        stopped = await program(root, action="stop", target=short)
        agents.release.set()
        await until(lambda: rt.store.get_program(pid).state != "running")
        await runner.close()
        record = rt.store.get_program(pid)
    assert stopped.is_error
    assert stopped.text == (
        f"Program {short} did not stop within the timeout and may still be running."
    )
    assert record.state == "stopped"
    assert record.result.endswith(f"No tool calls were made.\n\n{texts.CLEANUP_ERROR}")


async def test_tool_calls_still_running_when_a_program_stops_are_listed_as_cancelled(home, work):
    from program_support import program, shorts

    hold = "while [ ! -f go ]; do sleep 0.02; done"
    code = f"await tools.ls(path='.')\nawait tools.bash(command={hold!r})"
    (work / "go").unlink(missing_ok=True)
    async with runtime(home) as rt:
        root = await rt.open_root(cwd=work)
        pid = (await program(root, action="run", code=code, background=True)).details["id"]
        await until(lambda: [c.name for c in rt.programs.live[pid].host.calls] == ["ls", "bash"])
        await program(root, action="stop", target=shorts(rt, root)[pid])
        record = rt.store.get_program(pid)
    assert record.result.endswith(
        "Tool calls made before the failure (they are not undone): ls (ok), bash (cancelled)"
    )
