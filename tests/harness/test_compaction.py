from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from piagents.ai.faux import FunctionModel, ModelCall, Reply
from piagents.ai.messages import (
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from piagents.ai.models import ModelRef
from piagents.config import CompactionSettings
from piagents.harness.compaction import (
    SUMMARY_SYSTEM_PROMPT,
    CompactionError,
    auto_compaction,
    compact,
    compaction_threshold,
    context_tokens,
    estimate_tokens,
    find_cut_point,
    should_compact,
)
from piagents.harness.context import summary_message
from piagents.harness.events import Compacted, LoopEvent, RunOutcome
from piagents.harness.loop import AgentLoop, LoopHooks
from piagents.harness.session import Session
from piagents.store.records import CompactionEntry, Entry, MessageEntry, ModelChangeEntry
from piagents.store.sqlite import SQLiteStore

MODEL = ModelRef("faux", "function")


def words(tokens: int, tag: str = "x") -> str:
    """Text that estimate_tokens counts as exactly `tokens` tokens."""
    return (tag * (tokens * 4))[: tokens * 4]


def user(tokens: int, tag: str = "u") -> UserMessage:
    return UserMessage.of(words(tokens, tag))


def reply(tokens: int, tag: str = "a") -> AssistantMessage:
    return AssistantMessage((TextContent(words(tokens, tag)),))


def call(call_id: str) -> AssistantMessage:
    return AssistantMessage((ToolCall("read", {"path": "a.py"}, call_id),), "toolUse")


def result(call_id: str, tokens: int) -> ToolResultMessage:
    return ToolResultMessage(call_id, "read", (TextContent(words(tokens, "r")),))


class Summariser:
    """A faux summarising model that records what it was asked."""

    def __init__(self, answer: str | Reply = "## Goal\nShip it.") -> None:
        self.answer = answer
        self.calls: list[ModelCall] = []

    def __call__(self, call: ModelCall) -> str | Reply:
        self.calls.append(call)
        return self.answer

    @property
    def prompt(self) -> str:
        [message] = self.calls[-1].messages
        assert isinstance(message, UserMessage)
        return message.text


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "store.db")
    yield s
    s.close()


@pytest.fixture
def session(store: SQLiteStore, tmp_path: Path) -> Session:
    return Session.create(store, cwd=str(tmp_path), model=str(MODEL))


def fill(session: Session, *messages: Message) -> list[MessageEntry]:
    return [session.append_message(m) for m in messages]


# ---- estimates and thresholds --------------------------------------------------------


def test_estimate_tokens_counts_a_quarter_token_per_character() -> None:
    assert estimate_tokens(UserMessage.of("x" * 40)) == 10
    assert estimate_tokens(UserMessage.of("x" * 41)) == 11


