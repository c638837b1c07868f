import json

from piagents.harness.tools.truncation import (
    MAX_BYTES,
    MAX_LINES,
    format_size,
    split_lines,
    truncate_head,
    truncate_tail,
)


def numbered(n: int) -> str:
    return "".join(f"line {i}\n" for i in range(1, n + 1))


def test_limits_are_pis_2000_lines_and_50_kib() -> None:
    assert (MAX_LINES, MAX_BYTES) == (2000, 51200)


def test_a_trailing_newline_ends_the_last_line_rather_than_starting_another() -> None:
    assert split_lines("a\nb\n") == ["a", "b"]
    assert split_lines("a\nb") == ["a", "b"]
    assert split_lines("") == []


def test_text_within_both_limits_is_returned_untouched() -> None:
    text = numbered(MAX_LINES)
    for truncate in (truncate_head, truncate_tail):
        t = truncate(text)
        assert t.text == text
        assert not t.truncated
        assert t.truncated_by is None
        assert (t.total_lines, t.output_lines, t.first_line, t.last_line) == (2000, 2000, 1, 2000)
        assert t.total_bytes == t.output_bytes == len(text.encode())


def test_head_keeps_the_first_2000_lines() -> None:
    t = truncate_head(numbered(2500))
    assert t.truncated and t.truncated_by == "lines"
    assert t.text.split("\n") == [f"line {i}" for i in range(1, 2001)]
    assert (t.total_lines, t.output_lines, t.first_line, t.last_line) == (2500, 2000, 1, 2000)


def test_tail_keeps_the_last_2000_lines() -> None:
    t = truncate_tail(numbered(2500))
    assert t.truncated and t.truncated_by == "lines"
    assert t.text.split("\n") == [f"line {i}" for i in range(501, 2501)]
    assert (t.total_lines, t.output_lines, t.first_line, t.last_line) == (2500, 2000, 501, 2500)


def test_head_stops_at_50_kib_on_a_line_boundary() -> None:
    text = "".join(f"{i:099d}\n" for i in range(1000))  # 100 bytes a line
    t = truncate_head(text)
    assert t.truncated and t.truncated_by == "bytes"
    assert t.output_lines == 512  # 512 lines of 99 bytes and 511 separators: 51199 bytes
    assert t.output_bytes == len(t.text.encode()) <= MAX_BYTES
    assert all(len(line) == 99 for line in t.text.split("\n"))


def test_tail_stops_at_50_kib_on_a_line_boundary() -> None:
    text = "".join(f"{i:099d}\n" for i in range(1000))
    t = truncate_tail(text)
    assert t.truncated and t.truncated_by == "bytes"
    assert t.text.split("\n")[-1] == f"{999:099d}"
    assert (t.first_line, t.last_line) == (1000 - t.output_lines + 1, 1000)
    assert all(len(line) == 99 for line in t.text.split("\n"))


def test_head_cuts_a_first_line_over_the_byte_limit_without_splitting_a_character() -> None:
    t = truncate_head("é" * 30000 + "\nnext\n")  # é is two bytes
    assert t.truncated and t.line_cut and t.truncated_by == "bytes"
    assert t.text == "é" * (MAX_BYTES // 2)
    assert (t.output_lines, t.first_line, t.last_line) == (1, 1, 1)


def test_tail_keeps_the_end_of_a_last_line_over_the_byte_limit_without_splitting_a_character() -> (
    None
):
    t = truncate_tail("start\n" + "€" * 20000)  # € is three bytes
    assert t.truncated and t.line_cut
    assert t.text == "€" * (MAX_BYTES // 3)
    assert t.output_bytes <= MAX_BYTES
    assert (t.first_line, t.last_line, t.total_lines) == (2, 2, 2)


def test_limits_can_be_given_per_call() -> None:
    t = truncate_head("a\nb\nc\nd", max_lines=2)
    assert (t.text, t.max_lines) == ("a\nb", 2)
    t = truncate_tail("aaaa\nbbbb\ncccc", max_bytes=9)
    assert (t.text, t.truncated_by) == ("bbbb\ncccc", "bytes")


def test_the_record_serialises_to_camel_case_json() -> None:
    record = truncate_tail(numbered(2001)).to_json()
    assert json.loads(json.dumps(record)) == record
    assert record["truncatedBy"] == "lines"
    assert (record["totalLines"], record["outputLines"], record["firstLine"]) == (2001, 2000, 2)


def test_sizes_are_formatted_like_pis_notices() -> None:
    assert format_size(512) == "512B"
    assert format_size(MAX_BYTES) == "50.0KB"
    assert format_size(3 * 1024 * 1024 // 2) == "1.5MB"
