"""The recent live output `inspect` shows: what a terminal would show, 80 lines, 16 KiB."""

import sys

import pytest

from piagents.supervision.output_tail import OutputTail


def shown(*pieces, **limits):
    tail = OutputTail(**limits)
    for piece in pieces:
        tail.feed(piece)
    return tail.snapshot()


def test_nothing_fed_shows_nothing():
    assert OutputTail().snapshot() == ("", False)


def test_streamed_pieces_join_into_lines():
    assert shown("I'll run the ", "tests.\n$ pytest", " -q\n", "....") == (
        "I'll run the tests.\n$ pytest -q\n....",
        False,
    )


def test_only_the_last_80_lines_are_kept():
    text, truncated = shown("".join(f"line {i}\n" for i in range(1, 201)))
    assert text == "\n".join(f"line {i}" for i in range(121, 201))
    assert not truncated  # the line limit is not the byte cap


def test_the_cursor_line_counts_as_one_of_the_80():
    text, _ = shown("".join(f"line {i}\n" for i in range(1, 101)) + "partial")
    lines = text.split("\n")
    assert len(lines) == 80
    assert (lines[0], lines[-1]) == ("line 22", "partial")


def test_blank_lines_below_the_output_are_not_shown():
    assert shown("done\n\n\n") == ("done", False)
    assert shown("a\n\nb") == ("a\n\nb", False)


def test_feed_line_starts_a_line_of_its_own():
    tail = OutputTail()
    tail.feed("Let me check")
    tail.feed_line('bash {"command":"ls"}')
    tail.feed_line("read a.py")
    tail.feed("ok")
    assert tail.snapshot() == ('Let me check\nbash {"command":"ls"}\nread a.py\nok', False)


# ---- as a terminal shows it -----------------------------------------------------------------


def test_carriage_return_overwrites_the_line_from_its_start():
    assert shown("Downloading  10%\rDownloading  55%\rDone\n") == ("Doneloading  55%", False)


def test_a_progress_bar_split_across_pieces_shows_its_last_state():
    assert shown("[#   ] 25%", "\r[##  ] 50%", "\r", "[####] 100%\n", "ok") == (
        "[####] 100%\nok",
        False,
    )


def test_crlf_ends_a_line():
    assert shown("one\r\ntwo\r", "\nthree") == ("one\ntwo\nthree", False)


def test_backspace_steps_back_one_column():
    assert shown("abc\b\bX") == ("aXc", False)
    assert shown("\b\bab") == ("ab", False)


def test_tabs_advance_to_the_next_multiple_of_8():
    assert shown("a\tb\n12345678\tc") == ("a       b\n12345678        c", False)


def test_colours_and_other_escape_sequences_are_dropped():
    assert shown("\x1b[1;31mFAILED\x1b[0m test_x\x1b]0;title\x07\x1b(B\x1b=\n") == (
        "FAILED test_x",
        False,
    )


def test_an_escape_sequence_split_across_pieces_is_still_dropped():
    assert shown("\x1b[3", "2mgreen\x1b", "[0m plain\x1b]8;;http://x", "\x1b\\link") == (
        "green plainlink",
        False,
    )


def test_other_control_characters_are_dropped():
    assert shown("a\x00b\x07c\x7fd\x1b\x1b[0me") == ("abcde", False)


def test_an_endless_unterminated_escape_does_not_grow_memory():
    tail = OutputTail()
    tail.feed("\x1b]0;" + "t" * 10_000)
    tail.feed("still here")
    text, _ = tail.snapshot()
    assert text.endswith("still here")
    assert len(tail._pending) == 0


# ---- the 16 KiB cap ---------------------------------------------------------------------------


def test_80_lines_within_16_kib_are_not_truncated():
    line = "x" * 199
    text, truncated = shown((line + "\n") * 80)  # 80 * 200 - 1 bytes
    assert len(text.encode()) == 15999
    assert not truncated


def test_the_byte_cap_keeps_whole_lines_from_the_end_and_says_it_cut():
    line = "y" * 299
    text, truncated = shown("".join(f"{i:02d}{line}\n" for i in range(80)))  # 80 * 302 bytes
    assert truncated
    kept = text.split("\n")
    assert kept[-1] == "79" + line
    assert len(kept) == 16384 // 302
    assert all(len(k) == 301 for k in kept)


def test_exactly_16_kib_is_not_truncated():
    text, truncated = shown("z" * 16384)
    assert (len(text), truncated) == (16384, False)


def test_a_single_huge_line_keeps_its_end_without_splitting_characters():
    text, truncated = shown("é" * 20_000, "END")
    assert truncated
    assert text.endswith("END")
    assert len(text.encode()) <= 16384
    assert set(text[:-3]) == {"é"}


def test_smaller_limits_apply_the_same_rules():
    assert shown("a\nbb\nccc\ndddd", max_lines=3, max_bytes=8) == ("ccc\ndddd", True)


# ---- memory -------------------------------------------------------------------------------


@pytest.mark.parametrize("piece", ["x" * 1000, "x" * 999 + "\n", "\r" + "y" * 500])
def test_memory_stays_bounded_however_much_is_fed(piece):
    tail = OutputTail()
    for _ in range(5000):  # 5 MB
        tail.feed(piece)
    held = sum(len(line) for line in tail._lines) + len(tail._line)
    assert held <= 81 * (16384 + 1)
    assert sys.getsizeof(tail._line) < 100_000
    _, truncated = tail.snapshot()
    assert truncated == (piece != "\r" + "y" * 500)


def test_a_line_cut_in_memory_still_reports_truncation():
    tail = OutputTail(max_bytes=10)
    tail.feed("0123456789AB")  # 12 characters, the line is kept as its last 11
    assert tail.snapshot() == ("23456789AB", True)
