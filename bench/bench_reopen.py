"""Reopening a session of 100,000 entries (issue 2).

Setup appends the entries through the store directly in batches of 1,000 (a
realistic mix of a few hundred bytes each: a user prompt, assistant tool calls,
tool results, a final answer). Measured: a new `SQLiteStore` + `Session.load`
+ `session.context()`, the path every reopen takes. Target: < 300 ms.

Also measured: the same through `Runtime.open_root(session=...)`, a breakdown of
where the time goes (SQL fetch, decoding the records, building the context), and a session of
the same size whose last compaction keeps its last ~1,000 entries.

    python bench/bench_reopen.py [--quick] [--reps N] [--entries N] [--profile]
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from _common import common_args, emit, note, profiled, result, temp_home

import piagents
from piagents.ai.messages import (
    AssistantMessage,
    Message,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from piagents.harness.context import build_context, in_effect
from piagents.harness.session import Session
from piagents.store.records import (
    CompactionEntry,
    ContextItem,
    Entry,
    MessageEntry,
    decode_context_items,
    entries_array,
)
from piagents.store.sqlite import SQLiteStore, _entry_rows
from piagents.testing import FunctionModel

TARGET_MS = 300.0
BATCH = 1_000
FILES = ("src/parser.py", "src/lexer.py", "tests/test_parser.py", "README.md", "pyproject.toml")


def messages(start_ms: int) -> Iterator[Message]:
    """An endless, realistic conversation: 6 messages per exchange."""
    n = 0
    while True:
        ts = start_ms + n * 6
        path = FILES[n % len(FILES)]
        yield UserMessage(
            (
                TextContent(
                    f"Exchange {n}: the parser fails on nested brackets in {path}; "
                    "find the cause, fix it and run the tests. Keep the public API as it is "
                    "and explain the change in two sentences."
                ),
            ),
            ts,
        )
        for k in range(2):
            call_id = f"call_{n}_{k}"
            yield AssistantMessage(
                (
                    TextContent("Let me look at the file first."),
                    ToolCall("read", {"path": path, "offset": 1 + 40 * k, "limit": 40}, call_id),
                ),
                "toolUse",
                provider="anthropic",
                model="claude-sonnet-4-5",
                timestamp=ts + 1 + 2 * k,
            )
            body = "\n".join(
                f"{40 * k + i + 1:>4}  def parse_{i}(tokens): return tokens[{i}:]" for i in range(6)
            )
            yield ToolResultMessage(
                call_id, "read", (TextContent(body),), None, False, ts + 2 + 2 * k
            )
        yield AssistantMessage(
            (
                TextContent(
                    "Fixed: the bracket depth was reset on every token, so nested groups "
                    "closed early. It is now kept per group, and all 48 tests pass."
                ),
            ),
            "stop",
            provider="anthropic",
            model="claude-sonnet-4-5",
            timestamp=ts + 5,
        )
        n += 1


def build(store: SQLiteStore, cwd: str, total: int, *, compact_keep: int | None) -> str:
    """A session of `total` entries; with `compact_keep`, a compaction near the end."""
    session = Session.create(store, cwd=cwd, model="faux/function")
    parent: str | None = None
    stream = messages(1_700_000_000_000)
    compact_at = total - compact_keep - 1 if compact_keep is not None else -1
    first_kept: str | None = None
    written = 0
    while written < total:
        batch: list[Entry] = []
        for _ in range(min(BATCH, total - written)):
            entry: Entry
            if written == compact_at:
                entry = CompactionEntry(
                    "Summary: the parser work so far.", first_kept, 150_000, parent_id=parent
                )
            else:
                entry = MessageEntry(next(stream), parent_id=parent)
            if written == compact_at - 200:  # keep the last 200 entries before it too
                first_kept = entry.id
            batch.append(entry)
            parent = entry.id
            written += 1
        store.append(session.id, batch)
    return session.id


def reopen_once(db: Path, session_id: str) -> tuple[float, int]:
    t0 = time.perf_counter()
    store = SQLiteStore(db)
    session = Session.load(store, session_id)
    context = session.context()
    elapsed = time.perf_counter() - t0
    store.close()
    return elapsed, len(context)


def breakdown(db: Path, session_id: str) -> dict[str, float]:
    """Milliseconds of each stage of `Session.load` + `context()`, done by hand."""
    out: dict[str, float] = {}
    t = time.perf_counter()
    store = SQLiteStore(db)
    out["open_store_ms"] = (time.perf_counter() - t) * 1e3
    gc.disable()  # as Session.load does
    t = time.perf_counter()
    _, blocks, loose = _entry_rows(store._db, session_id, True)
    out["sql_fetch_ms"] = (time.perf_counter() - t) * 1e3
    out["blocks"] = len(blocks)
    out["loose_rows"] = len(loose)
    t = time.perf_counter()
    items: list[ContextItem] = []
    for _, _, body in blocks:
        items.extend(decode_context_items(body))
    items.extend(decode_context_items(entries_array([r[0] for r in loose])))
    out["decode_ms"] = (time.perf_counter() - t) * 1e3
    t = time.perf_counter()
    session = Session.__new__(Session)
    session._rebuild_context(in_effect(items))
    out["context_build_ms"] = (time.perf_counter() - t) * 1e3
    t = time.perf_counter()
    gc.enable()
    gc.collect(0)  # what the first collection after the pause costs: it sees every new tuple
    out["first_collection_ms"] = (time.perf_counter() - t) * 1e3
    t = time.perf_counter()
    context = session.context()
    out["context_call_ms"] = (time.perf_counter() - t) * 1e3
    out["context_messages"] = len(context)
    t = time.perf_counter()
    entries = store.entries(session_id, from_last_compaction=True)
    out["entries_when_asked_ms"] = (time.perf_counter() - t) * 1e3
    t = time.perf_counter()
    build_context(entries)
    out["build_context_pure_ms"] = (time.perf_counter() - t) * 1e3
    store.close()
    return out


async def open_root_once(home: Path, session_id: str) -> float:
    async with piagents.Runtime(home=home, model=FunctionModel(lambda call: "ok")) as rt:
        t0 = time.perf_counter()
        root = await rt.open_root(session=session_id)
        root.session.context()
        return time.perf_counter() - t0


def main() -> None:
    p = common_args(__doc__ or "")
    p.add_argument("--entries", type=int, default=None)
    args = p.parse_args()
    total = args.entries or (10_000 if args.quick else 100_000)
    reps = args.reps or (3 if args.quick else 7)
    with temp_home() as base:
        home = base / "home"
        db = home / "store.db"
        t0 = time.perf_counter()
        store = SQLiteStore(db)
        plain = build(store, str(base / "work"), total, compact_keep=None)
        compacted = build(store, str(base / "work"), total, compact_keep=1_000)
        store.close()
        db_mb = db.stat().st_size / 2**20  # closing checkpointed the WAL
        note(
            f"reopen: built 2 x {total} entries in {time.perf_counter() - t0:.1f}s, {db_mb:.0f} MB"
        )
        if args.profile:
            profiled(lambda: reopen_once(db, plain))
            return
        reopen_once(db, plain)  # warm the OS page cache once, as a recently used session
        plain_times: list[float] = []
        compact_times: list[float] = []
        root_times: list[float] = []
        context_len = 0
        for _ in range(reps):
            elapsed, context_len = reopen_once(db, plain)
            plain_times.append(elapsed * 1e3)
            compact_times.append(reopen_once(db, compacted)[0] * 1e3)
            root_times.append(asyncio.run(open_root_once(home, plain)) * 1e3)
            gc.collect()  # the closed runtime's cycles, not to be paid by the next reopen
        parts: dict[str, Any] = breakdown(db, plain)
        emit({"kind": "detail", "bench": "reopen", "entries": total, **parts})
        note(f"reopen breakdown: {parts}")
        result(
            "reopen",
            f"reopen {total:,} entries: SQLiteStore + Session.load + context()",
            plain_times,
            unit="ms",
            target=TARGET_MS,
            spread="minmax",
            entries=total,
            context_messages=context_len,
            db_mb=db_mb,
            reps=reps,
        )
        result(
            "reopen",
            f"reopen {total:,} entries through Runtime.open_root(session=)",
            root_times,
            unit="ms",
            target=TARGET_MS,
            spread="minmax",
        )
        result(
            "reopen",
            f"reopen {total:,} entries, compacted (last ~1,200 kept)",
            compact_times,
            unit="ms",
            target=TARGET_MS,
            spread="minmax",
        )


if __name__ == "__main__":
    main()
