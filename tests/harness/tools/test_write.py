from pathlib import Path

import pytest

from piagents.harness.tools.base import ToolContext, ToolError, validation_error
from piagents.harness.tools.write import WriteTool


async def test_write_creates_parent_directories_and_reports_the_byte_count(
    ctx: ToolContext, workdir: Path
) -> None:
    result = await WriteTool().execute({"path": "a/b/c.txt", "content": "héllo\n"}, ctx)
    assert result.text == "Successfully wrote 7 bytes to a/b/c.txt"
    assert (workdir / "a" / "b" / "c.txt").read_text(encoding="utf-8") == "héllo\n"


async def test_write_overwrites_an_existing_file(ctx: ToolContext, workdir: Path) -> None:
    (workdir / "f.txt").write_text("old contents that are longer")
    await WriteTool().execute({"path": "f.txt", "content": "new"}, ctx)
    assert (workdir / "f.txt").read_text() == "new"


async def test_write_accepts_an_absolute_path(ctx: ToolContext, tmp_path: Path) -> None:
    target = tmp_path / "abs" / "x.txt"
    result = await WriteTool().execute({"path": str(target), "content": ""}, ctx)
    assert result.text == f"Successfully wrote 0 bytes to {target}"
    assert target.read_text() == ""


async def test_writing_onto_a_directory_is_a_clear_error(ctx: ToolContext, workdir: Path) -> None:
    (workdir / "dir").mkdir()
    with pytest.raises(ToolError, match="Is a directory: dir"):
        await WriteTool().execute({"path": "dir", "content": "x"}, ctx)


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"path": "a"}, "content"),
        ({"path": "a", "content": 5}, "content"),
        ({"content": ""}, "path"),
    ],
)
def test_the_write_schema_rejects_a_malformed_call_naming_the_field(
    args: dict[str, object], field: str
) -> None:
    message = validation_error(WriteTool(), args)
    assert message is not None and field in message


async def test_writing_onto_a_fifo_is_refused_without_blocking(
    ctx: ToolContext, workdir: Path
) -> None:
    import os

    os.mkfifo(workdir / "pipe")
    with pytest.raises(ToolError, match="Not a regular file: pipe"):
        await WriteTool().execute({"path": "pipe", "content": "x"}, ctx)
