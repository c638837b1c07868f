"""`ask_owner`: a managed agent's one question per assignment, blocking until its owner
replies (the reply arrives through `controls.reply`, or a worker's control message)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import msgspec

from piagents.ai.messages import now_ms
from piagents.harness.tools.base import ToolResult
from piagents.store.records import new_id
from piagents.supervision import texts
from piagents.supervision.host import Supervising
from piagents.supervision.ports import AgentHandle
from piagents.supervision.requests import AskOwnerRequest


async def ask_owner(
    sup: Supervising, agent: AgentHandle, req: AskOwnerRequest, turn_calls: Sequence[str]
) -> ToolResult:
    gens = sup.generations
    live = gens.of_agent(agent)
    if live is None:
        return ToolResult(texts.ASK_OWNER_NO_OWNER, None, True)
    if len(turn_calls) > 1:
        return ToolResult(texts.ASK_OWNER_NOT_ALONE, None, True)
    if live.gen.asked:
        return ToolResult(texts.ASK_OWNER_ALREADY_ASKED, None, True)
    message = sup.compose(agent, req.question, req.files, "ask_owner")
    ask_id = new_id()
    gen = msgspec.structs.replace(
        live.gen,
        asked=True,
        ask_id=ask_id,
        question=message.text,
        state="blocked",
        updated=now_ms(),
    )
    notice = texts.question_notification(
        agent=gen.label,
        definition=gen.definition,
        session=gen.session_id,
        request=gen.id,
        ask=ask_id,
        question=message.text,
    )
    future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    result = sup.ports.delivery.result_record(gen.owner_id, gen.session_id, gen.root_id, notice)
    if not gens.begin_ask(live, gen, result, future):
        return ToolResult(texts.ASK_OWNER_ENDED, None, True)
    try:
        answer = await future
    finally:
        gens.end_ask(live)
    return ToolResult(answer, {"ask": ask_id, "request": gen.id})
