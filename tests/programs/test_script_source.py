"""The script's source as monty runs it: the same lines, gaps bridged."""

from __future__ import annotations

from piagents.programs.script_source import as_function_body, bridge_gather


def test_a_trailing_expression_is_followed_by_return_none() -> None:
    assert as_function_body("x = 1\nx") == "x = 1\nx\nreturn None\n"
    assert as_function_body("if x:\n    y\n") == "if x:\n    y\n"
    assert as_function_body("return 2") == "return 2"


def test_code_cpython_cannot_parse_is_left_to_monty() -> None:
    assert as_function_body("x = (\n") == "x = (\n"
    assert bridge_gather("gather(, return_exceptions=True", "_g") == (
        "gather(, return_exceptions=True"
    )


def test_only_gather_calls_with_keywords_are_bridged_on_their_own_lines() -> None:
    code = (
        "import asyncio\n"
        "a = await asyncio.gather(f(), g())\n"
        "b = await asyncio.gather(\n"
        "    f(), asyncio.gather(h(), return_exceptions=True),\n"
        "    return_exceptions=True)\n"
        "c = other.gather(f(), return_exceptions=True)\n"
    )

    assert bridge_gather(code, "_g") == (
        "import asyncio\n"
        "a = await asyncio.gather(f(), g())\n"
        "b = await _g(\n"
        "    f(), _g(h(), return_exceptions=True),\n"
        "    return_exceptions=True)\n"
        "c = other.gather(f(), return_exceptions=True)\n"
    )


def test_gather_imported_from_asyncio_is_bridged_under_its_name() -> None:
    code = 'from asyncio import gather as g\ns = "é"; r = await g(f(), return_exceptions=True)\n'

    assert bridge_gather(code, "_g") == (
        'from asyncio import gather as g\ns = "é"; r = await _g(f(), return_exceptions=True)\n'
    )
