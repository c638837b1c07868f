"""What the `program` tool's `wait` returns (pure): one block per ended Program, the
ones still running, and truncation as the `agent` tool's `wait` does it
(`agents.wait_blocks`): blocks are kept while they fit, the one that crosses the limit
is cut but keeps its closing tag, later ones are omitted and stay unreturned."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from piagents.agents.wait_blocks import Block, render_blocks
from piagents.harness.tools.truncation import MAX_BYTES, MAX_LINES
from piagents.programs import texts

CLOSING = "</program-result>"


@dataclass(frozen=True, slots=True)
class ProgramItem:
    program_id: str
    short_id: str
    outcome: str  # completed | failed | stopped
    text: str


@dataclass(frozen=True, slots=True)
class ProgramWait:
    text: str
    returned: tuple[str, ...]  # Program IDs whose results were given (cut ones too)
    full_text: str | None  # set when truncated: saved to the file the notice names


def render_program_wait(
    items: Sequence[ProgramItem],
    running: Sequence[str],
    *,
    full_output_path: str = "",
    max_lines: int = MAX_LINES,
    max_bytes: int = MAX_BYTES,
) -> ProgramWait:
    """`running`: the short IDs of the selected Programs still running."""
    if not items and not running:
        return ProgramWait(texts.NO_RESULTS, (), None)
    tail = texts.still_running(running) if running else None
    out = render_blocks(
        [_block(i) for i in items],
        tail,
        lambda omitted: texts.results_omitted([items[i].short_id for i in omitted]),
        alone=len(items) == 1 and items[0].outcome == "completed" and tail is None,
        full_output_path=full_output_path,
        max_lines=max_lines,
        max_bytes=max_bytes,
    )
    omitted = set(out.omitted)
    returned = tuple(i.program_id for n, i in enumerate(items) if n not in omitted)
    return ProgramWait(out.text, returned, out.full_text)


def _block(item: ProgramItem) -> Block:
    opening = texts.program_result(item.short_id, item.outcome, "").split("\n")[0]
    return Block(item.text, opening, CLOSING, item.short_id)
