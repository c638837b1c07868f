"""Whether a lease holder's process is alive, gone, or cannot be told."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys

from piagents.store import lease
from piagents.store.base import LeaseHolder
from support import eventually


def _holder(pid: int) -> LeaseHolder:
    return LeaseHolder(pid, socket.gethostname(), "token", lease.process_start_time(pid))


def test_a_running_process_is_alive_and_its_start_time_identifies_it() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        holder = _holder(child.pid)
        assert lease.presence(holder) == "alive"
        assert lease.is_alive(holder)
        reused = LeaseHolder(child.pid, holder.host, holder.token, "1")  # another process
        assert lease.presence(reused) == "gone"
    finally:
        child.kill()
        child.wait()


def test_an_exited_child_not_yet_reaped_is_gone() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    holder = _holder(child.pid)
    eventually(lambda: lease.presence(holder) == "gone", "the exited child")  # a zombie, unreaped
    assert not lease.is_alive(holder)
    assert os.waitpid(child.pid, 0)[0] == child.pid  # it was still there to be reaped
    child.returncode = 0


def test_a_killed_process_is_gone_and_another_machines_is_unknown() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    holder = _holder(child.pid)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert lease.presence(holder) == "gone"
    elsewhere = LeaseHolder(child.pid, "another-machine", "token", holder.started)
    assert lease.presence(elsewhere) == "unknown"


def test_a_heartbeat_decides_unless_the_process_here_is_gone() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        here = _holder(child.pid)
        assert lease.is_alive(here, True)
        assert not lease.is_alive(here, False)  # alive, but its heartbeat lapsed
        assert lease.is_alive(here, None)  # no heartbeat recorded: its process decides
    finally:
        child.kill()
        child.wait()
    assert not lease.is_alive(here, True)  # gone here: at once, whatever its heartbeat
    elsewhere = LeaseHolder(child.pid, "another-machine", "token", here.started)
    assert lease.is_alive(elsewhere, True)
    assert not lease.is_alive(elsewhere, False)
