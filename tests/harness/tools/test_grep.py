from pathlib import Path

import pytest

from piagents.harness.tools.base import ToolContext, ToolError, validation_error
from piagents.harness.tools.grep import GrepTool


async def grep(ctx: ToolContext, pattern: str, **args: object) -> str:
    return (await GrepTool().execute({"pattern": pattern, **args}, ctx)).text


def make(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


async def test_matches_are_listed_as_path_line_text_relative_to_the_search_path(
    ctx: ToolContext, workdir: Path
) -> None:
    make(workdir, {"b.py": "x = 1\nneedle = 2\n", "a/c.py": "needle here\n", "d.txt": "nothing\n"})
    assert await grep(ctx, "needle") == "a/c.py:1: needle here\nb.py:2: needle = 2"
    assert await grep(ctx, "needle", path="a") == "c.py:1: needle here"


async def test_searching_a_single_file_shows_its_name(ctx: ToolContext, workdir: Path) -> None:
    make(workdir, {"deep/dir/f.txt": "one\ntwo\n"})
    assert await grep(ctx, "two", path="deep/dir/f.txt") == "f.txt:2: two"


async def test_context_lines_surround_matches_without_repeating_lines(
    ctx: ToolContext, workdir: Path
) -> None:
    make(workdir, {"f.txt": "1\n2\nhit\n4\nhit\n6\n7\n8\n9\nhit\n"})
    assert await grep(ctx, "hit", context=1) == "\n".join(
        [
            "f.txt-2- 2",
            "f.txt:3: hit",
            "f.txt-4- 4",
            "f.txt:5: hit",
            "f.txt-6- 6",
            "f.txt-9- 9",
            "f.txt:10: hit",
        ]
    )


async def test_ignore_case_and_literal_change_how_the_pattern_matches(
    ctx: ToolContext, workdir: Path
) -> None:
    make(workdir, {"f.txt": "Hello\naxb\na.b\n"})
    assert await grep(ctx, "hello") == "No matches found"
    assert await grep(ctx, "hello", ignoreCase=True) == "f.txt:1: Hello"
    assert await grep(ctx, "a.b") == "f.txt:2: axb\nf.txt:3: a.b"
    assert await grep(ctx, "a.b", literal=True) == "f.txt:3: a.b"


async def test_a_glob_filters_the_files_searched(ctx: ToolContext, workdir: Path) -> None:
    make(workdir, {"a.py": "x\n", "b.txt": "x\n", "sub/c.py": "x\n", "sub/d.txt": "x\n"})
    assert await grep(ctx, "x", glob="*.py") == "a.py:1: x\nsub/c.py:1: x"
    assert await grep(ctx, "x", glob="sub/*.txt") == "sub/d.txt:1: x"
    assert await grep(ctx, "x", glob="**/*.{py,txt}") == (
        "a.py:1: x\nb.txt:1: x\nsub/c.py:1: x\nsub/d.txt:1: x"
    )


async def test_git_node_modules_ignored_and_binary_files_are_skipped(
    ctx: ToolContext, workdir: Path
) -> None:
    make(
        workdir,
        {
            ".gitignore": "# build output\n*.log\nbuild/\n/rooted.txt\n!keep.log\n",
            ".git/config": "needle\n",
            "node_modules/pkg/index.js": "needle\n",
            "app.log": "needle\n",
            "keep.log": "needle\n",
            "build/out.txt": "needle\n",
            "rooted.txt": "needle\n",
            "sub/rooted.txt": "needle\n",
            "blob.bin": b"needle\x00\x01\x02",
            "src/main.py": "needle\n",
            ".hidden": "needle\n",
        },
    )
    assert await grep(ctx, "needle") == (
        ".hidden:1: needle\nkeep.log:1: needle\nsrc/main.py:1: needle\nsub/rooted.txt:1: needle"
    )


async def test_a_nested_gitignore_applies_below_its_directory(
    ctx: ToolContext, workdir: Path
) -> None:
    make(workdir, {"pkg/.gitignore": "gen.py\n", "pkg/gen.py": "needle\n", "gen.py": "needle\n"})
    assert await grep(ctx, "needle") == "gen.py:1: needle"


async def test_matches_stop_at_the_limit_with_a_notice(ctx: ToolContext, workdir: Path) -> None:
    make(workdir, {"f.txt": "hit\n" * 150})
    result = await GrepTool().execute({"pattern": "hit"}, ctx)
    lines, notice = result.text.split("\n\n")
    assert lines.split("\n")[-1] == "f.txt:100: hit" and len(lines.split("\n")) == 100
    assert notice == "[100 matches limit reached. Use limit=200 for more, or refine pattern]"
    assert result.details == {"matchLimitReached": 100}


async def test_exactly_limit_matches_need_no_notice(ctx: ToolContext, workdir: Path) -> None:
    make(workdir, {"a.txt": "hit\nhit\n", "b.txt": "hit\n"})
    assert await grep(ctx, "hit", limit=3) == "a.txt:1: hit\na.txt:2: hit\nb.txt:1: hit"
    assert await grep(ctx, "hit", limit=2) == (
        "a.txt:1: hit\na.txt:2: hit\n\n"
        "[2 matches limit reached. Use limit=4 for more, or refine pattern]"
    )


async def test_long_lines_are_cut_to_500_characters(ctx: ToolContext, workdir: Path) -> None:
    make(workdir, {"f.txt": "hit" + "y" * 1000 + "\n"})
    text = await grep(ctx, "hit")
    assert text == (
        f"f.txt:1: hit{'y' * 497}... [truncated]\n\n"
        "[Some lines truncated to 500 chars. Use read tool to see full lines]"
    )


async def test_output_stops_at_50_kib(ctx: ToolContext, workdir: Path) -> None:
    make(workdir, {"f.txt": ("hit" + "z" * 400 + "\n") * 300})
    result = await GrepTool().execute({"pattern": "hit", "limit": 1000}, ctx)
    shown, notice = result.text.split("\n\n")
    assert notice == "[50.0KB limit reached]"
    assert len(shown.encode()) <= 51200
    assert result.details["truncation"]["truncatedBy"] == "bytes"


async def test_no_match_says_so(ctx: ToolContext, workdir: Path) -> None:
    make(workdir, {"f.txt": "abc\n"})
    assert await grep(ctx, "xyz") == "No matches found"


async def test_an_invalid_regex_is_an_error_naming_the_pattern(
    ctx: ToolContext, workdir: Path
) -> None:
    with pytest.raises(ToolError, match=r"Invalid regex pattern 'foo\(':"):
        await grep(ctx, "foo(")


async def test_a_missing_search_path_is_an_error(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="Path not found: nowhere"):
        await grep(ctx, "x", path="nowhere")


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({}, "pattern"),
        ({"pattern": "x", "context": -1}, "context"),
        ({"pattern": "x", "ignoreCase": "yes"}, "ignoreCase"),
        ({"pattern": "x", "limit": 0}, "limit"),
        ({"pattern": "x", "case": True}, "case"),
    ],
)
def test_the_grep_schema_rejects_a_malformed_call_naming_the_field(
    args: dict[str, object], field: str
) -> None:
    message = validation_error(GrepTool(), args)
    assert message is not None and field in message


async def test_a_fifo_in_the_tree_is_skipped_without_blocking(
    ctx: ToolContext, workdir: Path
) -> None:
    import os

    make(workdir, {"a.txt": "hello\n"})
    os.mkfifo(workdir / "pipe")
    assert await grep(ctx, "hello") == "a.txt:1: hello"
