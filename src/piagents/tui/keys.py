"""Alt+Enter from terminals without the kitty keyboard protocol.

Terminals and tmux send Alt+Enter as ESC CR. Textual's parser reads the ESC
as "alt" but maps CR through a table that drops it, so the app would see a
plain Enter and send a followUp as a steer. One table entry fixes that.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

ALT_ENTER_SEQUENCE = "\x1b\r"


@dataclass(frozen=True)
class _Key:
    """Looks enough like a `textual.keys.Keys` member: the parser reads `.value`."""

    value: str


def enable_alt_enter() -> None:
    from textual import _ansi_sequences

    table = cast(dict[str, Any], _ansi_sequences.ANSI_SEQUENCES_KEYS)
    table.setdefault(ALT_ENTER_SEQUENCE, (_Key("alt+enter"),))
