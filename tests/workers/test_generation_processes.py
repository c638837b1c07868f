"""A pool worker's generation processes: the standby kept ready takes the next
generation, a new standby replaces it, a dead one is never handed work, and a
standby let go (or given something that is not a generation's id) exits."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from piagents.store.records import GenerationRecord
from piagents.supervision import placement
from piagents.workers.generations import GenerationProcesses
from support import eventually

UNREACHABLE = "postgresql://u@127.0.0.1:1/nowhere"  # nothing listens: the run fails at once


def _generation(gid: str) -> GenerationRecord:
    return GenerationRecord(
        id=gid,
        label="scout-1",
        definition="scout",
        root_id="lead",
        owner_id="lead",
        session_id=f"s-{gid}",
        cwd="/",
        task="t",
        placement="workers",
    )


def _exited(process: subprocess.Popen[bytes]) -> int | None:
    return process.poll()


def test_a_generation_goes_to_the_standby_and_a_new_standby_is_made_ready(home: Path) -> None:
    processes = GenerationProcesses(home, UNREACHABLE)
    try:
        processes.prepare()
        standby = processes.standby
        assert standby is not None and standby.poll() is None
        processes.prepare()  # one is there: nothing more
        assert processes.standby is standby

        processes.start(_generation("g1"))
        assert processes.running["g1"] is standby
        assert processes.standby is not None and processes.standby is not standby
        # It ran g1 (its store cannot be reached), its output in g1's own log.
        assert eventually(lambda: _exited(standby) is not None, "g1's run to end") == 1
        log = (placement.run_dir(home, "g1") / placement.LOG_FILE).read_text()
        assert "worker for generation g1 cannot start" in log
        assert "127.0.0.1:1" in log
    finally:
        processes.close()


def test_a_standby_that_died_gets_no_work_and_a_process_is_started_afresh(home: Path) -> None:
    processes = GenerationProcesses(home, UNREACHABLE)
    try:
        processes.prepare()
        dead = processes.standby
        assert dead is not None
        dead.kill()
        dead.wait(10)

        processes.start(_generation("g2"))
        fresh = processes.running["g2"]
        assert fresh is not dead
        assert fresh.args[-4:-2] == ["--generation", "g2"]
        assert eventually(lambda: _exited(fresh) is not None, "g2's run to end") == 1
        log = (placement.run_dir(home, "g2") / placement.LOG_FILE).read_text()
        assert "worker for generation g2 cannot start" in log
        assert processes.standby is not None and processes.standby.poll() is None
    finally:
        processes.close()


def test_a_standby_let_go_exits_and_a_worker_can_keep_none(home: Path) -> None:
    processes = GenerationProcesses(home, UNREACHABLE)
    processes.prepare()
    standby = processes.standby
    assert standby is not None
    processes.close()
    assert standby.poll() is not None and processes.standby is None

    without = GenerationProcesses(home, UNREACHABLE, standby=False)
    without.prepare()
    assert without.standby is None


def _standby(home: Path, stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "piagents.cli", "worker", "--standby", "--home", str(home),
         "--store", UNREACHABLE],
        input=stdin, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_a_standby_whose_stdin_ends_without_an_id_exits_quietly(home: Path) -> None:
    done = _standby(home, "")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_a_standby_refuses_what_is_not_a_generation_id(home: Path) -> None:
    done = _standby(home, "../../elsewhere\n")
    assert done.returncode == 2
    assert "not a generation id: '../../elsewhere'" in done.stdout
    assert not (home / "elsewhere").exists() and not (home.parent / "elsewhere").exists()
