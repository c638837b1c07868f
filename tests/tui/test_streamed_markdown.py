"""Cutting a growing Markdown text into settled chunks and a tail (pure)."""

from piagents.tui.streamed_markdown import split_settled


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
