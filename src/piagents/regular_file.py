"""Reading a file that may be hostile: only a regular file, never more than a limit.

A path may name a FIFO (opening it for reading would block), a device (`/dev/zero`
never ends) or a pseudo file of procfs or sysfs (`/proc/self/environ` says it holds
0 bytes and then yields the process's environment). `read_regular_file` opens
without blocking, accepts only a regular file, reads at most `limit + 1` bytes
whatever the file's size claims, and accepts the bytes only when they are as many
as the file says it holds: a pseudo file's size is not its content.
"""

from __future__ import annotations

import os
import stat


class NotARegularFile(OSError):
    """The path names a directory, FIFO, device, socket or pseudo file."""


class FileTooLarge(OSError):
    """The file holds more than the limit; `size` is at least how much it holds."""

    def __init__(self, path: str, size: int, limit: int) -> None:
        super().__init__(f"{path} is larger than {limit} bytes")
        self.size = size


def read_regular_file(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them.

    Raises `NotARegularFile`, `FileTooLarge`, or the `OSError` of opening or reading.
    A path with a NUL byte raises `ValueError`, as `open` does.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        before = os.fstat(fd)
        if not stat.S_ISREG(before.st_mode):
            raise NotARegularFile(f"{os.fsdecode(path)} is not a regular file")
        if before.st_size > limit:
            raise FileTooLarge(os.fsdecode(path), before.st_size, limit)
        data = read_up_to(fd, limit + 1)
        after = os.fstat(fd).st_size
        if len(data) > limit and after > limit:
            raise FileTooLarge(os.fsdecode(path), max(len(data), after), limit)
        if len(data) != after:
            why = "changed while it was read" if after != before.st_size else "is a pseudo file"
            raise NotARegularFile(f"{os.fsdecode(path)} {why}: its size is not its content")
        return data
    finally:
        os.close(fd)


def read_regular_prefix(path: str | os.PathLike[str], limit: int) -> tuple[bytes, bool]:
    """The first `limit` bytes of the regular file at `path`, and whether they are all of
    it. Never more than the file says it holds: a pseudo file whose content is not its
    size raises `NotARegularFile`, as do FIFOs, devices and sockets."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        size = os.fstat(fd)
        if not stat.S_ISREG(size.st_mode):
            raise NotARegularFile(f"{os.fsdecode(path)} is not a regular file")
        want = min(size.st_size, limit)
        data = read_up_to(fd, want + 1)
        if len(data) < want or (len(data) > want and size.st_size <= limit):
            raise NotARegularFile(f"{os.fsdecode(path)}: its size is not its content")
        return data[:want], size.st_size <= limit
    finally:
        os.close(fd)


def read_whole_regular_file(path: str | os.PathLike[str]) -> bytes:
    """Every byte of the file at `path` when it is a regular file (procfs ones included),
    opened without blocking: a FIFO, device or socket raises `NotARegularFile`, a
    directory `IsADirectoryError`."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(f"{os.fsdecode(path)} is a directory")
        if not stat.S_ISREG(mode):
            raise NotARegularFile(f"{os.fsdecode(path)} is not a regular file")
        with os.fdopen(os.dup(fd), "rb") as file:
            return file.read()
    finally:
        os.close(fd)


def read_up_to(fd: int, limit: int) -> bytes:
    """At most `limit` bytes from `fd`, fewer at its end."""
    chunks: list[bytes] = []
    left = limit
    while left > 0:
        chunk = os.read(fd, left)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
