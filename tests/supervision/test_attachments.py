"""`files` of a message: resolution from the caller's cwd, embedding, references, the limit."""

import os

import pytest

from piagents.supervision.attachments import (
    ComposedMessage,
    EmbeddedFile,
    FileReference,
    attachment_details,
    compose_message,
    render_attachments,
    resolve_attachments,
    with_attachments,
)
from piagents.supervision.errors import SupervisionError


@pytest.fixture
def cwd(tmp_path):
    d = tmp_path / "project"
    (d / "src").mkdir(parents=True)
    (d / "src" / "parser.py").write_text("def parse():\n    return 1\n")
    (d / "notes.md").write_text("# Plan\nB is better.")
    (d / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff")
    return d


def resolve(files, cwd, limit=1000):
    return resolve_attachments(files, cwd, inline_limit_bytes=limit, operation="delegate")


def refusal(files, cwd):
    with pytest.raises(SupervisionError) as caught:
        resolve(files, cwd)
    assert caught.value.category == "invalid_request"
    assert caught.value.operation == "delegate"
    return caught.value.message


# ---- resolving ------------------------------------------------------------------------------


def test_relative_paths_resolve_from_the_cwd_and_utf8_files_are_embedded(cwd):
    assert resolve(["src/parser.py", "notes.md"], cwd) == (
        EmbeddedFile(str(cwd / "src" / "parser.py"), "def parse():\n    return 1\n", 26),
        EmbeddedFile(str(cwd / "notes.md"), "# Plan\nB is better.", 19),
    )


def test_paths_are_canonicalised_with_realpath(cwd, tmp_path):
    link = tmp_path / "link-to-project"
    link.symlink_to(cwd)
    (attachment,) = resolve(["../../link-to-project/src/./parser.py"], cwd / "src")
    assert attachment.path == os.path.realpath(cwd / "src" / "parser.py")


def test_an_absolute_path_is_kept_absolute(cwd, tmp_path):
    (attachment,) = resolve([str(cwd / "notes.md")], tmp_path)
    assert attachment.path == str(cwd / "notes.md")


def test_a_file_listed_twice_is_attached_once(cwd):
    attachments = resolve(["notes.md", "./notes.md", str(cwd / "notes.md")], cwd)
    assert [a.path for a in attachments] == [str(cwd / "notes.md")]


def test_bytes_that_are_not_strict_utf8_are_passed_as_a_binary_reference(cwd):
    assert resolve(["logo.png"], cwd) == (FileReference(str(cwd / "logo.png"), 10, "binary"),)


def test_a_lone_surrogate_encoding_is_not_strict_utf8(cwd):
    (cwd / "odd.txt").write_bytes(b"a\xed\xa0\x80b")
    (attachment,) = resolve(["odd.txt"], cwd)
    assert attachment == FileReference(str(cwd / "odd.txt"), 5, "binary")


def test_a_file_over_the_inline_budget_is_a_too_large_reference(cwd):
    (cwd / "big.log").write_text("x" * 1001)
    assert resolve(["big.log"], cwd, limit=1000) == (
        FileReference(str(cwd / "big.log"), 1001, "too_large"),
    )


def test_a_file_of_exactly_the_budget_is_embedded(cwd):
    (cwd / "exact.txt").write_text("y" * 1000)
    (attachment,) = resolve(["exact.txt"], cwd, limit=1000)
    assert isinstance(attachment, EmbeddedFile)


def test_the_inline_budget_is_shared_in_the_order_given(cwd):
    (cwd / "a.txt").write_text("a" * 600)
    (cwd / "b.txt").write_text("b" * 600)
    (cwd / "c.txt").write_text("c" * 400)
    a, b, c = resolve(["a.txt", "b.txt", "c.txt"], cwd, limit=1000)
    assert isinstance(a, EmbeddedFile)
    assert b == FileReference(str(cwd / "b.txt"), 600, "too_large")
    assert isinstance(c, EmbeddedFile)  # still fits what a left


def test_an_empty_file_is_embedded(cwd):
    (cwd / "empty.txt").write_text("")
    assert resolve(["empty.txt"], cwd, limit=0) == (EmbeddedFile(str(cwd / "empty.txt"), "", 0),)


def test_a_missing_file_is_refused_naming_the_path(cwd):
    assert refusal(["src/nope.py"], cwd) == (
        f"`files`: src/nope.py does not exist (resolved to {cwd}/src/nope.py)."
    )


def test_a_missing_absolute_path_is_named_once(cwd):
    assert refusal([f"{cwd}/nope.py"], cwd) == f"`files`: {cwd}/nope.py does not exist."


def test_a_directory_is_not_a_regular_file(cwd):
    assert refusal(["src"], cwd) == f"`files`: src is not a regular file (resolved to {cwd}/src)."


def test_a_fifo_is_refused_without_blocking(cwd):
    os.mkfifo(cwd / "pipe")
    assert refusal(["pipe"], cwd).startswith("`files`: pipe is not a regular file")


def test_a_broken_symlink_does_not_exist(cwd):
    (cwd / "dangling").symlink_to(cwd / "gone.txt")
    assert refusal(["dangling"], cwd).startswith("`files`: dangling does not exist")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file_is_refused(cwd):
    secret = cwd / "secret.txt"
    secret.write_text("s")
    secret.chmod(0)
    assert refusal(["secret.txt"], cwd) == (
        f"`files`: secret.txt cannot be read (resolved to {secret}): Permission denied."
    )


def test_a_file_the_system_refuses_to_open_is_refused_with_the_reason(cwd, monkeypatch):
    def refuse(path, flags):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "open", refuse)
    assert refusal(["notes.md"], cwd) == (
        f"`files`: notes.md cannot be read (resolved to {cwd}/notes.md): Permission denied."
    )


