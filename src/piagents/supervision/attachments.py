"""The `files` of a message: resolved, embedded or referenced, and checked against the limit.

`resolve_attachments` (sync I/O) resolves each path from the caller's working
directory; it must name a readable regular file, and is canonicalised with
`os.path.realpath` (a path listed twice is attached once). In the order given,
a file is embedded whole when its bytes are strict UTF-8 and fit what is left
of the inline budget (`inline_attachment_limit_bytes`); otherwise it is passed
as a reference (`binary` or `too_large`).

`compose_message` (pure) appends the attachments to the message and holds the
result to the mailbox payload limit (`mailbox_payload_limit_bytes`): an
embedded file is kept, in order, only while the whole message still fits with
every later file as a reference; one that does not fit becomes a `too_large`
reference. A message that is over the limit even so is an invalid_request.

The text appended to a message (`render_attachments`)::

    <message>

    Attached file: /abs/src/parser.py
    ```
    <contents>
    ```

    Attached by path, not embedded (read them from disk):
    - /abs/build.log (2000000 bytes, too large to embed)
    - /abs/logo.png (5120 bytes, binary)

A fence is one backtick longer than the longest run of backticks in the file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from piagents.regular_file import FileTooLarge, NotARegularFile, read_regular_file
from piagents.supervision import error_texts, texts
from piagents.supervision.errors import invalid_request

ReferenceReason: TypeAlias = Literal["binary", "too_large"]


@dataclass(frozen=True, slots=True)
class EmbeddedFile:
    """A file whose whole text travels in the message."""

    path: str  # canonical
    text: str
    size: int  # bytes


@dataclass(frozen=True, slots=True)
class FileReference:
    """A file passed by its canonical path, with why it was not embedded."""

    path: str
    size: int
    reason: ReferenceReason


Attachment: TypeAlias = EmbeddedFile | FileReference


@dataclass(frozen=True, slots=True)
class ComposedMessage:
    """The message as delivered, and the attachments as finally embedded or referenced."""

    text: str
    attachments: tuple[Attachment, ...]

    @property
    def size(self) -> int:
        return len(self.text.encode("utf-8"))


# ---- resolving (I/O) ------------------------------------------------------------------


def resolve_attachments(
    files: Sequence[str],
    cwd: str | os.PathLike[str],
    *,
    inline_limit_bytes: int,
    operation: str,
) -> tuple[Attachment, ...]:
    """Each of `files` as an embedded file or a reference; a path that is not a readable
    regular file is an invalid_request naming it."""
    out: list[Attachment] = []
    seen: set[str] = set()
    budget = inline_limit_bytes
    if "\0" in os.fspath(cwd):
        raise invalid_request(operation, error_texts.cwd_not_a_path())
    for given in files:
        if "\0" in given:
            raise invalid_request(operation, error_texts.file_not_a_path(given))
        path = os.path.realpath(os.path.join(os.fspath(cwd), given))
        if path in seen:
            continue
        seen.add(path)
        attachment = _read(given, path, budget, operation)
        if isinstance(attachment, EmbeddedFile):
            budget -= attachment.size
        out.append(attachment)
    return tuple(out)


def _read(given: str, path: str, budget: int, operation: str) -> Attachment:
    try:
        # Opened without blocking (a FIFO cannot hang the call) and read only up to the
        # budget, whatever the file's size claims (a procfs file says 0 bytes).
        data = read_regular_file(path, max(budget, 0))
    except FileNotFoundError:
        raise invalid_request(operation, error_texts.file_missing(given, path)) from None
    except FileTooLarge as exc:
        return FileReference(path, exc.size, "too_large")
    except NotARegularFile:
        raise invalid_request(operation, error_texts.file_not_regular(given, path)) from None
    except OSError as exc:
        raise invalid_request(
            operation, error_texts.file_cannot_be_read(given, path, exc.strerror)
        ) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return FileReference(path, len(data), "binary")
    return EmbeddedFile(path, text, len(data))


# ---- rendering and the payload limit (pure) -----------------------------------------------

_BACKTICK_RUNS = re.compile(r"`+")


def _fence(text: str) -> str:
    longest = max((len(run) for run in _BACKTICK_RUNS.findall(text)), default=0)
    return "`" * max(3, longest + 1)


def _embedded_block(f: EmbeddedFile) -> str:
    fence = _fence(f.text)
    body = f.text if not f.text or f.text.endswith("\n") else f.text + "\n"
    return texts.attached_file(f.path, fence, body)


def render_attachments(attachments: Sequence[Attachment]) -> str:
    """The text appended to a message: embedded files, then the references ("" for none)."""
    blocks = [_embedded_block(a) for a in attachments if isinstance(a, EmbeddedFile)]
    references = [a for a in attachments if isinstance(a, FileReference)]
    if references:
        lines = [texts.ATTACHED_BY_PATH]
        lines += [texts.attached_reference(r.path, r.size, r.reason) for r in references]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def with_attachments(message: str, attachments: Sequence[Attachment]) -> str:
    """`message`, then a blank line and the rendered attachments when there are any."""
    rendered = render_attachments(attachments)
    return f"{message}\n\n{rendered}" if rendered else message


def _as_reference(a: Attachment) -> FileReference:
    return a if isinstance(a, FileReference) else FileReference(a.path, a.size, "too_large")


def compose_message(
    message: str,
    attachments: Sequence[Attachment],
    *,
    payload_limit_bytes: int,
    operation: str,
) -> ComposedMessage:
    """The message with its attachments, within the mailbox payload limit (module docstring)."""
    chosen: list[Attachment] = [_as_reference(a) for a in attachments]
    for i, a in enumerate(attachments):
        if isinstance(a, EmbeddedFile):
            trial = [*chosen[:i], a, *chosen[i + 1 :]]
            if _size(with_attachments(message, trial)) <= payload_limit_bytes:
                chosen = trial
    text = with_attachments(message, chosen)
    size = _size(text)
    if size > payload_limit_bytes:
        raise invalid_request(
            operation,
            error_texts.message_too_large(size, payload_limit_bytes, with_references=bool(chosen)),
            next_action=error_texts.NEXT_SHORTEN,
        )
    return ComposedMessage(text, tuple(chosen))


def attachment_details(attachments: Sequence[Attachment]) -> list[dict[str, Any]]:
    """The attachments as tool result details: path, size, and how each travelled."""
    out: list[dict[str, Any]] = []
    for a in attachments:
        if isinstance(a, EmbeddedFile):
            out.append({"path": a.path, "size": a.size, "embedded": True})
        else:
            out.append({"path": a.path, "size": a.size, "embedded": False, "reason": a.reason})
    return out


def _size(text: str) -> int:
    return len(text.encode("utf-8"))
