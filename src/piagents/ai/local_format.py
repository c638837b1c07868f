"""How the embedded model reads a request and how its answer is read back.

SmolLM2 was tuned on one tool protocol: with tools on offer, every reply opens with
`<tool_call>[...]</tool_call>`, the calls to make or `[]` for none, and tool results
come back as `<tool_response>` blocks in a user turn. We keep to it, and let a plain
text answer follow an empty `[]`. Generation then runs in two phases:

1. the block, under a grammar that makes every call valid against its tool's JSON
   schema: here the model chooses between `[]` and calls, and writes the calls;
2. after `[]`, the answer as free text (a 135M model needs a repeat penalty for
   prose, which would spoil JSON, hence the split).

A few worked examples follow the system prompt: a 135M model copies patterns far
better than it follows instructions. They were measured (bench/RESULTS.md): without
them the model answers delegation requests in prose, or spawns and never waits.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from piagents.ai._sdk import ContentBuilder
from piagents.ai.arguments import loads_arguments
from piagents.ai.events import StreamEvent
from piagents.ai.messages import (
    AssistantMessage,
    Message,
    StopReason,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from piagents.ai.models import ModelRef
from piagents.ai.provider import ToolSpec

TAG_OPEN, TAG_CLOSE = "<tool_call>", "</tool_call>"
CALL_OPEN, CALL_CLOSE = f"{TAG_OPEN}[", f"]{TAG_CLOSE}"
NO_CALLS = f"{CALL_OPEN}{CALL_CLOSE}\n"
# Where a prose answer ends: the model starting another protocol block or turn.
TEXT_STOPS = (
    "<tool_call>",
    "</tool_call>",
    "<tool_response>",
    "</tool_response>",
    "</agent-",
    "<|im_start|>",
)


# ---- the prompt -----------------------------------------------------------------


def system_message(system_prompt: str, tools: Sequence[ToolSpec]) -> str:
    """The tools and the reply format, then the agent's own system prompt without the time of
    day: Agents started seconds apart then share one prompt up to their own conversation, and
    the model's cache holds it (the worked examples after it are ~700 tokens)."""
    parts = [tools_block(tools)] if tools else []
    if system_prompt:
        parts.append(_CLOCK.sub(r"\1", system_prompt))
    return "\n\n".join(parts)


# "Current date and time: Monday, January 5, 2026, 14:03:09 CET" (harness/system_prompt.py)
_CLOCK = re.compile(r"(Current date and time: [^\n]*?\d{4}), \d{1,2}:\d{2}:\d{2}[^\n]*")


def tools_block(tools: Sequence[ToolSpec]) -> str:
    """A one-line signature per tool and the reply format.

    The full schemas stay out of the prompt: the grammar enforces them, and the
    short form costs a fifth of the tokens (measured: 381 against 2350 for the
    eight built-in tools), which matters at ~100 prompt tokens a second.
    """
    lines = [f"- {signature(t)}: {_first_sentence(t.description)}" for t in tools]
    example = json.dumps({"name": tools[0].name, "arguments": _example_args(tools[0])})
    return (
        "You can call these tools:\n"
        + "\n".join(lines)
        + f"\n\nTo call tools, reply with {CALL_OPEN}...{CALL_CLOSE}, for example:\n"
        + f"{CALL_OPEN}\n{example}\n{CALL_CLOSE}\n"
        + "Tool results come back in <tool_response> blocks. When no tool is needed, or the "
        f"results answer the request, reply with {CALL_OPEN}{CALL_CLOSE} and then your answer "
        "in plain text."
    )


def signature(tool: ToolSpec) -> str:
    """`agent(action: spawn|send|wait|list|abort, name?: string, ...)`: required first."""
    props: dict[str, Any] = tool.parameters.get("properties", {})
    required = set(tool.parameters.get("required", ()))
    ordered = sorted(props, key=lambda p: p not in required)
    params = [f"{p}{'' if p in required else '?'}: {_type_of(props[p])}" for p in ordered]
    return f"{tool.name}({', '.join(params)})"