def test_estimate_tokens_counts_thinking_tool_calls_and_images() -> None:
    thinking = AssistantMessage((ThinkingContent("t" * 8), TextContent("x" * 8)))
    assert estimate_tokens(thinking) == 4
    tool_call = AssistantMessage((ToolCall("read", {"path": "a.py"}, "c1"),))
    assert estimate_tokens(tool_call) == -(-(len("read") + len('{"path": "a.py"}')) // 4)
    image = UserMessage((ImageContent("AAAA", "image/png"),))
    assert estimate_tokens(image) == 1200


def test_context_tokens_adds_estimates_after_the_last_reported_usage() -> None:
    measured = AssistantMessage((TextContent("hi"),), usage=Usage(1000, 50, 200, 10))
    messages = [user(500), measured, user(7), reply(3)]
    assert context_tokens(messages) == 1260 + 7 + 3


def test_context_tokens_estimates_everything_when_no_usage_was_reported() -> None:
    assert context_tokens([user(5), reply(6), user(7)]) == 18


def test_should_compact_only_above_the_window_minus_the_reserve() -> None:
    settings = CompactionSettings(reserve_tokens=1000)
    assert not should_compact(9000, 10_000, settings)
    assert should_compact(9001, 10_000, settings)
    off = CompactionSettings(enabled=False, reserve_tokens=1000)
    assert not should_compact(9999, 10_000, off)


def test_a_reserve_as_large_as_the_window_keeps_three_quarters_of_it_for_the_context() -> None:
    # The default reserve (16,384) on the embedded model's 8,192-token window.
    settings = CompactionSettings()
    assert compaction_threshold(8192, settings) == 6144
    assert not should_compact(1800, 8192, settings)
    assert should_compact(6145, 8192, settings)
    assert compaction_threshold(128_000, settings) == 128_000 - 16_384


# ---- cut point ---------------------------------------------------------------------------


def entries_of(*messages: Message) -> list[Entry]:
    return [MessageEntry(m) for m in messages]


def test_cut_point_keeps_about_the_requested_tokens() -> None:
    entries = entries_of(user(100), reply(100), user(100), reply(100), user(100), reply(100))
    assert find_cut_point(entries, 300) == 3
    assert find_cut_point(entries, 250) == 3
    assert find_cut_point(entries, 100) == 5


def test_cut_point_keeps_everything_when_the_session_is_smaller_than_the_budget() -> None:
    entries = entries_of(user(10), reply(10))
    assert find_cut_point(entries, 1000) == 0
    assert find_cut_point([], 1000) == 0


def test_cut_point_never_keeps_a_tool_result_without_its_call() -> None:
    entries = entries_of(
        user(50), call("c1"), result("c1", 400), reply(20),
        user(30), call("c2"), result("c2", 200), result("c2", 5), reply(10),
    )  # fmt: skip
    for budget in range(0, 800, 5):
        cut = find_cut_point(entries, budget)
        first = entries[cut]
        assert isinstance(first, MessageEntry)
        assert first.message.role in ("user", "assistant"), budget


def test_cut_point_falls_back_to_the_call_when_only_results_follow() -> None:
    entries = entries_of(user(10), call("c1"), result("c1", 500))
    assert find_cut_point(entries, 100) == 1


# ---- compact -------------------------------------------------------------------------------


async def test_compaction_keeps_the_recent_messages_after_the_summary_on_reload(
    session: Session, store: SQLiteStore
) -> None:
    old = fill(session, user(100, "a"), call("c1"), result("c1", 300), reply(100, "b"))
    kept = fill(session, user(100, "c"), call("c2"), result("c2", 50), reply(60, "d"))
    model = Summariser("## Goal\nFinish the parser.")

    entry = await compact(
        session, FunctionModel(model), MODEL, CompactionSettings(keep_recent_tokens=200)
    )

    assert entry is not None
    assert entry.summary == "## Goal\nFinish the parser."
    assert entry.first_kept_entry_id == kept[0].id
    assert entry.tokens_before == context_tokens([e.message for e in old + kept])
    reloaded = Session.load(store, session.id)
    expected = [summary_message(entry), *(e.message for e in kept)]
    assert reloaded.context() == expected
    assert session.context() == expected


async def test_summary_request_carries_the_old_conversation_as_text_without_tools(
    session: Session,
) -> None:
    fill(session, UserMessage.of("Please fix parse_args in cli.py"), call("c1"),
         result("c1", 600), reply(100), user(100, "k"), reply(150, "k"))  # fmt: skip
    model = Summariser()

    await compact(session, FunctionModel(model), MODEL, CompactionSettings(keep_recent_tokens=200))

    [asked] = model.calls
    assert asked.tools == []
    assert asked.system_prompt == SUMMARY_SYSTEM_PROMPT
    assert "[User]: Please fix parse_args in cli.py" in model.prompt
    assert '[Assistant tool calls]: read(path="a.py")' in model.prompt
    assert "more characters truncated" in model.prompt  # the 2400-char tool result is clipped
    assert "kkkk" not in model.prompt  # kept messages are not summarised
    for section in ("## Goal", "## Constraints & Preferences", "## Progress", "### Done",
                    "### In Progress", "### Blocked", "## Key Decisions", "## Next Steps",
                    "## Critical Context"):  # fmt: skip
        assert section in model.prompt


async def test_custom_instructions_reach_the_summary_prompt(session: Session) -> None:
    fill(session, user(300), reply(300), user(100), reply(100))
    model = Summariser()

    await compact(
        session,
        FunctionModel(model),
        MODEL,
        CompactionSettings(keep_recent_tokens=150),
        custom_instructions="Focus on the database schema.",
    )

    assert "Focus on the database schema." in model.prompt


async def test_a_second_compaction_summarises_the_previous_summary(
    session: Session, store: SQLiteStore
) -> None:
    settings = CompactionSettings(keep_recent_tokens=200)
    fill(session, user(300, "a"), reply(300, "b"), user(100, "c"), reply(100, "d"))
    first = await compact(session, FunctionModel(Summariser("FIRST SUMMARY")), MODEL, settings)
    assert first is not None
    session = Session.load(store, session.id)  # the second round works from a reloaded session
    fill(session, user(150, "e"), reply(150, "f"))
    newest = fill(session, user(100, "g"), reply(100, "h"))
    model = Summariser("SECOND SUMMARY")

    second = await compact(session, FunctionModel(model), MODEL, settings)

    assert second is not None
    assert "<previous-summary>\nFIRST SUMMARY\n</previous-summary>" in model.prompt
    assert "cccc" in model.prompt and "ffff" in model.prompt
    assert "aaaa" not in model.prompt  # already inside the first summary
    assert Session.load(store, session.id).context() == [
        summary_message(second),
        *(e.message for e in newest),
    ]


async def test_a_model_error_raises_and_leaves_the_session_unchanged(
    session: Session, store: SQLiteStore
) -> None:
    fill(session, user(300), reply(300), user(100), reply(100))
    before_entries = list(session.entries)
    before_context = session.context()
    model = Summariser(Reply("429 rate limited", stop_reason="error"))

    with pytest.raises(CompactionError, match="429 rate limited"):
        await compact(
            session, FunctionModel(model), MODEL, CompactionSettings(keep_recent_tokens=150)
        )

    assert session.entries == before_entries
    assert session.context() == before_context
    assert store.entries(session.id) == before_entries


async def test_nothing_to_summarise_returns_none_without_asking_the_model(
    session: Session, store: SQLiteStore
) -> None:
    fill(session, user(10), reply(10))
    model = Summariser()

    entry = await compact(session, FunctionModel(model), MODEL, CompactionSettings())

    assert entry is None
    assert model.calls == []
    assert len(store.entries(session.id)) == 2


async def test_compacting_twice_in_a_row_does_nothing_the_second_time(session: Session) -> None:
    settings = CompactionSettings(keep_recent_tokens=150)
    fill(session, user(300), reply(300), user(100), reply(100))
    assert await compact(session, FunctionModel(Summariser()), MODEL, settings) is not None

    assert await compact(session, FunctionModel(Summariser()), MODEL, settings) is None


async def test_non_message_entries_are_summarised_away_without_harm(
    session: Session, store: SQLiteStore
) -> None:
    fill(session, user(300), reply(300))
    session.append(ModelChangeEntry("faux", "other"))
    kept = fill(session, user(100), reply(100))

    entry = await compact(
        session, FunctionModel(Summariser()), MODEL, CompactionSettings(keep_recent_tokens=150)
    )

    assert entry is not None
    assert Session.load(store, session.id).context() == [
        summary_message(entry),
        *(e.message for e in kept),
    ]


# ---- automatic compaction in the loop ----------------------------------------------------


class Agent:
    """A faux model that answers the agent and, separately, summary requests."""

    def __init__(self, summary: str | Reply = "AUTO SUMMARY") -> None:
        self.summariser = Summariser(summary)
        self.seen: list[list[Message]] = []

    def __call__(self, call: ModelCall) -> str | Reply:
        if call.system_prompt == SUMMARY_SYSTEM_PROMPT:
            return self.summariser(call)
        self.seen.append(call.messages)
        return "done"


async def run_prompt(
    session: Session,
    agent: Agent,
    hook: Callable[[AgentLoop], Awaitable[None]],
    tmp_path: Path,
) -> tuple[RunOutcome, list[LoopEvent]]:
    provider = FunctionModel(agent)
    events: list[LoopEvent] = []
    async with asyncio.TaskGroup() as tg:
        loop = AgentLoop(
            session,
            task_group=tg,
            resolve_provider=lambda ref: provider,
            model=MODEL,
            thinking="off",
            tools=[],
            system_prompt="You are a test agent.",
            output_dir=tmp_path / "out",
            hooks=LoopHooks(before_model_call=hook),
        )
        loop.listeners.append(events.append)
        outcome = await loop.prompt("what next?")
        await loop.close()
    return outcome, events


SETTINGS = CompactionSettings(reserve_tokens=100, keep_recent_tokens=150)


async def test_auto_compaction_leaves_a_context_below_the_threshold_alone(
    session: Session, tmp_path: Path
) -> None:
    fill(session, user(300), reply(300), user(100), reply(100))
    agent = Agent()

    outcome, events = await run_prompt(
        session, agent, auto_compaction(SETTINGS, lambda ref: 10_000), tmp_path
    )

    assert outcome.status == "completed"
    assert agent.summariser.calls == []
    assert not any(isinstance(e, Compacted) for e in events)
    assert not any(isinstance(e, CompactionEntry) for e in session.entries)


async def test_auto_compaction_compacts_above_the_threshold_and_reports_it(
    session: Session, tmp_path: Path
) -> None:
    fill(session, user(300), reply(300), user(100), reply(100))
    agent = Agent()
    windows: list[ModelRef] = []

    def window_of(ref: ModelRef) -> int:
        windows.append(ref)
        return 800

    outcome, events = await run_prompt(
        session, agent, auto_compaction(SETTINGS, window_of), tmp_path
    )

    assert outcome.status == "completed"
    assert windows == [MODEL]
    assert len(agent.summariser.calls) == 1
    [compacted] = [e for e in events if isinstance(e, Compacted)]
    assert compacted.summary == "AUTO SUMMARY"
    assert compacted.tokens_before == 300 + 300 + 100 + 100 + estimate_tokens(
        UserMessage.of("what next?")
    )
    [first, *_] = agent.seen[0]
    assert isinstance(first, UserMessage) and "AUTO SUMMARY" in first.text


async def test_a_failed_auto_compaction_does_not_end_the_run(
    session: Session, tmp_path: Path
) -> None:
    fill(session, user(300), reply(300), user(100), reply(100))
    agent = Agent(Reply("overloaded", stop_reason="error"))

    outcome, events = await run_prompt(
        session, agent, auto_compaction(SETTINGS, lambda ref: 800), tmp_path
    )

    assert outcome.status == "completed"
    assert len(agent.summariser.calls) == 1
    assert not any(isinstance(e, Compacted) for e in events)
    assert len(agent.seen[0]) == 5  # the full context went to the model
