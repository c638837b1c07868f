"""The transcript: a long conversation opens at its end, and earlier pages on the way up."""

from __future__ import annotations

from tui_support import screen_text, started, until

import piagents
from piagents.ai.messages import (
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from piagents.harness.session import Session
from piagents.store.records import MessageEntry
from piagents.store.sqlite import SQLiteStore
from piagents.testing import FunctionModel
from piagents.tui.app import PiAgentsApp
from piagents.tui.blocks import Notice, ToolBlock, UserBlock
from piagents.tui.transcript import EARLIER_PAGE, RECENT_ENTRIES, _page_start


def conversation(turns: int) -> list[MessageEntry]:
    entries = []
    for i in range(turns):
        entries.append(MessageEntry(UserMessage.of(f"question {i}")))
        call = ToolCall("read", {"path": f"f{i}.py"}, f"c{i}")
        entries.append(MessageEntry(AssistantMessage((call,), "toolUse")))
        entries.append(MessageEntry(ToolResultMessage(f"c{i}", "read", (TextContent("text"),))))
        entries.append(MessageEntry(AssistantMessage((TextContent(f"answer {i}"),))))
    return entries


def test_a_page_never_starts_with_results_parted_from_their_call():
    entries = conversation(3)  # user, call, result, answer per turn
    assert _page_start(entries, 2) == 1  # a result: back to the message with its call
    assert _page_start(entries, 3) == 3
    assert _page_start(entries, 0) == 0


def app_on(home, work, turns: int) -> PiAgentsApp:
    store = SQLiteStore(home / "store.db")
    session = Session.create(store, cwd=str(work), model="faux/function")
    session.append(*conversation(turns))
    store.close()
    rt = piagents.Runtime(home=home, model=FunctionModel(lambda call: "ok"))
    return PiAgentsApp(rt, lambda r: r.open_root(session=session.id))


def user_blocks(app) -> int:
    return sum(isinstance(c, UserBlock) for c in app.transcript.children)


async def test_a_long_conversation_opens_at_its_end_and_shows_earlier_pages_on_pageup(home, work):
    turns = 100  # 400 entries
    app = app_on(home, work, turns)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        transcript = app.transcript
        await until(pilot, lambda: "answer 99" in screen_text(app), what="the end")
        shown = RECENT_ENTRIES // 4
        assert user_blocks(app) == shown
        notice = transcript.children[0]
        assert isinstance(notice, Notice)
        earlier = 4 * (turns - shown)
        assert str(notice.render()) == (
            f"▲ {earlier} earlier entries: scroll up or press PageUp at the top to show them."
        )
        # Every call shown has its result, and no result is shown without its call.
        tools = [c for c in transcript.children if isinstance(c, ToolBlock)]
        assert len(tools) == shown and all(t.result is not None for t in tools)
        # The reader pages up: at the top, the page before appears above, and the view
        # stays where it was, so paging on goes on through the earlier entries.
        presses = 0
        while transcript._earlier:
            before = len(transcript._earlier)
            await pilot.press("pageup")
            presses += 1
            assert presses < 500, "paging up never reached the first entry"
            await pilot.pause()
            if len(transcript._earlier) < before:
                assert before - len(transcript._earlier) <= EARLIER_PAGE
                # Still looking at what was shown first: the view moves down by the page
                # once the page is laid out, after a refresh (a busy machine delays it).
                await until(pilot, lambda: transcript.scroll_y > 0, what="the view kept")
        assert user_blocks(app) == turns
        assert not any(isinstance(c, Notice) for c in transcript.children)
        first = next(c for c in transcript.children if isinstance(c, UserBlock))
        assert str(first.render()) == "question 0"


async def test_a_short_conversation_is_shown_whole(home, work):
    app = app_on(home, work, 5)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await until(pilot, lambda: user_blocks(app) == 5, what="all of it")
        assert not any(isinstance(c, Notice) for c in app.transcript.children)
