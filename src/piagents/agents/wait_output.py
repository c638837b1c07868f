"""What `wait` returns: result blocks, pending Agents, and truncation (pure); the
blocks are cut as every face's `wait` cuts them (`wait_blocks`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from piagents.agents import texts
from piagents.agents.texts import Shown
from piagents.agents.wait_blocks import Block, framed, render_blocks, truncation_notice
from piagents.harness.tools.truncation import MAX_BYTES, MAX_LINES

__all__ = [
    "ResultItem",
    "UnreadBlocks",
    "WaitOutput",
    "block_of",
    "render_wait",
    "truncation_notice",
]

CLOSING = "</agent-result>"


@dataclass(frozen=True, slots=True)
class ResultItem:
    input_id: str
    agent_id: str
    shown: Shown
    outcome: str  # completed | failed | aborted
    text: str
    history: bool


@dataclass(frozen=True, slots=True)
class WaitOutput:
    text: str
    details: dict[str, Any]
    returned: tuple[str, ...]  # input IDs returned (truncated ones included): now read
    full_text: str | None  # set when truncated: saved to a file named in the notice


def render_wait(
    items: Sequence[ResultItem],
    pending: Sequence[tuple[str, Shown]],
    interrupted: bool,
    *,
    blocks: Sequence[Block] | None = None,
    full_output_path: str = "",
    max_lines: int = MAX_LINES,
    max_bytes: int = MAX_BYTES,
) -> WaitOutput:
    """Blocks in order; the one crossing the limit is cut but keeps its closing tag.
    `blocks`: the items' blocks (`block_of`), when the caller kept them made."""
    tail: list[str] = []
    if pending:
        tail.append(texts.still_pending([s for _, s in pending]))
    if interrupted:
        tail.append(texts.STOPPED_WAITING)
    pending_json = [{"id": agent_id, "name": s.name} for agent_id, s in pending]

    if not items and not pending:
        details: dict[str, Any] = {"results": [], "pending": []}
        if interrupted:
            details["interrupted"] = True
            return WaitOutput(texts.STOPPED_WAITING, details, (), None)
        return WaitOutput(texts.NO_RESULTS, details, (), None)

    unread = [i for i in items if not i.history]
    # A single unread completed result is the answer alone.
    alone = len(items) == 1 and len(unread) == 1 and unread[0].outcome == "completed" and not tail
    out = render_blocks(
        [block_of(i) for i in items] if blocks is None else blocks,
        "\n".join(tail) if tail else None,
        lambda omitted: texts.results_omitted([items[i].shown for i in omitted]),
        alone=alone,
        full_output_path=full_output_path,
        max_lines=max_lines,
        max_bytes=max_bytes,
    )
    results_json: list[dict[str, Any]] = [
        {
            "id": i.agent_id,
            "name": i.shown.name,
            "state": i.outcome,
            "history": i.history,
            "result": i.text,
        }
        for i in items
    ]
    details = {"results": results_json, "pending": pending_json}
    if out.truncated:
        if out.cut is not None and out.cut[0] not in out.omitted:
            results_json[out.cut[0]]["result"] = out.cut[1].text
        for index in out.omitted:
            results_json[index].pop("result", None)
        details["truncation"] = out.cut[1].to_json() if out.cut is not None else None
        details["fullOutputPath"] = full_output_path
    if interrupted:
        details["interrupted"] = True
    omitted = set(out.omitted)
    returned = tuple(i.input_id for n, i in enumerate(items) if n not in omitted)
    return WaitOutput(out.text, details, returned, out.full_text)


def block_of(item: ResultItem) -> Block:
    opening = texts.agent_result(item.shown, item.outcome, "", item.history).split("\n")[0]
    return Block(
        item.text, opening, CLOSING, texts.label(item.shown), framed(opening, item.text, CLOSING)
    )


class UnreadBlocks:
    """One reader's unread results with their blocks, made once each. A wait over 1,000
    results returns them a page at a time, and every page names all those left (the
    full text, the omitted line): without this, each page would make every block left
    again. What they show of their Agents (names, short IDs) is known to hold while the
    directory's `version` does; a result is forgotten once it is read."""

    def __init__(self) -> None:
        self.version = -1
        self._made: dict[str, tuple[ResultItem, Block]] = {}

    def at(self, version: int) -> UnreadBlocks:
        if version != self.version:  # an Agent was added or renamed: make them again
            self._made.clear()
            self.version = version
        return self

    def get(self, input_id: str) -> tuple[ResultItem, Block] | None:
        return self._made.get(input_id)

    def put(self, item: ResultItem) -> tuple[ResultItem, Block]:
        made = self._made[item.input_id] = (item, block_of(item))
        return made

    def forget(self, input_ids: Sequence[str]) -> None:
        for input_id in input_ids:
            self._made.pop(input_id, None)

    def __len__(self) -> int:
        return len(self._made)
