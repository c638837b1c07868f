"""Who holds a session: the live-runtime check behind session leases.

A lease is alive while its holder's heartbeat (renewed every RENEW_S by the holder,
timed by the store's clock) is younger than the lapse (LAPSE_S by default). On the
holder's own machine its process is checked too, so a lease of a process that is
gone is gone at once, without waiting for the lapse."""

from __future__ import annotations

import os
import socket
import uuid

from piagents.store.base import LeaseHolder

RENEW_S = 5.0  # how often a holder renews its heartbeat
LAPSE_S = 15.0  # how old a heartbeat may be before its holder's leases may be taken
FORGOTTEN_S = 86_400.0  # a holder lapsed this long, with no lease left, leaves the registry

# Runtimes of this process that are open now; a lease naming our pid with a
# token not in this set belongs to a runtime that has closed or crashed.
_live_tokens: set[str] = set()


def _stat(pid: int) -> list[str]:
    """The fields of /proc/<pid>/stat after the command name, from field 3 (state)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read().decode(errors="replace")
    except OSError:
        return []
    # The parenthesised command name may hold spaces.
    return stat[stat.rfind(")") + 2 :].split()


def process_start_time(pid: int) -> str:
    """The kernel's start time of `pid` (Linux), or "" where it cannot be read."""
    fields = _stat(pid)
    return fields[19] if len(fields) > 19 else ""  # field 22, starttime


def _exited(pid: int) -> bool:
    """A zombie has exited; only its exit status waits for its parent."""
    fields = _stat(pid)
    return bool(fields) and fields[0] in ("Z", "X")


def new_holder() -> LeaseHolder:
    pid = os.getpid()
    holder = LeaseHolder(pid, socket.gethostname(), uuid.uuid4().hex, process_start_time(pid))
    _live_tokens.add(holder.token)
    return holder


def retire(holder: LeaseHolder) -> None:
    _live_tokens.discard(holder.token)


def is_alive(holder: LeaseHolder, fresh: bool | None = None) -> bool:
    """Whether `holder` still holds its leases. `fresh`: whether its heartbeat is
    within the lapse; None for a lease with no heartbeat recorded (written by an
    earlier pi-agents), judged by its process alone."""
    if fresh is not None:
        local = holder.host == socket.gethostname()
        return fresh and not (local and presence(holder) == "gone")
    if holder.host != socket.gethostname():
        return True  # cannot tell from here; assume the other machine still holds it
    if holder.pid == os.getpid():
        return holder.token in _live_tokens
    try:
        os.kill(holder.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    if _exited(holder.pid):
        return False
    started = process_start_time(holder.pid)
    return not (holder.started and started and started != holder.started)


def presence(holder: LeaseHolder) -> str:
    """`alive`, `gone`, or `unknown` (another machine, or a process that cannot be read)."""
    if holder.host != socket.gethostname():
        return "unknown"
    if holder.pid == os.getpid():
        return "alive" if holder.token in _live_tokens else "gone"
    try:
        os.kill(holder.pid, 0)
    except ProcessLookupError:
        return "gone"
    except PermissionError:
        pass
    if _exited(holder.pid):
        return "gone"
    started = process_start_time(holder.pid)
    if not holder.started or not started:
        return "unknown"
    return "alive" if started == holder.started else "gone"
