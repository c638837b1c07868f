"""Starting, signalling and reading the evidence of worker processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from piagents.store import lease
from piagents.supervision import placement
from support import eventually


def test_the_worker_command_names_the_home_and_the_generation(tmp_path: Path) -> None:
    command = placement.worker_command(tmp_path, "g1")
    assert command[:3] == [sys.executable, "-m", "piagents.cli"]
    assert command[3:] == ["worker", "--home", str(tmp_path), "--generation", "g1"]


def test_inspect_evidence_is_kept_in_the_store_and_read_back(tmp_path: Path) -> None:
    from piagents.store.sqlite import SQLiteStore

    store = SQLiteStore(tmp_path / "store.db")
    assert placement.read_evidence(store, "g1") == ({}, None)
    evidence = {"recent_output": "hi", "recent_output_truncated": False, "processes": [[1, "x"]]}
    placement.write_evidence(store, "g1", evidence)
    got, written = placement.read_evidence(store, "g1")
    assert got == evidence and written is not None
    assert not placement.run_dir(tmp_path, "g1").exists()  # nothing in the home
    store.put_generation_document("g1", "evidence", "{broken")
    assert placement.read_evidence(store, "g1")[0] == {}
    store.close()


def test_the_leads_runtime_options_are_read_back_by_its_worker(tmp_path: Path) -> None:
    folder = placement.run_dir(tmp_path, "g1")
    folder.mkdir(parents=True)
    assert placement.read_options(tmp_path, "g1") == {}  # written by a lead of before
    options = {"settings": {"pi-agents": {"abortTimeoutMs": 900}}, "tools": ["read"]}
    (folder / placement.OPTIONS_FILE).write_text(json.dumps(options))
    assert placement.read_options(tmp_path, "g1") == options


def test_options_offered_to_the_pool_are_read_from_the_store_and_checked(
    tmp_path: Path,
) -> None:
    from piagents.store.sqlite import SQLiteStore

    store = SQLiteStore(tmp_path / "store.db")
    assert placement.read_offered_options(store, "g1") == {}
    options = {"settings": {"pi-agents": {"abortTimeoutMs": 900}}, "tools": ["read"]}
    placement.offer(store, "g1", options)
    assert placement.read_offered_options(store, "g1") == options
    store.put_generation_document("g1", "options", '{"tools": "read"}')
    with pytest.raises(placement.OptionsError, match="options of generation g1: option 'tools'"):
        placement.read_offered_options(store, "g1")
    store.close()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{not json", "cannot be read"),
        ("[]", "expected a JSON object"),
        ('{"colour": "red"}', "unknown option 'colour'"),
        ('{"tools": "read"}', "option 'tools' has the wrong type"),
        ('{"tools": [1]}', "option 'tools' has the wrong type"),
    ],
)
def test_a_broken_options_file_is_a_clear_error(tmp_path: Path, text: str, problem: str) -> None:
    folder = placement.run_dir(tmp_path, "g1")
    folder.mkdir(parents=True)
    (folder / placement.OPTIONS_FILE).write_text(text)
    with pytest.raises(placement.OptionsError, match=problem):
        placement.read_options(tmp_path, "g1")


def test_killing_a_worker_kills_the_commands_of_its_process_group() -> None:
    script = (
        "import subprocess, sys, time\n"
        "p = subprocess.Popen(['sleep', '30'])\n"
        "print(p.pid, flush=True)\n"
        "time.sleep(30)\n"
    )
    worker = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    assert worker.stdout is not None
    sleeper = int(worker.stdout.readline())
    holder = placement.holder_of(sleeper)
    placement.kill_group(worker.pid)
    worker.wait(timeout=5)
    eventually(lambda: lease.presence(holder) == "gone", "the killed group's sleep to be gone")
    assert os.getpgid(os.getpid()) == os.getpgrp()  # our own group was left alone
