"""Cutting a growing Markdown text into settled chunks and a tail (pure), and how an
answer's Markdown reads."""

from rich.console import Console

from piagents.tui.streamed_markdown import answer_markdown, split_settled


def rendered(text: str, width: int = 60) -> list[str]:
    console = Console(width=width, color_system=None, record=True)
    console.print(answer_markdown(text))
    return [line.rstrip() for line in console.export_text().splitlines()]


def test_an_answers_single_line_breaks_are_kept_as_the_print_mode_shows_them():
    lines = rendered("Roses are red,\nthe sea is blue.\n\nNew paragraph\nwith two lines.")

    assert lines == ["Roses are red,", "the sea is blue.", "", "New paragraph", "with two lines."]


def test_markdown_still_renders_around_the_kept_line_breaks():
    lines = rendered("# Title\n\n**bold** and\n`code`\n\n- one\n- two\n\n```\nx = 1\ny = 2\n```")

    assert "Title" in lines[0] and "**" not in "".join(lines)
    assert "bold and" in lines and "code" in lines
    assert any(line.strip().endswith("one") for line in lines)
    assert any("x = 1" in line for line in lines) and any("y = 2" in line for line in lines)


def test_short_text_stays_in_the_tail():
    assert split_settled("one\n\ntwo", chunk_lines=4) == ([], "one\n\ntwo")


def test_settled_chunks_end_at_blank_lines_and_keep_every_character():
    text = "".join(f"para {i}\n\n" for i in range(6)) + "grow"

    chunks, tail = split_settled(text, chunk_lines=4)

    assert chunks == ["para 0\n\npara 1\n\n", "para 2\n\npara 3\n\n", "para 4\n\npara 5\n\n"]
    assert tail == "grow"
    assert "".join(chunks) + tail == text


def test_a_code_fence_is_never_cut():
    text = "intro\n\n```python\nx = 1\n\ny = 2\n\nz = 3\n```\n\nafter\n\nmore"

    chunks, tail = split_settled(text, chunk_lines=2)

    assert chunks == ["intro\n\n", "```python\nx = 1\n\ny = 2\n\nz = 3\n```\n\n", "after\n\n"]
    assert tail == "more"


def test_the_last_line_still_growing_is_never_settled():
    chunks, tail = split_settled("a\n\nb\n\n", chunk_lines=1)

    assert chunks == ["a\n\n", "b\n\n"]
    assert tail == ""
