"""What the program tool's `wait` returns: blocks, the Programs still running, and
truncation as the agent tool's `wait` does it (omitted results stay unreturned)."""

from piagents.programs.wait_output import ProgramItem, render_program_wait


def item(n, text="Script completed", outcome="completed"):
    return ProgramItem(f"id-{n}", f"short{n:03d}", outcome, text)


def test_nothing_ended_or_running_is_no_results():
    out = render_program_wait([], [])
    assert (out.text, out.returned, out.full_text) == ("No results.", (), None)


def test_a_single_completed_result_with_nothing_running_is_returned_alone():
    out = render_program_wait([item(1, "the value")], [])
    assert (out.text, out.returned) == ("the value", ("id-1",))


def test_a_single_result_with_programs_running_is_a_block_before_still_running():
    out = render_program_wait([item(1, "v")], ["short002", "short003"])
    assert out.text == (
        '<program-result id="short001" status="completed">\nv\n</program-result>\n\n'
        "Still running: short002, short003"
    )


def test_a_single_failed_result_is_a_block():
    out = render_program_wait([item(1, "Script failed", "failed")], [])
    assert (
        out.text
        == '<program-result id="short001" status="failed">\nScript failed\n</program-result>'
    )


def test_only_running_programs_are_named():
    assert render_program_wait([], ["short009"]).text == "Still running: short009"


def test_the_result_crossing_the_limit_keeps_its_closing_tag_and_later_ones_are_omitted():
    big = "\n".join(f"line {i}" for i in range(100))
    items = [item(1, "small"), item(2, big), item(3, "later"), item(4, "last")]
    out = render_program_wait(items, ["short005"], full_output_path="/o/w.txt", max_lines=40)
    blocks = out.text.split("\n\n")
    assert (
        blocks[0] == '<program-result id="short001" status="completed">\nsmall\n</program-result>'
    )
    assert blocks[1].startswith('<program-result id="short002" status="completed">\nline 0\n')
    assert "[Showing lines 1-" in out.text and "of 100. Full output: /o/w.txt]" in out.text
    assert out.text.endswith(
        "</program-result>\n\nStill running: short005\n\n"
        "[Results omitted: short003, short004. Use wait with fewer targets.]"
    )
    assert len(out.text.splitlines()) <= 40
    assert out.returned == ("id-1", "id-2")
    assert out.full_text is not None and "line 99" in out.full_text and "last" in out.full_text


def test_a_result_alone_past_the_limit_is_cut_with_the_notice_and_no_tags():
    big = "x" * 200
    out = render_program_wait([item(1, big)], [], full_output_path="/o/w.txt", max_bytes=120)
    assert out.text.startswith("x")
    assert out.text.endswith("(120B limit). Full output: /o/w.txt]")
    assert "<program-result" not in out.text
    assert out.returned == ("id-1",)


def test_a_result_whose_notice_cannot_fit_is_omitted_with_the_later_ones():
    items = [item(1, "a" * 50), item(2, "b" * 500), item(3, "c")]
    out = render_program_wait(items, [], full_output_path="/o/w.txt", max_bytes=300)
    assert out.text.endswith("[Results omitted: short002, short003. Use wait with fewer targets.]")
    assert out.returned == ("id-1",)
    assert len(out.text.encode()) <= 300