@pytest.mark.parametrize("pseudo", ["/proc/self/environ", "/proc/self/status"])
def test_a_procfs_file_is_not_a_regular_file_and_is_never_embedded(cwd, pseudo):
    assert refusal([pseudo], cwd).startswith(f"`files`: {pseudo} is not a regular file")


def test_a_symlink_to_a_procfs_file_is_refused_too(cwd):
    (cwd / "env.txt").symlink_to("/proc/self/environ")
    assert refusal(["env.txt"], cwd).startswith("`files`: env.txt is not a regular file")


def test_a_device_is_refused(cwd):
    assert refusal(["/dev/zero"], cwd).startswith("`files`: /dev/zero is not a regular file")


@pytest.mark.parametrize("given", ["notes\0.md", "src/\0"])
def test_a_path_with_a_nul_byte_is_an_invalid_request(cwd, given):
    assert refusal([given], cwd) == f"`files`: {given!r} is not a valid path (it holds a NUL byte)."


def test_a_cwd_with_a_nul_byte_is_an_invalid_request(cwd):
    assert refusal(["notes.md"], f"{cwd}\0") == (
        "`files`: the working directory is not a valid path (it holds a NUL byte)."
    )


def test_one_bad_path_refuses_the_whole_list(cwd):
    assert "nope" in refusal(["notes.md", "nope"], cwd)


# ---- rendering ------------------------------------------------------------------------------

PARSER = EmbeddedFile("/w/src/parser.py", "def parse():\n    return 1\n", 26)
NOTES = EmbeddedFile("/w/notes.md", "# Plan\nB is better.", 19)
LOG = FileReference("/w/build.log", 2000000, "too_large")
LOGO = FileReference("/w/logo.png", 5120, "binary")


def test_rendering_embeds_files_in_fences_then_lists_references():
    assert render_attachments([PARSER, LOG, NOTES, LOGO]) == (
        "Attached file: /w/src/parser.py\n"
        "```\n"
        "def parse():\n"
        "    return 1\n"
        "```\n"
        "\n"
        "Attached file: /w/notes.md\n"
        "```\n"
        "# Plan\n"
        "B is better.\n"
        "```\n"
        "\n"
        "Attached by path, not embedded (read them from disk):\n"
        "- /w/build.log (2000000 bytes, too large to embed)\n"
        "- /w/logo.png (5120 bytes, binary)"
    )


def test_a_fence_is_longer_than_any_backtick_run_in_the_file():
    readme = EmbeddedFile("/w/README.md", "Run:\n````sh\nmake\n````\n", 22)
    assert render_attachments([readme]) == (
        "Attached file: /w/README.md\n`````\nRun:\n````sh\nmake\n````\n`````"
    )


