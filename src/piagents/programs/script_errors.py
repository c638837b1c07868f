"""The error text of a failed script: a Python traceback in the script's own lines.

Monty numbers the lines of each feed from 1 and names the feed `<python-input-N>`;
the prelude is an earlier feed than the script, so the script's lines are its
own. The text keeps only the script's frames (a failure inside the prelude, e.g.
in `tools.read`, shows the script line that called it) and names the file
`<program>`. An exception raised by a host function reaches the script as the
nearest built-in exception; the last line names the host's own class again
(`ToolError: ...` rather than `RuntimeError: ...`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

SCRIPT_FILENAME = "<program>"


class TracebackFrame(Protocol):
    """What the text needs of one of monty's `Frame`s."""

    @property
    def filename(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def function_name(self) -> str | None: ...
    @property
    def source_line(self) -> str | None: ...


def feed_filename(feed_index: int) -> str:
    """The filename monty gives the session's `feed_index`-th feed (from 0)."""
    return f"<python-input-{feed_index}>"


def traceback_text(
    frames: Sequence[TracebackFrame],
    type_and_message: str,
    *,
    script_feed: str,
    script_lines: Sequence[str] = (),
    host_errors: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """A traceback of `frames` that belong to the feed `script_feed`, ending with
    `type_and_message` ("ValueError: bad value"). Each frame shows its line of
    `script_lines` (the script as written, before bridging), or else monty's copy
    of it. `host_errors` maps the message
    of an exception a host function raised to the names of its class and of the
    classes it derives from (its MRO), most derived first."""
    lines = ["Traceback (most recent call last):"]
    for frame in frames:
        if frame.filename != script_feed:
            continue
        where = f'  File "{SCRIPT_FILENAME}", line {frame.line}'
        if frame.function_name is not None:
            where += f", in {frame.function_name}"
        lines.append(where)
        if 0 < frame.line <= len(script_lines):
            source = script_lines[frame.line - 1].strip()
        else:
            source = (frame.source_line or "").strip()
        if source:
            lines.append(f"    {source}")
    lines.append(_host_named(type_and_message, host_errors or {}))
    return "\n".join(lines)


def _host_named(type_and_message: str, host_errors: Mapping[str, Sequence[str]]) -> str:
    name, sep, message = type_and_message.partition(": ")
    classes = host_errors.get(message, ()) if sep else ()
    if name not in classes:  # not the host's exception, though its message is the same
        return type_and_message
    return f"{classes[0]}: {message}"
