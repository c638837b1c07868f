"""Labels of managed agents: the pattern, its check, and automatic labels.

A label is the live, logical name of a managed agent (`implementer-1`): a
lower-case letter, then up to 31 of `a-z 0-9 _ -`. When `delegate` names none,
the agent gets `<definition>-<n>` with the smallest `n >= 1` that no live agent
holds, its definition part shortened so the whole label still fits.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection

from piagents.supervision import error_texts
from piagents.supervision.errors import invalid_request

LABEL_PATTERN = re.compile(r"[a-z][a-z0-9_-]{0,31}")
"""Matched against the whole label (`fullmatch`), as `^[a-z][a-z0-9_-]{0,31}$`."""
MAX_LABEL_LENGTH = 32
_NOT_LABEL_CHARACTERS = re.compile(r"[^a-z0-9_-]+")
_FALLBACK_BASE = "agent"


def is_valid_label(label: str) -> bool:
    return LABEL_PATTERN.fullmatch(label) is not None


def validate_label(label: str, operation: str = "delegate") -> str:
    """`label` itself when it is a valid label; otherwise an invalid_request error."""
    if not is_valid_label(label):
        raise invalid_request(operation, error_texts.invalid_label(json.dumps(label)))
    return label


def label_base(definition: str) -> str:
    """The definition name as a label's first part: lower-case, label characters only.

    Definition names already follow the label pattern and stay as they are; any
    other name is lower-cased, runs of other characters become `-`, and a name
    that does not start with a letter gets the prefix `agent-`.
    """
    base = _NOT_LABEL_CHARACTERS.sub("-", definition.lower()).strip("-")
    if not base:
        return _FALLBACK_BASE
    if not base[0].isalpha():
        base = f"{_FALLBACK_BASE}-{base}"
    return base


def numbered_label(definition: str, n: int) -> str:
    """`<definition>-<n>`, the definition part cut so the label is at most 32 characters."""
    if n < 1:
        raise ValueError(f"label numbers start at 1, got {n}")
    suffix = f"-{n}"
    base = label_base(definition)[: MAX_LABEL_LENGTH - len(suffix)]
    label = base + suffix
    if not is_valid_label(label):  # a number so long that no definition part fits
        raise ValueError(f"no label can carry the number {n}")
    return label


def automatic_label(definition: str, taken: Collection[str]) -> str:
    """`<definition>-<n>` with the smallest `n >= 1` not in `taken` (the live labels)."""
    n = 1
    while (label := numbered_label(definition, n)) in taken:
        n += 1
    return label
