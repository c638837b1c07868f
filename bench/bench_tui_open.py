"""Opening a long session in the terminal UI: from the app's start to the first frame
that shows the conversation's last answer (headless, Textual's Pilot, 120x40).

The transcript shows the last entries of a conversation and earlier pages as the
reader scrolls up to them; this measures what the reader waits for. No target in
the issues: a row with the time and the number of entries.

    python bench/bench_tui_open.py [--quick] [--reps N]
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from _common import common_args, note, result, temp_home

import piagents
from piagents.ai.messages import (
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from piagents.harness.session import Session
from piagents.store.records import Entry, MessageEntry
from piagents.store.sqlite import SQLiteStore
from piagents.testing import FunctionModel
from piagents.tui.app import PiAgentsApp


def conversation(entries: int) -> list[Entry]:
    out: list[Entry] = []
    i = 0
    while len(out) < entries:
        out.append(MessageEntry(UserMessage.of(f"Question {i}: " + "why does it fail? " * 8)))
        call = ToolCall("read", {"path": f"src/module_{i}.py"}, f"c{i}")
        out.append(MessageEntry(AssistantMessage((TextContent("Let me look."), call), "toolUse")))
        body = "\n".join(f"{n:>4}  def f{n}(x): return x + {n}" for n in range(30))
        out.append(MessageEntry(ToolResultMessage(f"c{i}", "read", (TextContent(body),))))
        answer = f"**Answer {i}.** The loop in `f{i}` stops early:\n\n- one\n- two\n"
        out.append(MessageEntry(AssistantMessage((TextContent(answer),))))
        i += 1
    return out[:entries]


def build(home: Path, cwd: Path, entries: int) -> tuple[str, str]:
    store = SQLiteStore(home / "store.db")
    session = Session.create(store, cwd=str(cwd), model="faux/function")
    items = conversation(entries)
    session.append(*items)
    store.close()
    last = next(e for e in reversed(items) if isinstance(e, MessageEntry) and e.message.text)
    assert isinstance(last, MessageEntry)
    return session.id, last.message.text.split(".")[0].strip("*")


async def open_once(home: Path, session_id: str, marker: str) -> float:
    rt = piagents.Runtime(home=home, model=FunctionModel(lambda call: "ok"))
    t0 = time.perf_counter()
    app = PiAgentsApp(rt, lambda r: r.open_root(session=session_id))
    async with app.run_test(size=(120, 40)) as pilot:
        while True:
            lines = app.screen._compositor.render_strips()
            if any(marker in strip.text for strip in lines):
                return time.perf_counter() - t0
            if time.perf_counter() - t0 > 120:
                raise TimeoutError("the last answer never showed")
            await pilot.pause(0.005)


def main() -> None:
    args = common_args(__doc__ or "").parse_args()
    sizes = (4, 1_500) if args.quick else (4, 150, 1_500, 10_000)  # 4: the floor
    reps = args.reps or (2 if args.quick else 5)
    for size in sizes:
        with temp_home() as base:
            home, work = base / "home", base / "work"
            home.mkdir(exist_ok=True)
            work.mkdir(exist_ok=True)
            session_id, marker = build(home, work, size)
            asyncio.run(open_once(home, session_id, marker))  # warm imports and caches
            times = [asyncio.run(open_once(home, session_id, marker)) * 1e3 for _ in range(reps)]
            note(f"tui-open: {size} entries: {[round(t) for t in times]} ms")
            result(
                "tui-open",
                f"TUI: open a {size:,}-entry session, start to its last answer on screen",
                times,
                unit="ms",
                target=None,
                spread="minmax",
                entries=size,
            )


if __name__ == "__main__":
    main()
