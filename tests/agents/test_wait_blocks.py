"""Result blocks cut to the output limits (agents/wait_blocks.py), whatever a face's
tags and labels: kept while they fit, the crossing one cut keeping its closing tag,
the later ones omitted and named."""

from piagents.agents.wait_blocks import Block, render_blocks


def block(n, text):
    return Block(text, f'<r id="{n}">', "</r>", f"r{n}")


def omitted_line(blocks):
    return lambda indexes: f"[Left out: {', '.join(blocks[i].label for i in indexes)}.]"


def lines(prefix, n):
    return "\n".join(f"{prefix}{i}" for i in range(n))


def test_blocks_that_fit_are_joined_whole_with_the_tail():
    blocks = [block(1, "one"), block(2, "two")]
    out = render_blocks(blocks, "Tail line", omitted_line(blocks))
    assert out.text == '<r id="1">\none\n</r>\n\n<r id="2">\ntwo\n</r>\n\nTail line'
    assert (out.truncated, out.full_text, out.cut, out.omitted) == (False, None, None, ())


def test_the_crossing_block_keeps_its_closing_tag_and_later_ones_are_named():
    blocks = [block(1, "one"), block(2, lines("x", 50)), block(3, "three"), block(4, "four")]
    out = render_blocks(blocks, None, omitted_line(blocks), full_output_path="/f", max_lines=12)
    assert out.text == (
        '<r id="1">\none\n</r>\n\n'
        '<r id="2">\nx0\nx1\n\n[Showing lines 1-2 of 50. Full output: /f]\n</r>\n\n'
        "[Left out: r3, r4.]"
    )
    assert len(out.text.split("\n")) <= 12
    assert out.truncated and out.omitted == (2, 3)
    assert out.cut is not None and out.cut[0] == 1 and out.cut[1].output_lines == 2
    assert out.full_text is not None and out.full_text.endswith('<r id="4">\nfour\n</r>')


def test_a_block_with_no_room_for_a_line_is_its_notice_alone_between_its_tags():
    blocks = [block(1, lines("a", 3)), block(2, lines("b", 9))]
    out = render_blocks(blocks, None, omitted_line(blocks), full_output_path="/f", max_lines=9)
    assert out.text == (
        '<r id="1">\na0\na1\na2\n</r>\n\n'
        '<r id="2">\n[Showing lines 0-0 of 9. Full output: /f]\n</r>'
    )
    assert out.omitted == ()


def test_a_first_block_whose_notice_cannot_fit_leaves_only_the_omitted_line():
    blocks = [block(1, "y" * 400), block(2, "z")]
    out = render_blocks(blocks, None, omitted_line(blocks), full_output_path="/f", max_bytes=60)
    assert out.text == "[Left out: r1, r2.]"
    assert out.omitted == (0, 1) and out.cut is not None and out.cut[0] == 0


def test_a_block_alone_is_cut_without_tags():
    blocks = [block(1, lines("a", 30))]
    out = render_blocks(
        blocks, None, omitted_line(blocks), alone=True, full_output_path="/f", max_lines=5
    )
    assert out.text == "a0\na1\na2\n\n[Showing lines 1-3 of 30. Full output: /f]"
