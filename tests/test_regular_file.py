"""Reading a file that may be hostile: regular files only, never more than the limit."""

import os
from pathlib import Path

import pytest

from piagents.regular_file import FileTooLarge, NotARegularFile, read_regular_file


def test_a_regular_file_is_read_whole_up_to_the_limit(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"12345")
    assert read_regular_file(tmp_path / "f", 5) == b"12345"


def test_a_file_over_the_limit_is_refused_with_its_size(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"123456")
    with pytest.raises(FileTooLarge) as caught:
        read_regular_file(tmp_path / "f", 5)
    assert caught.value.size == 6


@pytest.mark.parametrize("path", ["/proc/self/environ", "/proc/self/status", "/dev/zero"])
def test_pseudo_files_and_devices_are_not_regular_files(path: str) -> None:
    with pytest.raises(NotARegularFile):
        read_regular_file(path, 1_000_000)


def test_a_pseudo_file_larger_than_the_limit_is_still_not_regular() -> None:
    with pytest.raises(NotARegularFile):
        read_regular_file("/proc/self/environ", 1)


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(NotARegularFile):
        read_regular_file(tmp_path / "pipe", 10)


def test_reading_whole_takes_procfs_files_but_never_a_fifo_or_a_device(tmp_path: Path) -> None:
    from piagents.regular_file import read_whole_regular_file

    assert b"Name:" in read_whole_regular_file("/proc/self/status")
    os.mkfifo(tmp_path / "pipe")
    for path in (tmp_path / "pipe", Path("/dev/zero")):
        with pytest.raises(NotARegularFile):
            read_whole_regular_file(path)
    with pytest.raises(IsADirectoryError):
        read_whole_regular_file(tmp_path)
