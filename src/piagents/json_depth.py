"""How deeply a JSON text nests, read before it is parsed (so a file nested too deep is
refused without the parser's recursion)."""

from __future__ import annotations


def json_depth(text: str) -> int:
    """How deeply the arrays and objects of a JSON text nest (brackets in strings aside)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest
