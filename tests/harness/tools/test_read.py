import base64
from pathlib import Path

import pytest

from piagents.harness.tools import BUILTIN_TOOL_NAMES, builtin_tools
from piagents.harness.tools.base import ToolContext, ToolError, validation_error
from piagents.harness.tools.read import ReadTool

# A 1x1 transparent PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)


def write_lines(path: Path, lines: list[str]) -> None:
    path.write_text("".join(f"{line}\n" for line in lines))


async def read(ctx: ToolContext, **args: object) -> str:
    return (await ReadTool().execute(dict(args), ctx)).text


def test_builtin_tools_come_in_pis_order_with_complete_metadata() -> None:
    tools = builtin_tools()
    assert [t.name for t in tools] == list(BUILTIN_TOOL_NAMES)
    assert BUILTIN_TOOL_NAMES == ("read", "bash", "edit", "write", "grep", "find", "ls")
    for tool in tools:
        assert tool.description and tool.prompt_snippet and "\n" not in tool.prompt_snippet
        assert isinstance(tuple(tool.prompt_guidelines), tuple)
        assert tool.parameters["type"] == "object"
        assert tool.parameters["additionalProperties"] is False
        assert set(tool.parameters["required"]) <= set(tool.parameters["properties"])


async def test_read_returns_the_raw_text_without_line_numbers(
    ctx: ToolContext, workdir: Path
) -> None:
    (workdir / "a.txt").write_text("alpha\nbeta\n")
    result = await ReadTool().execute({"path": "a.txt"}, ctx)
    assert result.text == "alpha\nbeta"
    assert result.details is None and not result.images


async def test_read_accepts_an_absolute_path(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "elsewhere.txt").write_text("far away")
    assert await read(ctx, path=str(tmp_path / "elsewhere.txt")) == "far away"


async def test_read_starts_at_a_one_based_offset_and_stops_at_a_limit(
    ctx: ToolContext, workdir: Path
) -> None:
    write_lines(workdir / "f.txt", [f"l{i}" for i in range(1, 11)])
    text = await read(ctx, path="f.txt", offset=3, limit=2)
    assert text == "l3\nl4\n\n[6 more lines in file. Use offset=5 to continue.]"
    assert await read(ctx, path="f.txt", offset=9) == "l9\nl10"


async def test_a_long_file_is_shown_2000_lines_at_a_time_with_the_next_offset(
    ctx: ToolContext, workdir: Path
) -> None:
    write_lines(workdir / "big.txt", [f"line {i}" for i in range(1, 5001)])
    first = await ReadTool().execute({"path": "big.txt"}, ctx)
    assert first.text.endswith(
        "line 2000\n\n[Showing lines 1-2000 of 5000. Use offset=2001 to continue.]"
    )
    assert first.details["truncation"]["truncatedBy"] == "lines"
    second = await read(ctx, path="big.txt", offset=2001)
    assert second.startswith("line 2001\n")
    assert second.endswith("[Showing lines 2001-4000 of 5000. Use offset=4001 to continue.]")
    last = await read(ctx, path="big.txt", offset=4001)
    assert last.startswith("line 4001\n") and last.endswith("line 5000")


async def test_a_file_over_50_kib_is_cut_at_a_line_with_a_bytes_notice(
    ctx: ToolContext, workdir: Path
) -> None:
    write_lines(workdir / "wide.txt", [f"{i:099d}" for i in range(1, 1001)])
    text = await read(ctx, path="wide.txt")
    # 512 lines of 99 bytes plus 511 newlines fit in 51200 bytes.
    assert text.endswith(
        f"{512:099d}\n\n[Showing lines 1-512 of 1000 (50.0KB limit). Use offset=513 to continue.]"
    )


async def test_a_first_line_over_50_kib_suggests_bash_instead(
    ctx: ToolContext, workdir: Path
) -> None:
    (workdir / "min.js").write_text("short\n" + "x" * 60000 + "\n")
    text = await read(ctx, path="min.js", offset=2)
    assert text == (
        "[Line 2 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '2p' min.js | head -c 51200]"
    )