def _type_of(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return "|".join(str(v) for v in schema["enum"])
    if "anyOf" in schema:
        return " or ".join(_type_of(s) for s in schema["anyOf"])
    if schema.get("type") == "array":
        return f"list of {_type_of(schema.get('items', {}))}"
    kind = schema.get("type", "any")
    return kind if isinstance(kind, str) else "|".join(str(k) for k in kind)


def _first_sentence(text: str) -> str:
    first = text.strip().split("\n", 1)[0]
    match = re.match(r"(.+?[.!?])(\s|$)", first)
    return match.group(1) if match else first


def _example_args(tool: ToolSpec) -> dict[str, Any]:
    props: dict[str, Any] = tool.parameters.get("properties", {})
    args: dict[str, Any] = {}
    for name in tool.parameters.get("required", ()):
        schema = props.get(name, {})
        args[name] = schema["enum"][0] if "enum" in schema else "..."
    return args


def examples(tools: Sequence[ToolSpec]) -> list[Message]:
    """Worked turns shown before the conversation: questions answered in prose and, when the
    `agent` tool is offered, Agents spawned and waited for in one reply, then reported."""
    delegates = any(t.name == "agent" for t in tools)
    # The order was measured: the model leans towards whatever example came last. With a
    # question first and last and the delegations between, a root asked to delegate calls
    # the tool (p ~0.9) and an Agent asked a question answers it (p ~0.97).
    out = _question("What is two plus two?", "Two plus two is four.", "77aa88bb")
    if delegates:
        out += _delegation(
            [
                ("fox", "Say a word that rhymes with cat", "Hat.", "0a1b2c3d"),
                ("owl", "Name a colour", "Blue.", "4e5f6a7b"),
            ]
        )
        out += _delegation(
            [
                ("ant", "Name a planet", "Mars.", "1b2c3d4e"),
                ("bee", "Name a fruit", "Apple.", "5f6a7b8c"),
                ("cat", "Name a month", "May.", "9d0e1f2a"),
            ],
            finished=[1, 0, 2],  # results come back as Agents finish, not as they started
        )
    out += _question("Write one sentence about rain.", "Rain taps softly on the roof.", "3c4d5e6f")
    return out


def _delegation(
    agents: list[tuple[str, str, str, str]], finished: list[int] | None = None
) -> list[Message]:
    """One request to ask Agents (name, message, answer, short ID) in parallel, and the reply
    pattern that serves it: spawn each and wait in one reply, then report each answer on a
    line of its own (`poet said: ...`), in the order `wait` returned them (`finished`,
    indexes into `agents`).

    The tool texts copy the `agent` tool's own (piagents.agents.texts; a test keeps them
    equal): the model must see here exactly what it will see for real.
    """
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


def _question(question: str, answer: str, sender: str) -> list[Message]:
    # Wrapped as an owned Agent receives its first input.
    return [
        UserMessage.of(f'<agent-message id="{sender}">\n{question}\n</agent-message>'),
        AssistantMessage((TextContent(answer),)),
    ]


def _result(call_id: str, text: str) -> ToolResultMessage:
    return ToolResultMessage(call_id, "agent", (TextContent(text),))


def chatml(system: str, messages: Sequence[Message]) -> str:
    """The conversation in SmolLM2's ChatML, ending where the assistant speaks next."""
    turns: list[tuple[str, str]] = [("system", system)] if system else []
    responses: list[str] = []
    for message in messages:
        if isinstance(message, ToolResultMessage):
            responses.append(f"<tool_response>\n{message.text}\n</tool_response>")
            continue
        if responses:
            turns.append(("user", "\n".join(responses)))
            responses = []
        if isinstance(message, UserMessage):
            turns.append(("user", message.text))
        else:
            turns.append(("assistant", assistant_text(message)))
    if responses:
        turns.append(("user", "\n".join(responses)))
    body = "".join(f"<|im_start|>{role}\n{text}<|im_end|>\n" for role, text in turns)
    return body + "<|im_start|>assistant\n"


def assistant_text(message: AssistantMessage) -> str:
    """A reply as the model would have written it: the call block, then any text."""
    calls = [json.dumps({"name": c.name, "arguments": c.args}) for c in message.tool_calls]
    if not calls:
        return NO_CALLS + message.text
    block = CALL_OPEN + "\n" + ",\n".join(calls) + "\n" + CALL_CLOSE
    return f"{block}\n{message.text}" if message.text else block


# ---- the grammar ------------------------------------------------------------------


def calls_grammar(tools: Sequence[ToolSpec]) -> str:
    """GBNF for the opening block: `[]`, or one call per line, each valid per its schema."""
    # Imported here: llama_cpp loads its shared library on import.
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    if not tools:
        return f'root ::= "{_gbnf(CALL_OPEN + CALL_CLOSE)}"'
    call_schema = {"anyOf": [_call_schema(t) for t in tools]}
    rules: str = json_schema_to_gbnf(json.dumps(call_schema), prop_order=["name", "arguments"])
    # The converter names its top rule `root`; ours wraps it.
    rules = re.sub(r"(?m)^root ::=", "call ::=", rules)
    root = (
        f'root ::= "{_gbnf(CALL_OPEN)}" ( "{_gbnf(CALL_CLOSE)}" | '
        f'"\\n" call (",\\n" call)* "\\n{_gbnf(CALL_CLOSE)}" )'
    )
    return f"{root}\n{rules}"


def _gbnf(literal: str) -> str:
    return literal.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _call_schema(tool: ToolSpec) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"name": {"const": tool.name}, "arguments": tool.parameters},
        "required": ["name", "arguments"],
        "additionalProperties": False,
    }


