import asyncio
import threading
import time
from pathlib import Path

import pytest

from piagents.harness.tools.base import ToolContext, ToolError, validation_error
from piagents.harness.tools.find import FindTool, in_thread
from support import until


async def find(ctx: ToolContext, pattern: str, **args: object) -> str:
    return (await FindTool().execute({"pattern": pattern, **args}, ctx)).text


def touch(root: Path, *rels: str) -> None:
    for rel in rels:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")


async def test_a_pattern_without_a_slash_matches_file_names_at_any_depth(
    ctx: ToolContext, workdir: Path
) -> None:
    touch(workdir, "b.py", "a/z.py", "a/b/c.py", "a/readme.md")
    assert await find(ctx, "*.py") == "a/b/c.py\na/z.py\nb.py"


async def test_a_pattern_with_a_slash_matches_the_relative_path(
    ctx: ToolContext, workdir: Path
) -> None:
    touch(workdir, "top.py", "src/a.py", "src/pkg/b.py", "tests/t.py")
    assert await find(ctx, "src/*.py") == "src/a.py"
    assert await find(ctx, "src/**/*.py") == "src/a.py\nsrc/pkg/b.py"
    assert await find(ctx, "**/*.py") == "src/a.py\nsrc/pkg/b.py\ntests/t.py\ntop.py"


async def test_braces_offer_alternatives(ctx: ToolContext, workdir: Path) -> None:
    touch(workdir, "a.ts", "b.tsx", "c.js")
    assert await find(ctx, "*.{ts,tsx}") == "a.ts\nb.tsx"


async def test_matching_directories_end_with_a_slash(ctx: ToolContext, workdir: Path) -> None:
    touch(workdir, "tests/test_x.py", "src/tests/conftest.py")
    assert await find(ctx, "tests") == "src/tests/\ntests/"


async def test_results_are_relative_to_the_given_path(ctx: ToolContext, workdir: Path) -> None:
    touch(workdir, "pkg/mod/a.py", "other.py")
    assert await find(ctx, "*.py", path="pkg") == "mod/a.py"


async def test_git_node_modules_and_gitignored_paths_are_skipped(
    ctx: ToolContext, workdir: Path
) -> None:
    touch(
        workdir,
        ".git/hooks/x.py",
        "node_modules/m/index.py",
        "dist/bundle.py",
        "secret.py",
        "nested/secret.py",
        "nested/ok.py",
        "ok.py",
    )
    (workdir / ".gitignore").write_text("dist/\n/secret.py\n")
    assert await find(ctx, "*.py") == "nested/ok.py\nnested/secret.py\nok.py"


async def test_results_stop_at_the_limit_with_a_notice(ctx: ToolContext, workdir: Path) -> None:
    touch(workdir, "a.txt", "b.txt", "c.txt")
    result = await FindTool().execute({"pattern": "*.txt", "limit": 2}, ctx)
    assert result.text == (
        "a.txt\nb.txt\n\n[2 results limit reached. Use limit=4 for more, or refine pattern]"
    )
    assert result.details == {"resultLimitReached": 2}
    assert await find(ctx, "*.txt", limit=3) == "a.txt\nb.txt\nc.txt"


async def test_nothing_found_says_so(ctx: ToolContext, workdir: Path) -> None:
    touch(workdir, "a.txt")
    assert await find(ctx, "*.rs") == "No files found matching pattern"


async def test_a_missing_path_or_a_file_path_is_an_error(ctx: ToolContext, workdir: Path) -> None:
    touch(workdir, "f.txt")
    with pytest.raises(ToolError, match="Path not found: nowhere"):
        await find(ctx, "*", path="nowhere")
    with pytest.raises(ToolError, match=r"Not a directory: f\.txt"):
        await find(ctx, "*", path="f.txt")


async def test_cancelling_a_threaded_search_tells_the_thread_to_stop() -> None:
    began, stopped = threading.Event(), threading.Event()

    def work(stop: threading.Event) -> None:
        began.set()
        while not stop.wait(0.01):
            pass
        stopped.set()

    task = asyncio.create_task(in_thread(work))
    await until(began.is_set, what="the search thread to start")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    started = time.monotonic()
    assert await asyncio.to_thread(stopped.wait, 2.0)
    assert time.monotonic() - started < 1.0


@pytest.mark.parametrize(
    ("args", "field"),
    [({}, "pattern"), ({"pattern": "*", "limit": "all"}, "limit"), ({"pattern": 1}, "pattern")],
)
def test_the_find_schema_rejects_a_malformed_call_naming_the_field(
    args: dict[str, object], field: str
) -> None:
    message = validation_error(FindTool(), args)
    assert message is not None and field in message
