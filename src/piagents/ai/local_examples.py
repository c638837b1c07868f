"""The worked turns the embedded model is shown before the conversation.

A 135M model copies patterns far better than it follows instructions, so each tool set
gets examples of the replies it needs, and never another's: the `agent` tool has two
faces with the same name (pi-agents' spawn/send/wait, and the supervision face's
delegate/continue/...), told apart by the actions their schema offers. Shown the other
face's examples, the model answers with their made-up IDs ("spawn: 0a1b2c3d"). With
the `program` tool offered, its own examples are shown instead (a Program makes the
Agents).

The tool and result texts copy the tools' own (piagents.agents.texts,
piagents.supervision.texts; tests keep them equal; a Program's result is built by
piagents.programs.texts itself): the model must see here exactly what it will see for
real. The choices were measured (bench/RESULTS.md).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from piagents.ai.messages import (
    AssistantMessage,
    Message,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from piagents.ai.provider import ToolSpec
from piagents.programs import texts as program_texts

Face: TypeAlias = Literal["agents", "supervision", "program", "none"]


def face(tools: Sequence[ToolSpec]) -> Face:
    """Whose examples are shown: "program" when the `program` tool is offered (its
    Programs make the Agents), else the face of the `agent` tool (`agent_face`)."""
    if any(t.name == "program" and "run" in _actions(t) for t in tools):
        return "program"
    return agent_face(tools)


def agent_face(tools: Sequence[ToolSpec]) -> Face:
    """Which face of the `agent` tool is offered, read from its actions; "none" when there
    is no `agent` tool, or one of neither shape."""
    tool = next((t for t in tools if t.name == "agent"), None)
    if tool is None:
        return "none"
    actions = _actions(tool)
    if {"spawn", "wait"} <= actions:
        return "agents"
    if "delegate" in actions:
        return "supervision"
    return "none"


def _actions(tool: ToolSpec) -> set[str]:
    action = tool.parameters.get("properties", {}).get("action", {})
    return set(action.get("enum", ())) if isinstance(action, dict) else set()


def examples(tools: Sequence[ToolSpec]) -> list[Message]:
    """Questions answered in prose and, when the `program` tool or an `agent` tool is
    offered, the pattern its face needs."""
    shown = face(tools)
    first = _question("What is two plus two?", "Two plus two is four.", "77aa88bb")
    last = _question("Write one sentence about rain.", "Rain taps softly on the roof.", "3c4d5e6f")
    if shown == "program":
        return _programs()
    if shown == "supervision":
        # Measured: the delegations last (P(call) 0.78 for the README's request), not
        # between the questions (0.18); a lead asked a question still answers (P 0.31).
        return first + last + _supervision()
    if shown == "none":
        return first + last
    # The order was measured: the model leans towards whatever example came last. With a
    # question first and last and the delegations between, a root asked to delegate calls
    # the tool (p ~0.9) and an Agent asked a question answers it (p ~0.97).
    return (
        first
        + _spawn_and_wait(
            [
                ("fox", "Say a word that rhymes with cat", "Hat.", "0a1b2c3d"),
                ("owl", "Name a colour", "Blue.", "4e5f6a7b"),
            ]
        )
        + _spawn_and_wait(
            [
                ("ant", "Name a planet", "Mars.", "1b2c3d4e"),
                ("bee", "Name a fruit", "Apple.", "5f6a7b8c"),
                ("cat", "Name a month", "May.", "9d0e1f2a"),
            ],
            finished=[1, 0, 2],  # results come back as Agents finish, not as they started
        )
        + last
    )


# ---- the agents face: spawn and wait ---------------------------------------------------


def _spawn_and_wait(
    agents: list[tuple[str, str, str, str]], finished: list[int] | None = None
) -> list[Message]:
    """One request to ask Agents (name, message, answer, short ID) in parallel, and the reply
    pattern that serves it: spawn each and wait in one reply, then report each answer on a
    line of its own (`poet said: ...`), in the order `wait` returned them (`finished`,
    indexes into `agents`)."""
    done = [agents[i] for i in finished] if finished else agents
    count = {2: "two", 3: "three"}[len(agents)]
    asks = ", ".join(f"one named {name} with the message '{msg}'" for name, msg, _, _ in agents)
    request = (
        f"Ask {count} Agents in parallel: {asks}. Wait for all of them, then tell me what "
        "they said."
    )
    calls = [
        ToolCall("agent", {"action": "spawn", "name": name, "message": msg}, f"ex_{id_}")
        for name, msg, _, id_ in agents
    ]
    calls.append(ToolCall("agent", {"action": "wait"}, "ex_wait"))
    results: list[Message] = [
        _result(f"ex_{id_}", f"Agent {name} ({id_}) started.") for name, _, _, id_ in agents
    ]
    results.append(
        _result(
            "ex_wait",
            "\n\n".join(
                f'<agent-result name="{name}" id="{id_}" status="completed">\n{said}\n'
                "</agent-result>"
                for name, _, said, id_ in done
            ),
        )
    )
    answer = "\n".join(f"{name} said: {said}" for name, _, said, _ in done)
    return [
        UserMessage.of(request),
        AssistantMessage(tuple(calls), "toolUse"),
        *results,
        AssistantMessage((TextContent(answer),)),
    ]


# ---- the program face: one line that gathers Agents' answers ----------------------


def _programs() -> list[Message]:
    """Requests to ask Agents in one Program, each served by a one-line `run` whose code
    gathers each Agent's answer (`agent(name='x').send('...')`), in Python single quotes:
    the JSON string needs no escapes, and the model only substitutes names and tasks.
    (A multi-line Program was tried first: the model wrote broken code every time.)

    The order was measured (bench/RESULTS.md): the model leans towards the last example.
    Programs last, a user asked for a Program writes one (P(call) ~0.9-1.0), but a
    Program's Agent, given its one-line task, writes a Program too (P(call) 0.3-0.5);
    questions last, the Agents answer and the user gets prose instead of a Program. So
    the user's plain questions and an Agent's tasks (as an Agent receives them) stand
    between the Programs, two Programs last."""
    fox_owl = _program_run(
        "Ask two agents in one program: one named fox to say a word that rhymes with cat, "
        "one named owl to name a colour.",
        [("fox", "Say a word that rhymes with cat", "Hat."), ("owl", "Name a colour", "Blue.")],
        "ex_run_1",
        2.4,
    )
    three = _program_run(
        "In one program, ask three agents: one named ant to name a planet, one named bee to "
        "name a fruit, one named elk to name a month.",
        [
            ("ant", "Name a planet", "Mars."),
            ("bee", "Name a fruit", "Apple."),
            ("elk", "Name a month", "May."),
        ],
        "ex_run_2",
        3.1,
    )
    kid_jay = _program_run(
        "Use one program to ask an agent named kid to name a sport and an agent named jay to "
        "name a tree.",
        [("kid", "Name a sport", "Tennis."), ("jay", "Name a tree", "An oak.")],
        "ex_run_3",
        2.6,
    )
    unnamed = _program_run(  # no names given: the model names them after their tasks
        "Ask two agents in one program, one to name a river and one to name a mountain.",
        [("river", "Name a river", "The Nile."), ("mountain", "Name a mountain", "Everest.")],
        "ex_run_4",
        2.2,
    )
    return (
        _asked("What is two plus two?", "Two plus two is four.")
        + _question("Name a bird", "A robin.", "5a6b7c8d")
        + fox_owl
        + _question("Say a greeting", "Hello!", "9e8d7c6b")
        + three
        + _asked("Write one sentence about rain.", "Rain taps softly on the roof.")
        + kid_jay
        + unnamed
    )


def _program_run(
    request: str, agents: list[tuple[str, str, str]], call_id: str, seconds: float
) -> list[Message]:
    """`request`, served by one Program asking each (name, message, answer) Agent at once,
    the result as the tool returns it, and a report line per Agent (`fox: Hat.`; measured,
    reports named both Agents in 5 of 10 phrasings, against 3 of 10 with `fox said: Hat.`
    as the agents face has it)."""
    sends = ", ".join(f"agent(name='{name}').send('{msg}')" for name, msg, _ in agents)
    code = f"return await asyncio.gather({sends})"
    value = [said for _, _, said in agents]
    result = program_texts.completed(seconds, program_texts.output_text((), (), value))
    answer = "\n".join(f"{name}: {said}" for name, _, said in agents)
    return [
        UserMessage.of(request),
        AssistantMessage(
            (ToolCall("program", {"action": "run", "code": code}, call_id),), "toolUse"
        ),
        ToolResultMessage(call_id, "program", (TextContent(result),)),
        AssistantMessage((TextContent(answer),)),
    ]


# ---- the supervision face: delegate, and results as messages -------------------------


def _supervision() -> list[Message]:
    """Two requests for two steps ("have a researcher find X, then a generalist do Y"), each
    served the same way: both agents delegated in one reply, the turn ended, and each
    result, arriving later as a message, reported as it comes, the last report naming both.

    Two steps are delegated at once, not in order: measured, the model could not take the
    step of delegating the second agent when the first result arrived (P(call) 0.05-0.09),
    while after a result it reliably reports (P(call) ~0.01). The definitions are bundled
    ones other than the README's (scout, implementer), so the model has to take them from
    the request rather than from here."""
    researcher = _Generation(
        "researcher-1",
        "researcher",
        "0b6e2f4c-8d1a-4e7b-9c3f-5a2d6e8b1f4a",
        "3f9c1a7e-2b5d-4c8f-a6e1-7d4b9f2c5e8a",
    )
    generalist = _Generation(
        "generalist-1",
        "generalist",
        "6d2a8e4b-1f7c-4a9e-8b3d-2c5f7a9e1b6d",
        "9a4e7c2f-5b8d-4e1a-b7c3-8f2d6a4e9c1b",
    )
    reviewer = _Generation(
        "reviewer-1",
        "reviewer",
        "2e7b4d9a-6c1f-4a8e-b3d5-9f1c7e2a4b6d",
        "8c3f6a1e-4d9b-4e2c-a7f5-3b8d1e6c9a2f",
    )
    explainer = _Generation(
        "researcher-1",
        "researcher",
        "7f1d3b5e-9a2c-4e6f-8d1b-4c7e9a2f5d3b",
        "1e5a9c3f-7b2d-4f8a-9c6e-2d4b8f1a7c5e",
    )
    # Each task is the request's own words for its step: the model copies them best.
    return _two_steps(
        "Have a researcher map the cache, then a generalist fix the timeout bug",
        (researcher, "Map the cache", "The cache is in cache.py; store.py and api.py use it."),
        (
            generalist,
            "Fix the timeout bug",
            "I fixed the timeout in cache.py: it was in seconds, not milliseconds.",
        ),
    ) + _two_steps(
        "Have a reviewer check the login code, then a researcher explain the session handling",
        (
            reviewer,
            "Check the login code",
            "The login code is fine: passwords are hashed and compared in constant time.",
        ),
        (
            explainer,
            "Explain the session handling",
            "Sessions are kept in Redis for one hour and renewed on each request.",
        ),
        second_done_first=True,  # results come as agents finish, not as they were delegated
    )


def _two_steps(
    request: str,
    first: tuple[_Generation, str, str],
    second: tuple[_Generation, str, str],
    *,
    second_done_first: bool = False,
) -> list[Message]:
    """`request`, with two (agent, task, final answer): both delegated in one reply, then a
    report line per result as it arrives (`researcher-1 found: ...`, `generalist-1 did: ...`),
    the last report repeating the earlier line so that it names both."""
    (a, task_a, answer_a), (b, task_b, answer_b) = first, second
    arrivals = [
        (a, answer_a, f"{a.label} found: {answer_a}"),
        (b, answer_b, f"{b.label} did: {answer_b}"),
    ]
    if second_done_first:
        arrivals.reverse()
    (x, answer_x, line_x), (y, answer_y, line_y) = arrivals
    calls = (
        ToolCall("agent", a.delegate(task_a), "ex_a"),
        ToolCall("agent", b.delegate(task_b), "ex_b"),
    )
    return [
        UserMessage.of(request),
        AssistantMessage(calls, "toolUse"),
        _result("ex_a", a.delegated()),
        _result("ex_b", b.delegated()),
        _said(f"{a.label} and {b.label} are at work."),
        UserMessage.of(x.completed(answer_x)),
        _said(line_x),
        UserMessage.of(y.completed(answer_y)),
        _said(f"{line_x}\n{line_y}"),
    ]


@dataclass(frozen=True, slots=True)
class _Generation:
    """A managed agent of the example, and the texts the supervision face shows of it
    (piagents.supervision.texts: `delegated`, `terminal_result`)."""

    label: str
    definition: str
    session: str
    request: str

    def delegate(self, task: str) -> dict[str, Any]:
        return {"action": "delegate", "definition": self.definition, "task": task}

    def _evidence(self) -> str:
        return (
            f"agent={self.label} definition={self.definition} session={self.session} "
            f"request={self.request}"
        )

    def delegated(self) -> str:
        return (
            f"Delegated: {self._evidence()}\n"
            "Its result will arrive later as a message, exactly once; do not poll for it. "
            "Use list for its state and available_actions."
        )

    def completed(self, answer: str) -> str:
        call = json.dumps({"action": "continue", "session": self.session, "task": "..."})
        return (
            f"Agent {self.label} completed its assignment.\n"
            f"{self._evidence()} status=completed\n"
            f"To continue this work later: {call}\n\n"
            f"Final answer:\n{answer}"
        )


# ---- shared ---------------------------------------------------------------------------


def _question(question: str, answer: str, sender: str) -> list[Message]:
    # Wrapped as an owned Agent receives its first input.
    return [
        UserMessage.of(f'<agent-message id="{sender}">\n{question}\n</agent-message>'),
        AssistantMessage((TextContent(answer),)),
    ]


def _asked(question: str, answer: str) -> list[Message]:
    # As the user asks it.
    return [UserMessage.of(question), AssistantMessage((TextContent(answer),))]


def _call(call_id: str, args: dict[str, Any]) -> AssistantMessage:
    return AssistantMessage((ToolCall("agent", args, call_id),), "toolUse")


def _said(text: str) -> AssistantMessage:
    return AssistantMessage((TextContent(text),))


def _result(call_id: str, text: str) -> ToolResultMessage:
    return ToolResultMessage(call_id, "agent", (TextContent(text),))
