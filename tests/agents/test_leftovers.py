"""What a runtime that stopped left open in a tree, when its root is loaded again: ended
`aborted` by a runtime (the Pi Agents rule), resumed by a worker taking it over."""

from __future__ import annotations

from agent_support import runtime

from piagents.ai.messages import AssistantMessage, ToolCall
from piagents.harness.interrupted import INTERRUPTED_TOOL_TEXT
from piagents.store.records import InputRecord, MessageEntry, new_id
from support import until


def _state(rt, sid: str) -> tuple[InputRecord, InputRecord]:  # type: ignore[no-untyped-def]
    from piagents.ai.messages import TextContent, UserMessage

    store = rt.store
    started = store.add_input(
        InputRecord(new_id(), sid, sid, None, "input", "followUp", "run the tests",
                    rendered="run the tests")
    )  # fmt: skip
    store.append(
        sid,
        [
            MessageEntry(UserMessage((TextContent("run the tests"),))),
            MessageEntry(
                AssistantMessage(
                    (ToolCall(name="bash", args={"command": "make test"}, id="c1"),),
                    stop_reason="toolUse",
                )
            ),
        ],
    )
    queued = store.add_input(
        InputRecord(new_id(), sid, sid, None, "input", "followUp", "then lint",
                    rendered="then lint")
    )  # fmt: skip
    return started, queued


async def _left_open(home, work, script) -> tuple[str, InputRecord, InputRecord]:  # type: ignore[no-untyped-def]
    """A root `cut`, closed, then left as `_state` says a killed process leaves it."""
    async with runtime(home, script) as rt:
        sid = (await rt.open_root(cwd=work, name="cut")).id
    async with runtime(home, script) as rt:
        started, queued = _state(rt, sid)
    return sid, started, queued


async def test_a_worker_resumes_an_interrupted_turn_without_running_its_tool_call_again(
    home, work, script
) -> None:
    seen = []

    def answer(call):  # type: ignore[no-untyped-def]
        seen.append([(m.role, m.text) for m in call.messages])
        return f"answered {len(seen)}"

    script.on("cut", answer)
    sid, started, queued = await _left_open(home, work, script)
    async with runtime(home, script) as rt:
        rt.wake_policy.resume = True
        await rt.open_root(session=sid)
        await until(lambda: not rt.store.inputs(recipient_ids=[sid], outstanding=True))
        ended = {i.id: (i.status, i.result) for i in rt.store.inputs(recipient_ids=[sid])}
        assert ended == {
            started.id: ("completed", "answered 1"),
            queued.id: ("completed", "answered 2"),
        }
        # The model was asked again from the last committed step: the call it had made
        # ended with an error result saying so, and the started input was not repeated.
        assert seen[0] == [
            ("user", "run the tests"),
            ("assistant", ""),
            ("toolResult", INTERRUPTED_TOOL_TEXT),
        ]
        assert seen[1][-1] == ("user", "then lint")
        texts = [e.message.text for e in rt.store.entries(sid) if isinstance(e, MessageEntry)]
        assert texts.count("run the tests") == 1


async def test_a_runtime_ends_what_a_stopped_runtime_left_open_as_aborted(
    home, work, script
) -> None:
    script.on("cut", lambda call: "never asked")
    sid, _, _ = await _left_open(home, work, script)
    async with runtime(home, script) as rt:
        await rt.open_root(session=sid)
        statuses = {i.status for i in rt.store.inputs(recipient_ids=[sid])}
        assert statuses == {"aborted"}


async def test_a_managed_agents_inputs_end_aborted_even_for_a_worker_supervision_recovers_it(
    home, work, script
) -> None:
    from piagents.store.records import SessionRecord

    script.on("lead", lambda call: "unused")
    async with runtime(home, script) as rt:
        lead = (await rt.open_root(cwd=work, name="lead")).id
    async with runtime(home, script) as rt:
        managed = new_id()
        rt.store.create_session(
            SessionRecord(
                id=managed, cwd=str(work), created=1, updated=1, name="m", owner_id=lead,
                root_id=lead, meta={"managed": {"definition": "reviewer"}},
            )
        )  # fmt: skip
        rt.store.add_input(InputRecord(new_id(), lead, managed, lead, "input", "followUp", "go"))
    async with runtime(home, script) as rt:
        rt.wake_policy.resume = True
        await rt.open_root(session=lead)
        [left] = rt.store.inputs(recipient_ids=[managed])
        assert (left.status, left.result) == ("aborted", "The input was aborted.")
