"""A count with its noun, singular or plural as the count asks (pure): `1 second`,
`2 seconds`, `1.5 seconds`, `0 entries`. For the texts we write ourselves; the texts the
specs give (and Pi's own) are kept as they are given."""

from __future__ import annotations


def counted(n: float, singular: str, plural: str | None = None) -> str:
    """`n` and its noun: singular only for exactly one; `plural` defaults to `singular`
    plus "s". A float is shown as `:g` shows it (`1`, `0.5`)."""
    noun = singular if n == 1 else (plural or f"{singular}s")
    shown = f"{n:g}" if isinstance(n, float) else str(n)
    return f"{shown} {noun}"
