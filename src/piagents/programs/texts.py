"""Every model-facing text of the `program` tool, as pure functions.

The wording is PROGRAM-NOTES.md's (Pi's `codemode` and `program` texts, with
"Python" for JavaScript), to the character; tests compare these functions with
its lines. The script API part of the description is ours: it says what a
Program may use in the sandbox it runs in.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from piagents.counted import counted

ProgramState = Literal["running", "completed", "failed", "stopped"]
CallStatus = Literal["ok", "error", "cancelled"]

DESCRIPTION = (
    "Run Python that composes tool calls and Agents; only its output and\n"
    "return value reach the caller. `run` runs a Program in the foreground, or\n"
    "in the background with `background`; `wait` waits for background Programs\n"
    "and returns their results; `list` lists background Programs; `stop` stops\n"
    "a running Program. When a background Program ends while its caller is not\n"
    "waiting for it, the caller receives a notification; `wait` returns the\n"
    "result.\n"
    "\n"
    "Program code is the body of an async function. It calls the caller's tools\n"
    "through `tools.*`, which excludes `program`, and creates Agents through\n"
    "`agent()`. These Agents belong to the Program, are isolated from other\n"
    "Agents, and go offline when it ends."
)

SCRIPT_API = (
    "Script API (Python in a sandbox: no files, network, processes or environment; "
    "`open()` is refused and only these modules import: `asyncio`, `json`, `re` (already "
    "imported), `math`, `time`, `datetime`, `collections`, `itertools`, `functools`, "
    "`random`, `typing`, `dataclasses`; everything else goes through the caller's tools):\n"
    "- `await tools.<name>(**args)`: a tool with its parameters as keyword arguments; "
    "returns its text (`bash`: a dict with `output`, `exit_code`, `truncated`, "
    "`wall_time_seconds` and, when cut, `full_output_path`, also for a non-zero exit "
    "code); a failed or refused call raises `ToolError`.\n"
    "- `w = agent(name=?, cwd=?, context=?, model=?, thinking_level=?)`: an idle Agent "
    "of this Program (`w.id`, `w.name`); `await w.send(message)` returns its answer and "
    "raises if the input fails or is aborted; `schema={...}` (a JSON schema) makes it "
    "answer through `submit_result` and returns that value; `deliver_as='steer'` or "
    "`'write'` (None once accepted); `await w.abort()` stops its turn.\n"
    "- `await asyncio.gather(*calls, return_exceptions=True)` runs calls at once.\n"
    "- `text(value)` adds an output item for the caller; `print(...)` goes to the "
    "console block; `store(key, value)` / `load(key)` keep JSON values for later "
    "Programs of this caller (kept only if the Program completes); `return value` "
    "is the Program's value.\n"
    "Runs: top-level `await` and `return`, `try`/`except`, f-strings, comprehensions, "
    "functions, lambdas, closures, `match`, `with`, classes without bases, `@dataclass`. "
    "Not available: class inheritance (so no exception classes of your own: catch "
    "`ToolError`, a `RuntimeError`), generators (`yield`), `async with`, `async for`, "
    "`del`, `@property`/`@staticmethod`/`@classmethod`, `asyncio.create_task` and "
    "`asyncio.wait_for`, `globals()`, `dir()`; such a construct fails with its line number."
)

PROMPT_SNIPPET = "Run Python that composes tool calls and Agents"

PROMPT_GUIDELINES: tuple[str, ...] = (
    "Use `program(action='run', code=...)` to call tools or Agents several times without "
    "a model turn between the calls, for example to read many files, filter large tool "
    "output, fan out Agents, or loop until a condition holds.",
    "Use `asyncio.gather(..., return_exceptions=True)` for independent calls. Return only "
    "what the caller needs; use `text()` for progress worth reading.",
    "Use `background=true` for long Programs, and `program(action='wait', ...)` when the "
    "next step depends on their results.",
)

PARAMETER_DESCRIPTIONS: dict[str, str] = {
    "action": "Operation and applicable parameters: `run(code, background?, timeout?)`, "
    "`wait(target?, timeout?)`, `list(limit?, offset?)`, or `stop(target)`.",
    "code": "Python async-function body for `run`.",
    "background": "Whether `run` returns the Program ID at once (default: false).",
    "timeout": "Maximum seconds. For `run` (default: none), expiry stops the Program. For "
    "`wait` (default: 30, min: 10, max: 3600), expiry does not stop Programs.",
    "target": "Program ID or unique ID prefix for `wait` or `stop`. `wait` also accepts an "
    "array. When omitted for `wait`, selects running Programs and ended Programs whose "
    "result has not been returned.",
    "limit": "Maximum Programs returned by `list` (default: 20, max: 200).",
    "offset": "Number of Programs to skip for `list` (default: 0).",
}


def description(other_tools: Sequence[tuple[str, str]] = ()) -> str:
    """The tool's description; with `--program-only`, the tools a Program reaches
    through `tools.*` (name, one-line description) are listed in it."""
    text = f"{DESCRIPTION}\n\n{SCRIPT_API}"
    if other_tools:
        listed = "\n".join(f"- `tools.{name}`: {summary}" for name, summary in other_tools)
        text += f"\n\nTools reachable through `tools.*`:\n{listed}"
    return text


# ---- results -------------------------------------------------------------------


def started(short_id: str) -> str:
    return f"Program {short_id} started."


def program_result(short_id: str, outcome: str, text: str) -> str:
    return f'<program-result id="{short_id}" status="{outcome}">\n{text}\n</program-result>'


def still_running(short_ids: Sequence[str]) -> str:
    return f"Still running: {', '.join(short_ids)}"


NO_RESULTS = "No results."
NO_PROGRAMS = "No Programs."


def results_omitted(short_ids: Sequence[str]) -> str:
    return f"[Results omitted: {', '.join(short_ids)}. Use wait with fewer targets.]"


def list_entry(short_id: str, state: ProgramState) -> str:
    return f"{short_id}  {state}"


def more_results(remaining: int, next_offset: int) -> str:
    return f"[{remaining} more results. Use offset={next_offset} to continue.]"


def stopped(short_id: str) -> str:
    return f"Program {short_id} stopped."


def already_ended(short_id: str) -> str:
    return f"Program {short_id} has already ended."


def did_not_stop(short_id: str) -> str:
    return f"Program {short_id} did not stop within the timeout and may still be running."


CLEANUP_ERROR = (
    "Cleanup error: some of the Program's work did not stop within the timeout and may "
    "still be running."
)


def notification(short_id: str, outcome: str) -> str:
    return f"Program {short_id} {outcome}."


# ---- errors --------------------------------------------------------------------


def no_match(target: str) -> str:
    return f'No Program matches "{target}". Use list to find Programs.'


def ambiguous(target: str, short_ids: Sequence[str]) -> str:
    return (
        f'"{target}" matches several Programs: {", ".join(short_ids)}. '
        "Retry with a longer ID prefix."
    )


def invalid(detail: str) -> str:
    return f"Invalid program call: {detail}"


# ---- the result of a Program ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class CallMade:
    """One tool call a Program made, as its failure lists it."""

    name: str
    status: CallStatus


def value_text(value: object) -> str:
    """A value as the result shows it: a string as it is, anything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def output_text(items: Sequence[str], console: Sequence[str], value: object = None) -> str:
    """What a Program gave its caller: its `text()` items (numbered when several), its
    printed lines in a console block, then its value (None: no value)."""
    parts: list[str] = []
    for n, item in enumerate(items, 1):
        parts.append(f"==> text {n}/{len(items)} <==\n{item}" if len(items) > 1 else item)
    if console:
        parts.append("<console_output>\n" + "\n".join(console) + "\n</console_output>")
    if value is not None:
        parts.append(value_text(value))
    return "\n".join(parts)


