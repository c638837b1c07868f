"""The model-facing `program` tool for one caller: `run`, `wait`, `list`, `stop`.

Each call is checked into one request (`calls.parse`) and performed on the runtime's
`ProgramRunner`; the texts are `texts`' own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from piagents.harness.tools.base import Tool, ToolContext, ToolResult
from piagents.programs import calls, texts
from piagents.programs.addressing import resolve, short_ids
from piagents.programs.calls import List, Refused, Run, Stop, Wait
from piagents.programs.run_result import left_stopped
from piagents.programs.runner import ProgramRunner
from piagents.programs.wait_output import ProgramItem, render_program_wait
from piagents.store.records import ProgramRecord, new_id

if TYPE_CHECKING:
    from piagents.agent import Agent

NAME = "program"


class ProgramTool:
    """`program` for one calling Agent. Its Programs reach the caller's tools through
    `tools.*`; with `reachable` (`--program-only`: the caller is offered `program`
    alone) they reach those instead, and the description lists them."""

    name = NAME
    prompt_snippet = texts.PROMPT_SNIPPET
    prompt_guidelines: Sequence[str] = texts.PROMPT_GUIDELINES

    def __init__(
        self,
        runner: ProgramRunner,
        caller: Agent,
        reachable: Mapping[str, Tool] | None = None,
    ) -> None:
        self.runner = runner
        self.caller = caller
        self.reachable = reachable
        listed = [(t.name, t.prompt_snippet or t.description) for t in (reachable or {}).values()]
        self.description = texts.description(listed)
        self.parameters = calls.parameters()

    def is_poll(self, args: dict[str, Any], details: Any) -> bool:
        """A `wait` that found Programs still running: waiting again is no loop."""
        return (
            args.get("action") == "wait"
            and isinstance(details, dict)
            and bool(details.get("running"))
        )

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        request = calls.parse(args)
        if isinstance(request, Refused):
            return ToolResult(request.text, None, True)
        if isinstance(request, Run):
            return await self._run(request)
        if isinstance(request, Wait):
            return await self._wait(request)
        if isinstance(request, List):
            return self._list(request)
        return await self._stop(request)

    async def _run(self, request: Run) -> ToolResult:
        if request.background:
            live = self.runner.start(self.caller, request, self._tools)
            details = {"id": live.record.id}
            return ToolResult(texts.started(live.scope.short_id), details)
        ended = await self.runner.run_foreground(self.caller, request, self._tools)
        details = {"id": ended.id, "state": ended.state}
        return ToolResult(ended.result or "", details, ended.state != "completed")

    def _tools(self) -> Mapping[str, Tool]:
        """The tools a Program may call now (read at each call)."""
        return self.reachable if self.reachable is not None else self.caller.loop.tools

    async def _wait(self, request: Wait) -> ToolResult:
        me = self.caller.id
        everything = self.runner.programs(me)
        shorts = short_ids([p.id for p in everything])
        if request.targets is None:
            selected = [p for p in reversed(everything) if p.state == "running" or not p.returned]
        else:
            ids = [p.id for p in everything]
            selected_ids: list[str] = []
            for target in request.targets:
                found = resolve(target, ids, shorts)
                if isinstance(found, Refused):
                    return ToolResult(found.text, None, True)
                if found not in selected_ids:
                    selected_ids.append(found)
            by_id = {p.id: p for p in everything}
            selected = [by_id[i] for i in selected_ids]
        lives = [self.runner.live[p.id] for p in selected if p.id in self.runner.live]
        if lives:
            for live in lives:
                live.waiting += 1
            all_ended = asyncio.Event()

            async def watch() -> None:
                for live in lives:
                    await live.ended.wait()
                all_ended.set()

            watcher = asyncio.ensure_future(watch())
            try:
                async with self.runner.ports.yielded(self.caller):
                    await self.runner.ports.clock.wait_for(all_ended, request.timeout)
            finally:
                watcher.cancel()
                for live in lives:
                    live.waiting -= 1
        now = {p.id: p for p in self.runner.programs(me)}
        current = [now.get(p.id, p) for p in selected]
        items = [
            ProgramItem(p.id, shorts[p.id], p.state, _result_text(p))
            for p in current
            if p.state != "running"
        ]
        running = [shorts[p.id] for p in current if p.state == "running"]
        path = self.caller.loop.output_dir / f"program-wait-{new_id()}.txt"
        out = render_program_wait(items, running, full_output_path=str(path))
        if out.full_text is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(out.full_text, encoding="utf-8")
        self.runner.ports.store().mark_programs_returned(list(out.returned))
        details = {"returned": list(out.returned), "running": running}
        return ToolResult(out.text, details)

    def _list(self, request: List) -> ToolResult:
        everything = self.runner.programs(self.caller.id)
        shorts = short_ids([p.id for p in everything])
        background = [p for p in everything if p.background]
        page = background[request.offset : request.offset + request.limit]
        if not page:
            return ToolResult(texts.NO_PROGRAMS, {"programs": []})
        lines = [texts.list_entry(shorts[p.id], p.state) for p in page]
        remaining = len(background) - request.offset - len(page)
        if remaining > 0:
            lines.append(texts.more_results(remaining, request.offset + len(page)))
        details = {"programs": [{"id": p.id, "state": p.state} for p in page]}
        return ToolResult("\n".join(lines), details)

    async def _stop(self, request: Stop) -> ToolResult:
        everything = self.runner.programs(self.caller.id)
        shorts = short_ids([p.id for p in everything])
        found = resolve(request.target, [p.id for p in everything], shorts)
        if isinstance(found, Refused):
            return ToolResult(found.text, None, True)
        short = shorts[found]
        live = self.runner.live.get(found)
        if live is None:
            return ToolResult(texts.already_ended(short), {"id": found, "stopped": False})
        live.silent = True  # the caller hears of it in this result
        if not await self.runner.stop(live, texts.STOPPED_BY_CALLER):
            return ToolResult(texts.did_not_stop(short), {"id": found, "stopped": True}, True)
        return ToolResult(texts.stopped(short), {"id": found, "stopped": True})


def _result_text(program: ProgramRecord) -> str:
    if program.result is not None:
        return program.result
    return left_stopped(program.reason or texts.PROCESS_ENDED)
