"""`delegate(fork=…)` and `continue` reach only sessions the caller may read and owns."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import piagents
from piagents.testing import FunctionModel
from support import until

SETTINGS = {"pi-agents": {"spawnPlacement": "inline", "abortTimeoutMs": 2000}}


class Script:
    """Answers by agent name; an agent without a handler answers "done"."""

    def __init__(self) -> None:
        self.by_agent: dict[str, Callable[[Any], Any]] = {}

    async def __call__(self, call: Any) -> Any:
        handler = self.by_agent.get(call.agent_name or "")
        if handler is None:
            return "done"
        result = handler(call)
        return await result if asyncio.iscoroutine(result) else result


@pytest.fixture
def script() -> Script:
    return Script()


@pytest.fixture
async def rt(home: Path, script: Script) -> Any:
    async with piagents.Runtime(home=home, model=FunctionModel(script), settings=SETTINGS) as r:
        yield r


async def call(who: Any, **args: Any) -> Any:
    return await who.call_tool("agent", args)


def at_rest(rt: Any, session: str) -> bool:
    """Whether the session's generation has ended and its Agent has gone offline: it can
    be continued (the generation ends a moment before the Agent is unloaded)."""
    return session not in rt.agents and not rt.store.generations(session_id=session, live=True)


async def finished_session(rt: Any, lead: Any, label: str) -> str:
    """The session of a scout the lead delegated to, once its result is in."""
    res = await call(lead, action="delegate", definition="scout", task="look", label=label)
    assert not res.is_error, res.text
    session = str(res.details["session"])
    await until(lambda: at_rest(rt, session), f"{label} to end and go offline")
    return session


async def live_reviewer(rt: Any, lead: Any, script: Script) -> Any:
    """A delegating agent (a reviewer) of `lead`, waiting, as its Agent."""
    script.by_agent["reviewer-1"] = lambda call: asyncio.Event().wait()
    res = await call(lead, action="delegate", definition="reviewer", task="review")
    assert not res.is_error, res.text
    await until(lambda: res.details["session"] in rt.agents)
    return rt.agents[res.details["session"]]


def refused(res: Any, operation: str) -> str:
    assert res.is_error, res.text
    error = res.details["error"]
    assert (error["category"], error["operation"]) == ("invalid_request", operation)
    return str(error["message"])


async def test_a_lead_cannot_fork_another_leads_conversation(rt: Any, work: Path) -> None:
    lead = await rt.open_root(cwd=work, agent_api="supervision")
    other = await rt.open_root(cwd=work, agent_api="supervision")
    theirs = await finished_session(rt, other, "theirs")
    for source in (other.id, theirs):
        res = await call(lead, action="delegate", definition="scout", task="x", fork=source)
        message = refused(res, "delegate")
        assert message == (
            f"Session {source} is neither this lead's session nor one of its agents'; "
            "only those can be forked."
        )
    assert [g.label for g in rt.store.generations(root_id=lead.id)] == []  # nothing made


async def test_a_lead_may_fork_its_own_session_and_its_agents(rt: Any, work: Path) -> None:
    lead = await rt.open_root(cwd=work, agent_api="supervision")
    mine = await finished_session(rt, lead, "mine")
    for source in (lead.id, mine):
        res = await call(lead, action="delegate", definition="scout", task="x", fork=source)
        assert not res.is_error, res.text


async def test_a_lead_cannot_continue_another_leads_agent(rt: Any, work: Path) -> None:
    lead = await rt.open_root(cwd=work, agent_api="supervision")
    other = await rt.open_root(cwd=work, agent_api="supervision")
    theirs = await finished_session(rt, other, "theirs")
    res = await call(lead, action="continue", session=theirs, task="more")
    assert refused(res, "continue") == f"Session {theirs} does not belong to this lead's agents."


async def test_a_delegating_agent_cannot_fork_its_lead_or_continue_the_leads_agent(
    rt: Any, work: Path, script: Script
) -> None:
    lead = await rt.open_root(cwd=work, agent_api="supervision")
    leads_scout = await finished_session(rt, lead, "leads-scout")
    reviewer = await live_reviewer(rt, lead, script)
    for source in (lead.id, leads_scout):
        res = await call(reviewer, action="delegate", definition="scout", task="x", fork=source)
        assert refused(res, "delegate") == (
            f"Session {source} is neither this agent's session nor one of its own agents'; "
            "only those can be forked."
        )
    res = await call(reviewer, action="continue", session=leads_scout, task="more")
    assert refused(res, "continue") == (
        f"Session {leads_scout} does not belong to this agent's own agents."
    )


async def test_an_agent_may_be_continued_the_moment_its_result_is_recorded(
    rt: Any, work: Path
) -> None:
    """The lead may read the result and continue at once, while the agent of the ended
    generation is still going offline: the continue waits for it instead of answering
    `agent_busy`."""
    from piagents.events import GenerationChanged

    lead = await rt.open_root(cwd=work, agent_api="supervision")
    continued: list[asyncio.Task[Any]] = []

    def on_event(event: Any) -> None:
        # Called inside the commit of the generation's end, before its agent is taken
        # offline: a continue started now meets the agent still loaded.
        ended = isinstance(event, GenerationChanged) and event.state == "ended"
        if ended and event.label == "s1" and not continued:
            assert event.session_id in rt.agents
            again = call(lead, action="continue", session=event.session_id, task="more")
            continued.append(asyncio.ensure_future(again))

    rt.subscribe(on_event)
    res = await call(lead, action="delegate", definition="scout", task="look", label="s1")
    assert not res.is_error, res.text
    await until(lambda: continued, "the generation to end")
    again = await continued[0]
    assert not again.is_error, again.text
    assert again.details["session"] == res.details["session"]


async def test_a_delegating_agent_may_fork_itself_and_continue_its_own_agent(
    rt: Any, work: Path, script: Script
) -> None:
    lead = await rt.open_root(cwd=work, agent_api="supervision")
    reviewer = await live_reviewer(rt, lead, script)
    own = await call(reviewer, action="delegate", definition="scout", task="x", fork=reviewer.id)
    assert not own.is_error, own.text
    session = own.details["session"]
    await until(lambda: at_rest(rt, session), "the reviewer's scout to end and go offline")
    again = await call(reviewer, action="continue", session=session, task="more")
    assert not again.is_error, again.text