def wall_time(seconds: float) -> str:
    return f"Wall time {seconds:.1f} seconds"


def completed(seconds: float, output: str) -> str:
    return f"Script completed\n{wall_time(seconds)}\nOutput:\n{output}"


def calls_made(calls: Sequence[CallMade]) -> str:
    if not calls:
        return "No tool calls were made."
    made = ", ".join(f"{c.name} ({c.status})" for c in calls)
    return f"Tool calls made before the failure (they are not undone): {made}"


def timed_out(detail: str) -> str:
    return f"Script timed out: {detail}"


def aborted(detail: str) -> str:
    return f"Script aborted: {detail}"


def failed(seconds: float, output: str, error: str, calls: Sequence[CallMade]) -> str:
    """A failed or stopped Program: header, output, the error, the calls already made."""
    return (
        f"Script failed\n{wall_time(seconds)}\nOutput:\n{output}\n"
        f"Script error:\n{error}\n\n{calls_made(calls)}"
    )


MAX_OUTPUT_TOKENS = 10_000
CHARS_PER_TOKEN = 4


def truncated(text: str, full_output_path: str | None) -> str:
    """`text` past the output limit: its head and tail around a marker of what was cut,
    and where the whole is kept (None: it could not be saved)."""
    budget = MAX_OUTPUT_TOKENS * CHARS_PER_TOKEN
    head_chars = budget // 2
    tail_chars = budget - head_chars
    removed = len(text) - head_chars - tail_chars
    head, tail = text[:head_chars], text[len(text) - tail_chars :]
    out = (
        f"Warning: truncated output (original token count: {_tokens(len(text))})\n"
        f"Total output lines: {text.count(chr(10)) + 1}\n\n"
        f"{head}…{counted(_tokens(removed), 'token')} truncated…{tail}"
    )
    if full_output_path is None:
        return out + "\n\n[The full output could not be saved.]"
    return out + f"\n\n[Full output: {full_output_path} (read with offset/limit)]"


def truncated_result(text: str, full_output_path: str | None) -> str:
    """A Program's result past the output limit: its header stays first (the first line
    says whether the script completed: `Script completed` / `Script failed`), and what
    follows `Output:` keeps its head and tail."""
    lines = text.split("\n", 3)
    if len(lines) == 4 and lines[0].startswith("Script ") and lines[2] == "Output:":
        return "\n".join(lines[:3]) + "\n" + truncated(lines[3], full_output_path)
    return truncated(text, full_output_path)


def _tokens(chars: int) -> int:
    return -(-chars // CHARS_PER_TOKEN)


def needs_truncation(text: str) -> bool:
    return len(text) > MAX_OUTPUT_TOKENS * CHARS_PER_TOKEN


# ---- why a Program stopped (its record's reason; its `Script aborted: …` line) ----

STOPPED_BY_CALLER = "the Program was stopped by its caller."
CALLER_TURN_ABORTED = "its caller's turn was aborted."
CALLER_OFFLINE = "its caller went offline."
RUNTIME_CLOSED = "the runtime closed."
PROCESS_ENDED = "the process that ran it ended before the Program did."


def timeout_expired(timeout: float) -> str:
    return f"the Program ran longer than its timeout of {counted(timeout, 'second')}."