def test_an_empty_file_renders_as_an_empty_fence():
    assert render_attachments([EmbeddedFile("/w/e", "", 0)]) == "Attached file: /w/e\n```\n```"


def test_no_attachments_render_as_nothing_and_leave_the_message_alone():
    assert render_attachments([]) == ""
    assert with_attachments("Fix it.", []) == "Fix it."


def test_the_attachments_follow_the_message_after_a_blank_line():
    assert with_attachments("Fix it.", [LOGO]) == (
        "Fix it.\n\n"
        "Attached by path, not embedded (read them from disk):\n"
        "- /w/logo.png (5120 bytes, binary)"
    )


def test_details_say_how_each_file_travelled():
    assert attachment_details([NOTES, LOGO]) == [
        {"path": "/w/notes.md", "size": 19, "embedded": True},
        {"path": "/w/logo.png", "size": 5120, "embedded": False, "reason": "binary"},
    ]


# ---- the payload limit ------------------------------------------------------------------------


def compose(message, attachments, limit):
    return compose_message(message, attachments, payload_limit_bytes=limit, operation="reply")


def test_a_message_within_the_limit_is_composed_as_rendered():
    composed = compose("Use B.", [NOTES, LOGO], 10_000)
    assert composed == ComposedMessage(with_attachments("Use B.", [NOTES, LOGO]), (NOTES, LOGO))
    assert composed.size == len(composed.text.encode())


def test_the_limit_is_inclusive_and_counts_utf8_bytes():
    page = EmbeddedFile("/w/page.md", "é" * 100, 200)
    size = len(with_attachments("é", [page]).encode())
    assert compose("é", [page], size).attachments == (page,)
    assert compose("é", [page], size - 1).attachments == (
        FileReference(page.path, page.size, "too_large"),
    )


def test_a_file_that_would_overflow_the_limit_becomes_a_reference_and_later_ones_may_fit():
    big = EmbeddedFile("/w/big.txt", "b" * 500, 500)
    small = EmbeddedFile("/w/small.txt", "s" * 10, 10)
    composed = compose("Look.", [big, small], 300)
    assert composed.attachments == (FileReference("/w/big.txt", 500, "too_large"), small)
    assert composed.text == (
        "Look.\n\n"
        "Attached file: /w/small.txt\n```\nssssssssss\n```\n\n"
        "Attached by path, not embedded (read them from disk):\n"
        "- /w/big.txt (500 bytes, too large to embed)"
    )
    assert composed.size <= 300


def test_earlier_files_are_embedded_first():
    a = EmbeddedFile("/w/a.txt", "a" * 100, 100)
    b = EmbeddedFile("/w/b.txt", "b" * 100, 100)
    fits_one = len(with_attachments("m", [a, FileReference("/w/b.txt", 100, "too_large")]))
    composed = compose("m", [a, b], fits_one)
    assert composed.attachments == (a, FileReference("/w/b.txt", 100, "too_large"))


def test_a_message_over_the_limit_by_itself_is_an_invalid_request():
    with pytest.raises(SupervisionError) as caught:
        compose("x" * 2000, [], 1024)
    assert caught.value.to_details() == {
        "category": "invalid_request",
        "message": "The message is 2000 bytes, over the mailbox payload limit of 1024 bytes.",
        "operation": "reply",
        "rollbackOccurred": False,
        "retryAttempted": False,
        "nextAction": "shorten the message, or put long text in a file passed in `files`",
    }


def test_a_message_over_the_limit_with_only_references_left_is_refused():
    with pytest.raises(SupervisionError) as caught:
        compose("x" * 1000, [NOTES], 1024)
    size = len(with_attachments("x" * 1000, [FileReference(NOTES.path, 19, "too_large")]))
    assert caught.value.message == (
        f"The message with its file references is {size} bytes, over the mailbox payload "
        "limit of 1024 bytes."
    )


def test_resolved_files_compose_end_to_end(cwd):
    attachments = resolve(["notes.md", "logo.png"], cwd)
    composed = compose("Use B.", attachments, 4096)
    assert composed.text == (
        "Use B.\n\n"
        f"Attached file: {cwd}/notes.md\n```\n# Plan\nB is better.\n```\n\n"
        "Attached by path, not embedded (read them from disk):\n"
        f"- {cwd}/logo.png (10 bytes, binary)"
    )