async def test_an_offset_beyond_the_end_names_the_files_length(
    ctx: ToolContext, workdir: Path
) -> None:
    write_lines(workdir / "short.txt", ["a", "b", "c"])
    with pytest.raises(ToolError, match=r"Offset 4 is beyond end of file \(3 lines total\)"):
        await read(ctx, path="short.txt", offset=4)


async def test_an_empty_file_reads_as_empty_text(ctx: ToolContext, workdir: Path) -> None:
    (workdir / "empty.txt").write_text("")
    assert await read(ctx, path="empty.txt") == ""


async def test_a_leading_bom_is_not_shown(ctx: ToolContext, workdir: Path) -> None:
    (workdir / "bom.txt").write_bytes(b"\xef\xbb\xbfhello\n")
    assert await read(ctx, path="bom.txt") == "hello"


async def test_a_missing_file_or_a_directory_is_a_clear_error(
    ctx: ToolContext, workdir: Path
) -> None:
    (workdir / "sub").mkdir()
    with pytest.raises(ToolError, match=r"File not found: nope\.txt"):
        await read(ctx, path="nope.txt")
    with pytest.raises(ToolError, match="Is a directory: sub"):
        await read(ctx, path="sub")


async def test_a_fifo_or_a_device_is_refused_without_blocking(
    ctx: ToolContext, workdir: Path
) -> None:
    import os

    os.mkfifo(workdir / "pipe")
    with pytest.raises(ToolError, match="Not a regular file: pipe"):
        await read(ctx, path="pipe")
    with pytest.raises(ToolError, match="Not a regular file: /dev/zero"):
        await read(ctx, path="/dev/zero")  # never ends: it must not be read at all


@pytest.mark.parametrize("tool", ["read", "write", "edit", "ls", "grep", "find"])
async def test_a_path_with_a_nul_byte_is_a_clear_error_for_every_file_tool(
    ctx: ToolContext, tool: str
) -> None:
    [chosen] = [t for t in builtin_tools() if t.name == tool]
    args = {"path": "a\0b", "content": "x", "oldText": "x", "newText": "y", "pattern": "x"}
    allowed = set(chosen.parameters["properties"])
    with pytest.raises(ToolError, match=r"Invalid path 'a\\x00b': it holds a NUL byte"):
        await chosen.execute({k: v for k, v in args.items() if k in allowed}, ctx)


async def test_an_image_is_returned_as_base64_image_content(
    ctx: ToolContext, workdir: Path
) -> None:
    (workdir / "dot.png").write_bytes(PNG)
    result = await ReadTool().execute({"path": "dot.png"}, ctx)
    assert result.text == "Read image file [image/png]"
    (image,) = result.images
    assert image.mime_type == "image/png"
    assert base64.b64decode(image.data) == PNG


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({}, "path"),
        ({"path": 3}, "path"),
        ({"path": "a", "offset": 0}, "offset"),
        ({"path": "a", "limit": "ten"}, "limit"),
        ({"path": "a", "lines": 3}, "lines"),
    ],
)
def test_the_read_schema_rejects_a_malformed_call_naming_the_field(
    args: dict[str, object], field: str
) -> None:
    message = validation_error(ReadTool(), args)
    assert message is not None and field in message


def test_a_tool_spec_is_made_once_and_follows_a_changed_schema() -> None:
    from piagents.harness.tools.base import spec_of

    first, again = builtin_tools()[0], builtin_tools()[0]
    assert spec_of(first) is spec_of(again)  # the same name, text and schema object
    assert (spec_of(first).name, spec_of(first).parameters) == (first.name, first.parameters)
    first.parameters = {**first.parameters, "description": "another schema"}
    assert spec_of(first).parameters is first.parameters
    assert spec_of(again).parameters is again.parameters
