"""The supervision face end to end, inline placement, with a scripted model."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import piagents
from piagents.store.records import GenerationRecord, MessageEntry
from piagents.supervision import texts
from piagents.testing import FunctionModel, Reply, ToolCall
from support import settled, until

SETTINGS = {"pi-agents": {"spawnPlacement": "inline", "abortTimeoutMs": 2000}}
RECORD_FIELDS = {
    "agent",
    "state",
    "available_actions",
    "workspace_id",
    "pane_id",
    "tab_id",
    "tab_label",
    "cwd",
    "pi_session_id",
    "pi_session_path",
    "owner_session_id",
    "agent_definition",
    "active_request_id",
    "last_activity_at",
    "stale",
    "inactive_ms",
}


class Script:
    """Routes model calls by agent: the lead (no name) just notes what arrives."""

    def __init__(self) -> None:
        self.by_agent: dict[str, Callable[[Any], Any]] = {}
        self.calls: list[tuple[str | None, str]] = []

    async def __call__(self, call: Any) -> Any:
        self.calls.append((call.agent_name, call.messages[-1].text))
        handler = self.by_agent.get(call.agent_name or "")
        if handler is None:
            return "noted"
        result = handler(call)
        if asyncio.iscoroutine(result):
            result = await result
        return result


def lead_texts(lead: Any) -> list[str]:
    return [
        e.message.text
        for e in lead.session.entries
        if isinstance(e, MessageEntry) and e.message.role == "user"
    ]


@pytest.fixture
def script() -> Script:
    return Script()


@pytest.fixture
async def rt(tmp_path: Path, script: Script) -> Any:
    async with piagents.Runtime(
        home=tmp_path / "home", model=FunctionModel(script), settings=SETTINGS
    ) as runtime:
        yield runtime


@pytest.fixture
async def lead(rt: Any, tmp_path: Path) -> Any:
    work = tmp_path / "work"
    work.mkdir()
    return await rt.open_root(cwd=work, agent_api="supervision")


async def agent(lead: Any, **args: Any) -> Any:
    return await lead.call_tool("agent", args)


def results_for(lead: Any, label: str) -> list[str]:
    return [t for t in lead_texts(lead) if t.startswith(f"Agent {label} ") and "status=" in t]


# ---- delegate and results ---------------------------------------------------------------


async def test_a_delegation_is_recorded_before_it_runs_and_reports_once(rt, lead, script):
    gate = asyncio.Event()

    async def worker(call: Any) -> str:
        await gate.wait()
        return "the answer is 42"

    script.by_agent["generalist-1"] = worker
    res = await agent(lead, action="delegate", definition="generalist", task="find the answer")
    assert not res.is_error, res.text
    assert res.text.startswith("Delegated: agent=generalist-1 definition=generalist session=")
    d = res.details
    assert (d["action"], d["agent"], d["definition"]) == ("delegate", "generalist-1", "generalist")
    [gen] = rt.store.generations(root_id=lead.id, live=True)
    assert (gen.id, gen.session_id, gen.task) == (d["request"], d["session"], "find the answer")
    assert d["startup"]["placement"] == "inline" and d["startup"]["pid"] > 0

    gate.set()
    await until(lambda: results_for(lead, "generalist-1"), "the result")
    [result] = results_for(lead, "generalist-1")
    assert result == (
        "Agent generalist-1 completed its assignment.\n"
        f"agent=generalist-1 definition=generalist session={gen.session_id} "
        f"request={gen.id} status=completed\n"
        "To continue this work later: "
        + json.dumps({"action": "continue", "session": gen.session_id, "task": "..."})
        + "\n\nFinal answer:\nthe answer is 42"
    )
    await until(lambda: gen.session_id not in rt.agents, "the agent cleaned up")
    ended = rt.store.get_generation(gen.id)
    assert (ended.outcome, ended.result) == ("completed", "the answer is 42")
    assert rt.store.get_session(gen.session_id) is not None  # kept for continue
    listed = await agent(lead, action="list")
    assert listed.details["agents"] == []
    await settled()
    assert len(results_for(lead, "generalist-1")) == 1


async def test_list_shows_the_roster_and_every_documented_record_field(rt, lead, script):
    gate = asyncio.Event()
    script.by_agent["scout-1"] = lambda call: gate.wait()
    await agent(lead, action="delegate", definition="scout", task="map it")
    await until(lambda: any(n == "scout-1" for n, _ in script.calls), "the scout runs")
    res = await agent(lead, action="list")
    names = [d["name"] for d in res.details["agent_definitions"]]
    assert names == ["generalist", "implementer", "researcher", "reviewer", "scout"]
    [record] = res.details["agents"]
    assert set(record) >= RECORD_FIELDS
    assert record["agent"] == "scout-1" and record["state"] == "working"
    assert record["available_actions"] == ["steer", "interrupt", "close", "inspect", "transcript"]
    assert record["owner_session_id"] == lead.id and record["tab_id"] == lead.id
    assert record["pi_session_path"].endswith("#" + record["pi_session_id"])
    assert "scout-1  working  actions=steer,interrupt,close,inspect,transcript" in res.text
    gate.set()


async def test_a_definition_naming_an_unknown_tool_is_a_warning_the_lead_and_the_ui_see(rt, lead):
    (rt.home / "agents").mkdir()
    path = rt.home / "agents" / "typo.md"
    path.write_text("---\nname: typo\ntools: [read, raed]\n---\nP.\n")
    res = await agent(lead, action="list")
    assert not res.is_error, res.text
    [warning] = res.details["definition_warnings"]
    assert warning.startswith(f"{path}: `tools`: unknown tool 'raed'; the tools are ")
    [problem] = rt.supervisor.definition_problems(lead.cwd)
    assert (problem.text, problem.severity) == (warning, "warning")


async def test_a_failed_start_is_rolled_back_and_reported_as_such(rt, lead, tmp_path):
    agents_dir = rt.home / "agents"
    agents_dir.mkdir()
    (agents_dir / "broken.md").write_text(
        "---\nname: broken\ndescription: d\nmodel: nosuch/model\n---\nBody.\n"
    )
    res = await agent(lead, action="delegate", definition="broken", task="x")
    assert res.is_error
    err = res.details["error"]
    assert err["category"] == "internal_failure" and err["rollbackOccurred"] is True
    [gen] = rt.store.generations(root_id=lead.id)
    assert gen.outcome == "failed"
    assert rt.store.generations(root_id=lead.id, live=True) == []


async def test_a_start_whose_rollback_fails_says_so(rt, lead, monkeypatch):
    from piagents.store.base import StoreError

    agents_dir = rt.home / "agents"
    agents_dir.mkdir()
    (agents_dir / "broken.md").write_text(
        "---\nname: broken\ndescription: d\nmodel: nosuch/model\n---\nBody.\n"
    )

    def refuse(*args, **kwargs):
        raise StoreError("the disk is full")

    monkeypatch.setattr(rt.store, "update_generation", refuse)
    res = await agent(lead, action="delegate", definition="broken", task="x")
    err = res.details["error"]
    assert (err["category"], err["rollbackOccurred"]) == ("rollback_failure", False)
    assert err["operation"] == "delegate"
    assert "could not be started" in err["message"]


# ---- ask_owner, reply, continue ------------------------------------------------------------


async def test_ask_owner_blocks_until_the_reply_then_the_result_and_a_continue(rt, lead, script):
    def worker(call: Any) -> Any:
        last = call.messages[-1]
        if last.role == "toolResult":
            return f"done with {last.text.splitlines()[-1]}"
        if "continue" in last.text:
            return f"continued after: {call.messages[0].text}"
        return Reply(tool_calls=[ToolCall(name="ask_owner", args={"question": "A or B?"})])

    script.by_agent["implementer-1"] = worker
    res = await agent(lead, action="delegate", definition="implementer", task="pick one")
    session = res.details["session"]
    await until(lambda: any("asks you a question" in t for t in lead_texts(lead)), "the question")
    question = next(t for t in lead_texts(lead) if "asks you a question" in t)
    assert question.startswith("Agent implementer-1 asks you a question and is blocked")
    assert question.endswith("Question:\nA or B?")
    listed = await agent(lead, action="list")
    [record] = listed.details["agents"]
    assert record["state"] == "blocked"
    assert record["available_actions"] == ["steer", "reply", "close", "inspect", "transcript"]
    busy = await agent(lead, action="interrupt", agent="implementer-1", message="stop")
    assert busy.details["error"]["category"] == "agent_busy"

    res = await agent(lead, action="reply", agent="implementer-1", message="B")
    assert res.text == "Replied to implementer-1: it continues its assignment with your answer."
    await until(lambda: results_for(lead, "implementer-1"), "the result")
    assert results_for(lead, "implementer-1")[0].endswith("Final answer:\ndone with B")
    # continued once it has gone offline (a moment after its result is delivered)
    await until(lambda: session not in rt.agents, "implementer-1 to go offline")

    again = await agent(lead, action="continue", session=session, task="please continue")
    assert not again.is_error, again.text
    assert again.text.startswith(
        f"Continued: agent=implementer-1 definition=implementer session={session} request="
    )
    await until(lambda: len(results_for(lead, "implementer-1")) == 2, "the second result")
    assert results_for(lead, "implementer-1")[1].endswith("continued after: pick one")
    gens = rt.store.generations(session_id=session)
    assert [g.kind for g in gens] == ["delegate", "continue"]
    assert gens[0].id != gens[1].id


async def test_one_question_per_assignment_asked_alone(rt, lead, script):
    answers: dict[int, str] = {}

    def worker(call: Any) -> Any:
        results = [
            m for m in call.messages if m.role == "toolResult" and m.tool_name == "ask_owner"
        ]
        turn = len(results)
        if turn:
            answers[turn] = results[-1].text
        if turn == 0:
            together = [
                ToolCall(name="ask_owner", args={"question": "q"}),
                ToolCall(name="ls", args={}),
            ]
            return Reply(tool_calls=together)
        if turn in (1, 2):
            return Reply(tool_calls=[ToolCall(name="ask_owner", args={"question": f"q{turn}"})])
        return "finished"

    script.by_agent["generalist-1"] = worker
    await agent(lead, action="delegate", definition="generalist", task="t")
    await until(lambda: any("asks you a question" in t for t in lead_texts(lead)), "a question")
    await agent(lead, action="reply", agent="generalist-1", message="yes")
    await until(lambda: results_for(lead, "generalist-1"), "the result")
    assert answers[1] == texts.ASK_OWNER_NOT_ALONE
    assert answers[2].endswith("Reply:\nyes")
    assert answers[3] == texts.ASK_OWNER_ALREADY_ASKED
    questions = [t for t in lead_texts(lead) if "asks you a question" in t]
    assert len(questions) == 1 and questions[0].endswith("Question:\nq1")


# ---- steer, interrupt, close ---------------------------------------------------------------


async def test_interrupt_cancels_the_operation_and_keeps_the_assignment(rt, lead, script):
    first_turn = asyncio.Event()

    async def worker(call: Any) -> str:
        if "different approach" in call.messages[-1].text:
            return "done the other way"
        first_turn.set()
        await asyncio.Event().wait()  # stuck until cancelled
        return "never"

    script.by_agent["generalist-1"] = worker
    res = await agent(lead, action="delegate", definition="generalist", task="slow way")
    request = res.details["request"]
    await first_turn.wait()
    res = await agent(
        lead, action="interrupt", agent="generalist-1", message="Try a different approach."
    )
    assert res.text.startswith("Interrupted generalist-1")
    await until(lambda: results_for(lead, "generalist-1"), "the result")
    [result] = results_for(lead, "generalist-1")
    assert f"request={request} status=completed" in result
    assert result.endswith("done the other way")
    assert (
        len(
            rt.store.generations(
                session_id=res.details["request"] and rt.store.get_generation(request).session_id
            )
        )
        == 1
    )


async def test_steer_joins_the_current_assignment(rt, lead, script):
    turn = asyncio.Event()
    release = asyncio.Event()

    async def worker(call: Any) -> Any:
        texts = [m.text for m in call.messages]
        if any("also check the docs" in t for t in texts):
            return "checked code and docs"
        turn.set()
        await release.wait()
        return Reply(tool_calls=[ToolCall(name="ls", args={})])

    script.by_agent["generalist-1"] = worker
    await agent(lead, action="delegate", definition="generalist", task="check the code")
    await turn.wait()
    res = await agent(lead, action="steer", agent="generalist-1", message="also check the docs")
    assert res.text.startswith("Steered generalist-1")
    release.set()
    await until(lambda: results_for(lead, "generalist-1"), "the result")
    assert results_for(lead, "generalist-1")[0].endswith("checked code and docs")


async def test_close_cascades_through_owned_agents_first(rt, lead, script):
    def reviewer(call: Any) -> Any:
        if call.messages[-1].role == "toolResult":
            return "waiting for the scout"
        return Reply(
            tool_calls=[
                ToolCall(
                    name="agent",
                    args={"action": "delegate", "definition": "scout", "task": "look"},
                )
            ]
        )

    script.by_agent["reviewer-1"] = reviewer
    script.by_agent["scout-1"] = lambda call: asyncio.Event().wait()
    await agent(lead, action="delegate", definition="reviewer", task="review")
    await until(lambda: any(n == "scout-1" for n, _ in script.calls), "the scout runs")
    listed = await agent(lead, action="list")
    states = {r["agent"]: (r["state"], r["available_actions"]) for r in listed.details["agents"]}
    assert states["scout-1"] == ("working", [])  # not the lead's to control
    await until(
        lambda: (
            rt.supervisor.observe(
                next(
                    g
                    for g in rt.store.generations(root_id=lead.id, live=True)
                    if g.label == "reviewer-1"
                )
            ).state
            == "blocked"
        ),
        "the reviewer waits on its scout",
    )
    res = await agent(lead, action="close", agent="reviewer-1")
    assert res.text.startswith("Closed reviewer-1. Its agents were closed first: scout-1.")
    assert res.details["cascaded"] == ["scout-1"]
    outcomes = {g.label: g.outcome for g in rt.store.generations(root_id=lead.id)}
    assert outcomes == {"reviewer-1": "closed", "scout-1": "closed"}
    assert not [t for t in lead_texts(lead) if "status=" in t]


# ---- errors -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "category"),
    [
        (
            {"action": "delegate", "definition": "scout", "task": "x", "model": "m"},
            "invalid_request",
        ),
        (
            {"action": "delegate", "definition": "scout", "task": "x", "timeoutMs": 5000},
            "invalid_request",
        ),
        ({"action": "delegate", "definition": "nosuch", "task": "x"}, "invalid_request"),
        (
            {"action": "delegate", "definition": "scout", "task": "x", "cwd": "missing"},
            "invalid_request",
        ),
        (
            {"action": "delegate", "definition": "scout", "task": "x", "files": ["nope.txt"]},
            "invalid_request",
        ),
        (
            {"action": "delegate", "definition": "scout", "task": "x", "cwd": "a\0b"},
            "invalid_request",
        ),
        (
            {"action": "delegate", "definition": "scout", "task": "x", "files": ["a\0b"]},
            "invalid_request",
        ),
        (
            {
                "action": "delegate",
                "definition": "scout",
                "task": "x",
                "files": ["/proc/self/environ"],
            },
            "invalid_request",
        ),
        ({"action": "continue", "session": "nosuch", "task": "x"}, "target_not_found"),
        ({"action": "steer", "agent": "nobody", "message": "x"}, "target_not_found"),
        ({"action": "close", "agent": "nobody"}, "target_not_found"),
        ({"action": "list", "agent": "x"}, "invalid_request"),
    ],
)
async def test_invalid_calls_fail_with_their_category(lead, args, category):
    res = await lead.call_tool("agent", args)
    assert res.is_error
    assert res.details["error"]["category"] == category
    assert res.text.startswith(f"Error [{category}] ")


async def test_a_live_label_cannot_be_taken_twice(rt, lead, script):
    script.by_agent["mine"] = lambda call: asyncio.Event().wait()
    ok = await agent(lead, action="delegate", definition="scout", task="a", label="mine")
    assert not ok.is_error
    res = await agent(lead, action="delegate", definition="scout", task="b", label="mine")
    assert res.details["error"]["category"] == "agent_label_exists"


async def test_a_label_shared_by_two_records_is_ambiguous(rt, lead, script):
    script.by_agent["twin"] = lambda call: asyncio.Event().wait()
    ok = await agent(lead, action="delegate", definition="scout", task="a", label="twin")
    [gen] = rt.store.generations(root_id=lead.id, live=True)
    rt.store.add_generation(
        GenerationRecord(
            id="other",
            label="twin",
            definition="scout",
            root_id=lead.id,
            owner_id=lead.id,
            session_id=ok.details["session"],
            cwd=gen.cwd,
            task="t",
            placement="inline",
            state="unknown",
        )
    )
    res = await agent(lead, action="steer", agent="twin", message="x")
    assert res.details["error"]["category"] == "target_ambiguous"


async def test_a_live_session_cannot_be_continued_and_the_lead_cannot_continue_itself(
    rt, lead, script
):
    script.by_agent["scout-1"] = lambda call: asyncio.Event().wait()
    res = await agent(lead, action="delegate", definition="scout", task="a")
    busy = await agent(lead, action="continue", session=res.details["session"], task="more")
    assert busy.details["error"]["category"] == "agent_busy"
    own = await agent(lead, action="continue", session=lead.id, task="more")
    assert own.details["error"]["category"] == "invalid_request"


# ---- inspect and transcript ---------------------------------------------------------------


async def test_inspect_shows_live_output_and_the_foreground_command(rt, lead, script):
    def worker(call: Any) -> Any:
        return Reply(
            text="Running the slow check now.",
            tool_calls=[ToolCall(name="bash", args={"command": "sleep 30"})],
        )

    script.by_agent["generalist-1"] = worker
    await agent(lead, action="delegate", definition="generalist", task="check")
    from piagents.harness.tools.foreground import foreground

    await until(lambda: any(foreground.of(a) for a in rt.agents), "the command runs")
    res = await agent(lead, action="inspect", agent="generalist-1")
    assert not res.is_error, res.text
    assert "Running the slow check now." in res.details["recent_output"]
    assert res.details["recent_output_truncated"] is False
    assert [p["command"] for p in res.details["processes"]] == ["sleep 30"]
    assert "- pid " in res.text and ": sleep 30" in res.text
    await agent(lead, action="close", agent="generalist-1")


async def test_transcript_reads_the_persisted_conversation(rt, lead, script):
    script.by_agent["generalist-1"] = lambda call: asyncio.Event().wait()
    await agent(lead, action="delegate", definition="generalist", task="the task text")
    await until(lambda: any(n == "generalist-1" for n, _ in script.calls), "it runs")
    res = await agent(lead, action="transcript", agent="generalist-1")
    assert not res.is_error, res.text
    assert "the task text" in res.text
    assert res.details["transcript_truncated"] is False


# ---- context retirement --------------------------------------------------------------------


async def test_a_full_context_retires_the_agent_which_then_cannot_be_continued(tmp_path, script):
    settings = {"pi-agents": {"spawnPlacement": "inline"}, "compaction": {"reserveTokens": 127990}}
    async with piagents.Runtime(
        home=tmp_path / "home", model=FunctionModel(script), settings=settings
    ) as rt:
        lead = await rt.open_root(cwd=tmp_path, agent_api="supervision")

        def worker(call: Any) -> str:
            if "being retired" in call.messages[-1].text:
                return "handoff: half done"
            return "never"

        script.by_agent["generalist-1"] = worker
        res = await agent(lead, action="delegate", definition="generalist", task="big " * 100)
        await until(lambda: results_for(lead, "generalist-1"), "the result")
        [result] = results_for(lead, "generalist-1")
        assert "status=retired" in result and result.endswith("Handoff:\nhandoff: half done")
        session = res.details["session"]
        again = await agent(lead, action="continue", session=session, task="more")
        assert again.details["error"]["category"] == "invalid_request"
        fork = await agent(lead, action="delegate", definition="scout", task="x", fork=session)
        assert fork.details["error"]["category"] == "invalid_request"


# ---- recovery ------------------------------------------------------------------------------

LEAD_SCRIPT = """
import asyncio, sys
import piagents
from piagents.testing import FunctionModel

