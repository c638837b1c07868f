"""A script's source as monty is given it: the same lines, a few constructs bridged.

Monty runs a snippet like a REPL cell: a trailing expression is its value, where
the body of a function returns None; and its `asyncio.gather` takes no keyword
arguments (1.4: "gather() does not yet support keyword arguments"), while code as
models write it says `asyncio.gather(..., return_exceptions=True)`. Both are
bridged here by edits that keep every line where it was, so a traceback's line
numbers are the script's own. Source that CPython cannot parse is left as it is
for monty to run or to report.
"""

from __future__ import annotations

import ast
import io


def as_function_body(code: str) -> str:
    """`code` that returns None when it ends without `return`, like a function body."""
    tree = _parse(code)
    if tree is None or not tree.body or not isinstance(tree.body[-1], ast.Expr):
        return code
    return code + ("" if code.endswith(("\n", "\r")) else "\n") + "return None\n"


def bridge_gather(code: str, replacement: str) -> str:
    """`code` with each `asyncio.gather(...)` call that has keyword arguments calling
    `replacement` instead (a function of the prelude that takes them)."""
    tree = _parse(code)
    if tree is None:
        return code
    imported = _gather_imported_as(tree)
    spans = [
        (node.func.lineno, node.func.col_offset, node.func.end_col_offset)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and node.keywords
        and _is_gather(node.func, imported)
        and node.func.end_lineno == node.func.lineno
        and node.func.end_col_offset is not None
    ]
    if not spans:
        return code
    lines = io.StringIO(code, newline="").readlines()
    for lineno, start, end in sorted(spans, reverse=True):
        line = lines[lineno - 1].encode("utf-8")  # ast's columns count UTF-8 bytes
        lines[lineno - 1] = (line[:start] + replacement.encode() + line[end:]).decode("utf-8")
    return "".join(lines)


def _parse(code: str) -> ast.Module | None:
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError):
        return None


def _gather_imported_as(tree: ast.Module) -> set[str]:
    """The names under which `from asyncio import gather` binds gather."""
    return {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "asyncio"
        for alias in node.names
        if alias.name == "gather"
    }


def _is_gather(func: ast.expr, imported: set[str]) -> bool:
    if isinstance(func, ast.Attribute):
        return (
            func.attr == "gather"
            and isinstance(func.value, ast.Name)
            and func.value.id == "asyncio"
        )
    return isinstance(func, ast.Name) and func.id in imported
