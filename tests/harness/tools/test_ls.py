from pathlib import Path

import pytest

from piagents.harness.tools.base import ToolContext, ToolError, validation_error
from piagents.harness.tools.ls import LsTool


async def ls(ctx: ToolContext, **args: object) -> str:
    return (await LsTool().execute(dict(args), ctx)).text


async def test_entries_sort_case_insensitively_with_dotfiles_and_slashed_directories(
    ctx: ToolContext, workdir: Path
) -> None:
    for name in ("beta.txt", "Alpha.txt", ".env", "zeta.md"):
        (workdir / name).write_text("")
    (workdir / "Docs").mkdir()
    (workdir / "docs.md").write_text("")
    assert await ls(ctx) == ".env\nAlpha.txt\nbeta.txt\nDocs/\ndocs.md\nzeta.md"


async def test_a_path_lists_that_directory(ctx: ToolContext, workdir: Path) -> None:
    (workdir / "sub" / "inner").mkdir(parents=True)
    (workdir / "sub" / "f.txt").write_text("")
    assert await ls(ctx, path="sub") == "f.txt\ninner/"


async def test_an_empty_directory_says_so(ctx: ToolContext) -> None:
    assert await ls(ctx) == "(empty directory)"


async def test_entries_stop_at_the_limit_with_a_notice(ctx: ToolContext, workdir: Path) -> None:
    for i in range(5):
        (workdir / f"f{i}").write_text("")
    result = await LsTool().execute({"limit": 3}, ctx)
    assert result.text == "f0\nf1\nf2\n\n[3 entries limit reached. Use limit=6 for more]"
    assert result.details == {"entryLimitReached": 3}


async def test_a_missing_path_or_a_file_is_an_error(ctx: ToolContext, workdir: Path) -> None:
    (workdir / "f.txt").write_text("")
    with pytest.raises(ToolError, match="Path not found: nowhere"):
        await ls(ctx, path="nowhere")
    with pytest.raises(ToolError, match=r"Not a directory: f\.txt"):
        await ls(ctx, path="f.txt")


@pytest.mark.parametrize(
    ("args", "field"),
    [({"limit": 0}, "limit"), ({"path": None}, "path"), ({"all": True}, "all")],
)
def test_the_ls_schema_rejects_a_malformed_call_naming_the_field(
    args: dict[str, object], field: str
) -> None:
    message = validation_error(LsTool(), args)
    assert message is not None and field in message