async def route(call):
    if call.agent_name:
        await asyncio.Event().wait()
    return "noted"

async def main():
    settings = {"pi-agents": {"spawnPlacement": "inline"}}
    model = FunctionModel(route)
    async with piagents.Runtime(home=sys.argv[1], model=model, settings=settings) as rt:
        lead = await rt.open_root(cwd=sys.argv[2], agent_api="supervision")
        res = await lead.call_tool("agent", {"action": "delegate", "definition": "scout",
                                             "task": "look around"})
        assert not res.is_error, res.text
        while not rt.store.entries(res.details["session"]):
            await asyncio.sleep(0.01)  # polling for the scout's first entry
        print(lead.id, flush=True)
        await asyncio.Event().wait()

asyncio.run(main())
"""


async def test_a_killed_lead_finds_its_inline_generation_lost_and_reports_it_once(tmp_path, script):
    import subprocess
    import sys

    home = tmp_path / "home"
    proc = subprocess.Popen(
        [sys.executable, "-c", LEAD_SCRIPT, str(home), str(tmp_path)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        lead_id = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), 30)
    finally:
        proc.kill()  # SIGKILL: no chance to record anything
        proc.wait()
    lead_id = lead_id.strip()
    assert lead_id

    async with piagents.Runtime(home=home, model=FunctionModel(script), settings=SETTINGS) as rt:
        lead = await rt.open_root(session=lead_id)
        listed = await agent(lead, action="list")
        [record] = listed.details["agents"]
        assert (record["agent"], record["state"]) == ("scout-1", "lost")
        assert record["available_actions"] == ["close", "transcript"]
        await until(lambda: results_for(lead, "scout-1"), "the lost result")
        assert "status=lost" in results_for(lead, "scout-1")[0]
        transcript = await agent(lead, action="transcript", agent="scout-1")
        assert "look around" in transcript.text
        closed = await agent(lead, action="close", agent="scout-1")
        assert closed.text.startswith("Closed scout-1.")
        assert (await agent(lead, action="list")).details["agents"] == []

    async with piagents.Runtime(home=home, model=FunctionModel(script), settings=SETTINGS) as rt:
        lead = await rt.open_root(session=lead_id)
        await settled()
        assert len(results_for(lead, "scout-1")) == 1
