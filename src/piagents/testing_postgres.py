"""A throwaway PostgreSQL server: `initdb` and `pg_ctl` in a temporary directory,
listening on a free loopback port (and a Unix socket in that directory), one fresh
database per `database()` call.

The tests (`tests/conftest.py` starts one per session when a test asks for it) and
the benchmarks (`bench/bench_postgres.py`, `bench/dbos_probe.py`) share it, so it
lives in the package beside `piagents.testing`. Without the server binaries the
tests that need it are skipped, with the reason, except in CI (`CI=true`), where
that is a failure: CI installs the server (`.ci/run`).

`initdb` refuses to run as root: as root, the server runs as the unprivileged
`postgres` user (made by the server package), or `nobody`, through `setpriv`.
"""

from __future__ import annotations

import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import psycopg

USER = "piagents"
PASSWORD = "test-secret"


def binaries() -> Path | None:
    """The directory holding `initdb` and `pg_ctl`, or None when the server is absent."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    # Debian's server package keeps them off PATH, under the server's version.
    for directory in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (directory / "initdb").exists() and (directory / "pg_ctl").exists():
            return directory
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run_as() -> list[str]:
    """The command prefix that runs the server unprivileged (nothing when not root)."""
    if os.geteuid() != 0:
        return []
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        return ["setpriv", f"--reuid={name}", f"--regid={name}", "--init-groups", "--"]
    raise RuntimeError("running as root with neither a postgres nor a nobody user")


def _owner() -> tuple[int, int] | None:
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        return entry.pw_uid, entry.pw_gid
    return None


class PostgresServer:
    """A running server; `database()` makes a fresh database and gives its URL."""

    def __init__(self, bin_dir: Path, *, durable: bool = False) -> None:
        self.bin = bin_dir
        # Tests and the benches' ratios need no durability; `durable` keeps the
        # server's defaults (fsync, synchronous_commit), as a deployment has them.
        self.durable = durable
        # Not under pytest's own (root-only) temporary directory: the server's user
        # must reach its data directory.
        self.dir = Path(tempfile.mkdtemp(prefix="piagents-pg-"))
        self.data = self.dir / "data"
        self.port = 0
        self._names = itertools.count(1)
        owner = _owner()
        if owner is not None:
            os.chown(self.dir, *owner)
        pwfile = self.dir / "pw"
        pwfile.write_text(PASSWORD + "\n")
        if owner is not None:
            os.chown(pwfile, *owner)
        self._call(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            USER,
            f"--pwfile={pwfile}",
            "--auth-host=scram-sha-256",
            "--auth-local=trust",
            "-E",
            "UTF8",
            "--no-sync",
        )

    def _call(self, tool: str, *args: str) -> None:
        done = subprocess.run(
            [*_run_as(), str(self.bin / tool), *args],
            capture_output=True,
            text=True,
            cwd=self.dir,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{tool} failed ({done.returncode}): {done.stderr or done.stdout}")

    def start(self, port: int | None = None, extra: dict[str, str] | None = None) -> None:
        """Start the server: on `port` (again, after `halt`), or on a free one;
        `extra`: more settings (`-c name=value`), e.g. for pg_stat_statements."""
        for _ in range(1 if port else 5):  # a port taken meanwhile: another one
            self.port = port or _free_port()
            options = (
                f"-c listen_addresses=127.0.0.1 -c port={self.port} "
                f"-c unix_socket_directories={self.dir} -c max_connections=200"
            )
            if not self.durable:
                options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
            if extra:
                options += " " + " ".join(f"-c {k}={v}" for k, v in extra.items())
            try:
                self._call(
                    "pg_ctl", "-D", str(self.data), "-l", str(self.dir / "log"), "-w",
                    "-o", options, "start",
                )  # fmt: skip
                return
            except RuntimeError:
                log = self.dir / "log"
                if "could not bind" not in (log.read_text() if log.exists() else ""):
                    raise
        raise RuntimeError("no free port for the PostgreSQL server")

    def halt(self) -> None:
        """Stop the server, keeping its data: `start(port)` brings it back."""
        self._call("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def stop(self) -> None:
        try:
            self._call("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)

    def url(self, database: str = "postgres", *, password: str = PASSWORD) -> str:
        """The database's URL over loopback TCP (as a server on another machine)."""
        return f"postgresql://{USER}:{password}@127.0.0.1:{self.port}/{database}"

    def socket_url(self, database: str = "postgres") -> str:
        """The database's URL over the server's Unix socket."""
        return f"postgresql://{USER}@/{database}?host={self.dir}&port={self.port}"

    def admin(self) -> psycopg.Connection[Any]:
        """A connection to the server's own database, for the callers' own statements."""
        import psycopg

        return psycopg.connect(self.url(), autocommit=True)

    def database(self) -> str:
        """A fresh, empty database; its URL."""
        name = f"t{os.getpid()}_{next(self._names)}"
        with self.admin() as db:
            # Copying the template's files is the faster way for a small database (15+).
            fast = " STRATEGY FILE_COPY" if db.info.server_version >= 150000 else ""
            db.execute(f'CREATE DATABASE "{name}" TEMPLATE template0{fast}')
        return self.url(name)


@contextmanager
def running() -> Iterator[PostgresServer | str]:
    """A started server, or the reason there is none (the binaries are absent)."""
    bin_dir = binaries()
    if bin_dir is None:
        yield "the PostgreSQL server binaries (initdb, pg_ctl) are not installed"
        return
    server = PostgresServer(bin_dir)
    try:
        server.start()
        yield server
    finally:
        server.stop()