# ---- reading the answer -------------------------------------------------------------


class CallBlock:
    """The opening block as it is generated. A small model can fall into writing one call
    over and over; the first exact repeat of an earlier call in the block ends it, and the
    block is closed after the calls before the repeat."""

    _SEPARATOR = ",\n"  # between calls; JSON strings cannot hold a raw newline

    def __init__(self) -> None:
        self._text = ""
        self._repeated = False

    def feed(self, piece: str) -> None:
        if self._repeated:
            return
        self._text += piece
        calls = self._text.removeprefix(CALL_OPEN + "\n").split(self._SEPARATOR)
        finished = calls[:-1]  # the last one may still be growing
        if len(finished) > len(set(finished)):
            first_repeat = next(i for i, c in enumerate(finished) if c in finished[:i])
            kept = self._SEPARATOR.join(finished[:first_repeat])
            self._text = f"{CALL_OPEN}\n{kept}\n{CALL_CLOSE}"
            self._repeated = True

    def repeating(self) -> bool:
        return self._repeated

    def text(self) -> str:
        return self._text


def parse_calls(block: str) -> list[tuple[str, dict[str, Any]]] | None:
    """The calls of a complete `<tool_call>[...]</tool_call>` block; None if it is cut short."""
    block = block.strip()
    if not (block.startswith(CALL_OPEN) and block.endswith(CALL_CLOSE)):
        return None
    try:
        calls = loads_arguments(block.removeprefix(TAG_OPEN).removesuffix(TAG_CLOSE))
    except ValueError:  # not JSON, or not plain JSON (NaN, unpaired surrogates, too deep)
        return None
    if not isinstance(calls, list):
        return None
    return [
        (c["name"], c["arguments"])
        for c in calls
        if isinstance(c, dict)
        and isinstance(c.get("name"), str)
        and isinstance(c.get("arguments"), dict)
    ]


class AnswerReader:
    """Builds the events and the final message from the block and the streamed prose."""

    def __init__(self, model: ModelRef) -> None:
        self.model = model
        self.content = ContentBuilder()

    def text(self, piece: str) -> StreamEvent:
        return self.content.text("text", piece)

    def calls(self, block: str) -> Iterator[StreamEvent]:
        for index, (name, args) in enumerate(parse_calls(block) or ()):
            key = ("tool", index)
            yield self.content.start_tool(key, f"call_{uuid.uuid4().hex[:12]}", name)
            yield self.content.tool_args(key, json.dumps(args))

    def message(self, input_tokens: int, output_tokens: int, ran_out: bool) -> AssistantMessage:
        stop: StopReason = "length" if ran_out else "stop"
        if self.content.has_tool_calls:
            stop = "toolUse"
        return AssistantMessage(
            self.content.content(),
            stop,
            Usage(input_tokens, output_tokens),
            self.model.provider,
            self.model.model_id,
        )


class ProseFilter:
    """Passes prose on, holding back what might begin a protocol marker (the model opening
    another block or turn), and ends the answer at one."""

    def __init__(self, emit: Callable[[str], None]) -> None:
        self._emit = emit
        self._held = ""
        self._ended = False

    def feed(self, piece: str) -> None:
        if self._ended:
            return
        held = self._held + piece
        cut = min((i for i in (held.find(m) for m in TEXT_STOPS) if i >= 0), default=-1)
        if cut >= 0:
            self._held, self._ended = "", True
            if held[:cut]:
                self._emit(held[:cut])
            return
        keep = max((overlap(held, m) for m in TEXT_STOPS), default=0)
        ready, self._held = held[: len(held) - keep], held[len(held) - keep :]
        if ready:
            self._emit(ready)

    def ended(self) -> bool:
        return self._ended

    def flush(self) -> None:
        if self._held and not self._ended:
            self._emit(self._held)
        self._held = ""


def overlap(text: str, marker: str) -> int:
    """The length of the longest end of `text` that begins `marker`."""
    for size in range(min(len(text), len(marker) - 1), 0, -1):
        if marker.startswith(text[-size:]):
            return size
    return 0
