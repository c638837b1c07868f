"""What the words and the standard input of `pi-agents` mean.

The prompt is the words given (joined by spaces), followed by whatever is piped
to standard input; standard input is read only when it is not a terminal. A
prompt that is a single word naming, or close to, a command, with nothing piped,
is refused as a mistyped command (`pi-agents sessoins`), so it never reaches a
model; words after `--` are always the prompt.
"""

from __future__ import annotations

import difflib
import os
import select
import sys
from collections.abc import Callable, Sequence

COMMANDS = (
    "sessions",
    "workers",
    "export",
    "trust",
    "serve",
    "worker",
)
NOTICE_AFTER_S = 3.0  # silence on a pipe for this long: say what we are waiting for
MAX_PIPED_BYTES = 8 * 1024 * 1024


class PipedInputError(Exception):
    """Standard input could not be read, or is too large to be a prompt."""


def mistyped_command(words: Sequence[str], argv: Sequence[str]) -> str | None:
    """The error for a prompt that looks like a command, or None when it is a prompt.

    `words` are the prompt's words as parsed, `argv` the whole command line."""
    if "--" in argv or len(words) != 1:
        return None
    word = words[0].strip()
    if not word or any(c.isspace() for c in word):
        return None
    close = difflib.get_close_matches(word.lower(), COMMANDS, n=1, cutoff=0.75)
    if not close:
        return None
    command = close[0]
    as_prompt = f"to send it to the model as a prompt, put -- before it: `pi-agents -p -- {word}`"
    if word == command:
        return f"{command!r} is a command and must come first: `pi-agents {command} …`; {as_prompt}"
    return f"unknown command {word!r}: did you mean `pi-agents {command}`? Or, {as_prompt}"


def read_piped_stdin(notice: Callable[[str], None]) -> str | None:
    """The text piped to standard input, stripped; None when there is none: standard
    input closed, a terminal, or empty (as `/dev/null` is).

    A pipe is read to its end, however slow its writer; if nothing arrives for
    NOTICE_AFTER_S seconds, `notice` is told once what we wait for."""
    stream = sys.stdin
    if stream is None:
        return None
    try:
        fd = stream.fileno()
    except (OSError, ValueError):
        return None  # closed, or replaced by something that is not a file
    try:
        if os.isatty(fd):
            return None
        if not _ready(fd, NOTICE_AFTER_S):
            notice(
                "waiting for the input piped to standard input to end; "
                "to run without it, give the command </dev/null"
            )
        data = _read_all(fd)
    except OSError as exc:
        raise PipedInputError(f"cannot read standard input: {exc.strerror or exc}") from exc
    text = data.decode("utf-8", errors="replace").strip()
    return text or None


def _ready(fd: int, timeout: float) -> bool:
    try:
        readable, _, _ = select.select([fd], [], [], timeout)
    except (OSError, ValueError):
        return True  # cannot be polled (not a pipe or socket): just read it
    return bool(readable)


def _read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while chunk := os.read(fd, 65536):
        size += len(chunk)
        if size > MAX_PIPED_BYTES:
            raise PipedInputError(
                f"the input piped to standard input is over {MAX_PIPED_BYTES // (1024 * 1024)} "
                "MiB, too large for a prompt: save it to a file and name the file in the prompt"
            )
        chunks.append(chunk)
    return b"".join(chunks)


def prompt_text(words: Sequence[str], piped: str | None) -> str:
    """The words given, then the piped text after a blank line."""
    given = " ".join(words).strip()
    if given and piped:
        return f"{given}\n\n{piped}"
    return given or piped or ""
