"""How the embedded model reads a request and how its answer is read back.

SmolLM2 was tuned on one tool protocol: with tools on offer, every reply opens with
`<tool_call>[...]</tool_call>`, the calls to make or `[]` for none, and tool results
come back as `<tool_response>` blocks in a user turn. We keep to it, and let a plain
text answer follow an empty `[]`. Generation then runs in two phases:

1. the block, under a grammar that makes every call valid against its tool's JSON
   schema: here the model chooses between `[]` and calls, and writes the calls;
2. after `[]`, the answer as free text (a 135M model needs a repeat penalty for
   prose, which would spoil JSON, hence the split).

Worked examples (`local_examples`) follow the system prompt: a 135M model copies
patterns far better than it follows instructions.
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
    the model's cache holds it (the worked examples after it are ~900 tokens)."""
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
    # Its strings take raw control characters, which JSON does not: a newline written
    # inside a string (seen: a Program's code left unclosed, the block written on inside
    # it) made the whole block unreadable. Escapes (`\n`) stay allowed.
    rules = rules.replace(_CONVERTER_CHAR, _JSON_CHAR)
    root = (
        f'root ::= "{_gbnf(CALL_OPEN)}" ( "{_gbnf(CALL_CLOSE)}" | '
        f'"\\n" call (",\\n" call)* "\\n{_gbnf(CALL_CLOSE)}" )'
    )
    return f"{root}\n{rules}"


_CONVERTER_CHAR = 'char ::= [^"\\\\] |'
_JSON_CHAR = 'char ::= [^"\\\\\\x00-\\x1F] |'


def _gbnf(literal: str) -> str:
    return literal.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


# Arguments the model writes under a narrower schema than the tool's own, by tool and
# parameter. A Program's code: writing its one line (local_examples), the model drifted
# into the JSON's closing braces inside the string (`...week')` then `)}`, measured in
# bench/RESULTS.md) and wrote on inside it; the one-line Programs it can write need no
# braces, double quotes or escapes.
NARROWED: dict[tuple[str, str], dict[str, Any]] = {
    ("program", "code"): {"type": "string", "pattern": r'^[^{}"\\\x00-\x1f]*$'},
}


def _call_schema(tool: ToolSpec) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"name": {"const": tool.name}, "arguments": _narrowed(tool)},
        "required": ["name", "arguments"],
        "additionalProperties": False,
    }


def _narrowed(tool: ToolSpec) -> dict[str, Any]:
    props: dict[str, Any] = tool.parameters.get("properties", {})
    narrowed = {p: NARROWED[tool.name, p] for p in props if (tool.name, p) in NARROWED}
    if not narrowed:
        return tool.parameters
    return {**tool.parameters, "properties": {**props, **narrowed}}


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


API = "llama-cpp"  # what the exported messages name as their API: the embedded engine


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
            api=API,
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
