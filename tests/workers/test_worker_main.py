"""`pi-agents worker` refuses what it cannot run on, clearly, before it starts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def _worker(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "piagents.cli", "worker", "--home", str(home), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_worker_needs_a_postgresql_store(home: Path) -> None:
    done = _worker(home=home)
    assert done.returncode == 2
    assert "workers need a PostgreSQL store: give --store postgresql://" in done.stderr


def test_a_worker_needs_room_for_at_least_one_root(home: Path) -> None:
    done = _worker("--store", "postgresql://u@127.0.0.1:1/x", "--capacity", "0", home=home)
    assert done.returncode == 2
    assert "--capacity must be at least 1" in done.stderr


def test_a_worker_whose_store_cannot_be_reached_says_so(home: Path) -> None:
    done = _worker("--store", "postgresql://u@127.0.0.1:1/x", home=home)
    assert done.returncode == 1
    assert done.stderr.startswith("pi-agents worker: ")
    assert "127.0.0.1:1/x" in done.stderr


def test_a_worker_without_dbos_installed_says_which_extra_to_install(home: Path) -> None:
    script = (
        "import sys; sys.modules['dbos'] = None; "  # as if it were not installed
        "from piagents.workers.main import main; "
        f"sys.exit(main(['--home', {str(home)!r}, '--store', 'postgresql://u@127.0.0.1:1/x']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert "pip install 'pi-agents[workers]'" in done.stderr
