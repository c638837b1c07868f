"""`list` over 10,000 Agents visible to the reader (issue 3).

Setup creates 10,000 owned sessions of one root through `Session.create`, each
with one user message as its owner would have sent it (an `<agent-message>`
with a realistic task text), without running turns. The root is then opened
in a Runtime and `agent` list is timed with a query (about 1 in 8 Agents
match), with a query nothing matches, and without a query. The first call
after opening is reported apart: it also builds the reader's short-ID map.
Target: < 50 ms.

    python bench/bench_list.py [--quick] [--reps N] [--agents N] [--profile]
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from _common import common_args, emit, note, profiled, result, temp_home

import piagents
from piagents.agents import texts
from piagents.agents.texts import Shown
from piagents.ai.messages import UserMessage
from piagents.harness.session import Session
from piagents.store.records import MessageEntry
from piagents.store.sqlite import SQLiteStore
from piagents.testing import FunctionModel

TARGET_MS = 50.0
MODEL = "faux/function"
VERBS = ("Fix", "Refactor", "Document", "Speed up", "Add tests for", "Review", "Port", "Profile")
SUBJECTS = (
    "the tokenizer's handling of nested brackets",
    "the flaky timeout in the HTTP retry tests",
    "the session export to JSONL",
    "the config loader's merge of user and project settings",
    "the grep tool's truncation notice",
    "the CSV importer for the billing report",
    "the websocket reconnect backoff",
    "the Markdown renderer's table widths",
)
QUERIES = {
    "query": "flaky timeout",  # one subject in 8
    "query, no match": "kubernetes helm chart",
}


def task(i: int) -> str:
    verb = VERBS[i % len(VERBS)]
    subject = SUBJECTS[(i // len(VERBS)) % len(SUBJECTS)]
    return (
        f"{verb} {subject} (ticket #{4000 + i}). Work in src/ only, keep the public API "
        "stable, run the test suite before you answer and report what changed in "
        "three sentences."
    )


def build(db: Path, cwd: str, agents: int) -> str:
    store = SQLiteStore(db)
    root = Session.create(store, cwd=cwd, model=MODEL)
    root.append(MessageEntry(UserMessage.of("Split the backlog across workers.")))
    sender = Shown(None, root.id[:8])
    for i in range(agents):
        child = Session.create(
            store, cwd=cwd, model=MODEL, name=f"worker-{i}", owner_id=root.id, root_id=root.id
        )
        text = texts.agent_message(sender, task(i), reply_note=False)
        child.append(MessageEntry(UserMessage.of(text)))
    store.close()
    return root.id


async def first_call(home: Path, root_id: str) -> float:
    """Milliseconds of the first `list` (with a query) after opening the root."""
    async with piagents.Runtime(home=home, model=FunctionModel(lambda call: "ok")) as rt:
        root = await rt.open_root(session=root_id)
        t0 = time.perf_counter()
        res = await root.call_tool("agent", {"action": "list", "query": QUERIES["query"]})
        elapsed = (time.perf_counter() - t0) * 1e3
        assert not res.is_error, res.text
        return elapsed


async def measure(home: Path, root_id: str, reps: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    calls: dict[str, dict[str, str]] = {
        "no query": {"action": "list"},
        **{label: {"action": "list", "query": q} for label, q in QUERIES.items()},
    }
    async with piagents.Runtime(home=home, model=FunctionModel(lambda call: "ok")) as rt:
        root = await rt.open_root(session=root_id)
        warm = await root.call_tool("agent", calls["query"])
        note(f"list: the page starts {warm.text[:160]!r}")
        for _ in range(reps):
            for label, args in calls.items():  # interleaved, so noise hits all alike
                t0 = time.perf_counter()
                res = await root.call_tool("agent", args)
                out.setdefault(label, []).append((time.perf_counter() - t0) * 1e3)
                assert not res.is_error, res.text
    return out


def main() -> None:
    p = common_args(__doc__ or "")
    p.add_argument("--agents", type=int, default=None)
    args = p.parse_args()
    agents = args.agents or (1_000 if args.quick else 10_000)
    reps = args.reps or (5 if args.quick else 30)
    with temp_home() as base:
        home = base / "home"
        t0 = time.perf_counter()
        root_id = build(home / "store.db", str(base / "work"), agents)
        note(f"list: built {agents} Agents in {time.perf_counter() - t0:.1f}s")
        if args.profile:
            profiled(lambda: asyncio.run(measure(home, root_id, 3)))
            return
        out = asyncio.run(measure(home, root_id, reps))
        out["first"] = [
            asyncio.run(first_call(home, root_id)) for _ in range(3 if args.quick else 7)
        ]
    emit({"kind": "detail", "bench": "list", "agents": agents})
    for label in ("query", "query, no match", "no query"):
        result(
            "list",
            f"list over {agents:,} Agents, {label}",
            out[label],
            unit="ms",
            target=TARGET_MS,
            spread="p10p90",
        )
    result(
        "list",
        f"list over {agents:,} Agents, query, first call after opening the root",
        out["first"],
        unit="ms",
        target=TARGET_MS,
        spread="minmax",
    )


if __name__ == "__main__":
    main()
