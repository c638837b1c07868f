from pathlib import Path

import pytest

from piagents.harness.tools.base import ToolContext, ToolError, validation_error
from piagents.harness.tools.edit import EditTool


async def edit(ctx: ToolContext, path: str, old: str, new: str) -> str:
    result = await EditTool().execute({"path": path, "oldText": old, "newText": new}, ctx)
    return result.text


async def test_edit_replaces_the_unique_text_and_returns_a_diff(
    ctx: ToolContext, workdir: Path
) -> None:
    (workdir / "f.py").write_text("a = 1\nb = 2\nc = 3\n")
    result = await EditTool().execute(
        {"path": "f.py", "oldText": "b = 2", "newText": "b = 20\nbb = 21"}, ctx
    )
    assert result.text == "Successfully replaced text in f.py."
    assert (workdir / "f.py").read_text() == "a = 1\nb = 20\nbb = 21\nc = 3\n"
    assert result.details["firstChangedLine"] == 2
    diff = result.details["diff"]
    assert diff.startswith("--- a/f.py\n+++ b/f.py\n@@")
    assert "\n-b = 2\n+b = 20\n+bb = 21\n" in diff


async def test_text_that_is_not_in_the_file_is_an_error(ctx: ToolContext, workdir: Path) -> None:
    (workdir / "f.txt").write_text("hello world\n")
    with pytest.raises(ToolError) as caught:
        await edit(ctx, "f.txt", "hello  world", "bye")
    assert str(caught.value) == (
        "Could not find the exact text in f.txt. The old text must match exactly "
        "including all whitespace and newlines."
    )


async def test_text_found_more_than_once_is_an_error_asking_for_context(
    ctx: ToolContext, workdir: Path
) -> None:
    (workdir / "f.txt").write_text("x = 1\nx = 1\nx = 1\n")
    with pytest.raises(ToolError) as caught:
        await edit(ctx, "f.txt", "x = 1", "x = 2")
    assert str(caught.value) == (
        "Found 3 occurrences of the text in f.txt. The text must be unique. "
        "Please provide more context to make it unique."
    )
    assert (workdir / "f.txt").read_text() == "x = 1\nx = 1\nx = 1\n"


async def test_identical_old_and_new_text_is_an_error(ctx: ToolContext, workdir: Path) -> None:
    (workdir / "f.txt").write_text("same\n")
    with pytest.raises(ToolError, match=r"No changes made to f\.txt"):
        await edit(ctx, "f.txt", "same", "same")


async def test_crlf_line_endings_survive_an_edit_written_with_lf(
    ctx: ToolContext, workdir: Path
) -> None:
    (workdir / "win.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    await edit(ctx, "win.txt", "two\nthree", "2\n3")
    assert (workdir / "win.txt").read_bytes() == b"one\r\n2\r\n3\r\n"


async def test_a_byte_order_mark_survives_an_edit(ctx: ToolContext, workdir: Path) -> None:
    (workdir / "bom.txt").write_bytes(b"\xef\xbb\xbfhello world\n")
    await edit(ctx, "bom.txt", "world", "there")
    assert (workdir / "bom.txt").read_bytes() == b"\xef\xbb\xbfhello there\n"


async def test_text_at_the_start_of_a_file_with_a_bom_still_matches(
    ctx: ToolContext, workdir: Path
) -> None:
    (workdir / "bom.txt").write_bytes(b"\xef\xbb\xbfhello\r\n")
    await edit(ctx, "bom.txt", "hello", "bye")
    assert (workdir / "bom.txt").read_bytes() == b"\xef\xbb\xbfbye\r\n"


async def test_editing_a_missing_file_or_a_directory_is_a_clear_error(
    ctx: ToolContext, workdir: Path
) -> None:
    (workdir / "sub").mkdir()
    with pytest.raises(ToolError, match=r"File not found: nope\.txt"):
        await edit(ctx, "nope.txt", "a", "b")
    with pytest.raises(ToolError, match="Is a directory: sub"):
        await edit(ctx, "sub", "a", "b")


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"path": "a", "oldText": "x"}, "newText"),
        ({"path": "a", "oldText": "", "newText": "y"}, "oldText"),
        ({"path": "a", "old_text": "x", "oldText": "x", "newText": "y"}, "old_text"),
    ],
)
def test_the_edit_schema_rejects_a_malformed_call_naming_the_field(
    args: dict[str, object], field: str
) -> None:
    message = validation_error(EditTool(), args)
    assert message is not None and field in message


async def test_a_fifo_is_refused_without_blocking(ctx: ToolContext, workdir: Path) -> None:
    import os

    os.mkfifo(workdir / "pipe")
    with pytest.raises(ToolError, match="Not a regular file: pipe"):
        await edit(ctx, "pipe", "a", "b")
