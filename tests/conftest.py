import os

import pytest


@pytest.fixture(autouse=True)
def _no_real_keys(monkeypatch, tmp_path_factory):
    """Tests never reach a real provider, nor the user's home: the default home is a
    path no test creates, inside this run's own temporary directory (a fixed path
    would be shared by two copies of the suite running side by side)."""
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    nowhere = tmp_path_factory.getbasetemp() / "nonexistent-pi-agents-home"
    monkeypatch.setenv("PI_AGENTS_HOME", str(nowhere))


@pytest.fixture
def home(tmp_path):
    h = tmp_path / "home"
    h.mkdir()
    return h


@pytest.fixture
def work(tmp_path):
    w = tmp_path / "work"
    w.mkdir()
    return w


@pytest.fixture
def make_read_only():
    """Make a file or directory unwritable for this process, for real: by its mode,
    or (for root, whom modes do not stop) by the immutable attribute. Undone after."""
    import shutil
    import stat
    import subprocess

    undo = []

    def make(path):
        if os.geteuid() != 0:
            mode = path.stat().st_mode
            path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
            undo.append(lambda: path.chmod(mode))
            return
        if shutil.which("chattr") is None:
            pytest.skip("running as root without chattr: cannot make a path read-only")
        done = subprocess.run(["chattr", "+i", str(path)], capture_output=True)
        if done.returncode != 0:
            pytest.skip(f"cannot make {path} immutable: {done.stderr.decode().strip()}")
        undo.append(lambda: subprocess.run(["chattr", "-i", str(path)], check=True))

    yield make
    for step in reversed(undo):
        step()


@pytest.fixture(scope="session")
def postgres_server():
    """A PostgreSQL server of this run's own (`postgres_server.py`), stopped at the end.
    Skipped, with the reason, where the server is not installed, except in CI."""
    import postgres_server as pg

    with pg.running() as server:
        if isinstance(server, str):
            if os.environ.get("CI") == "true":
                pytest.fail(f"{server}: CI must run the PostgreSQL tests (.ci/run installs it)")
            pytest.skip(server)
        yield server


@pytest.fixture
def postgres_url(postgres_server):
    """The URL of a fresh, empty database of its own for this test."""
    return postgres_server.database()


@pytest.fixture
def own_server(postgres_server):  # the shared server must be there (else skipped)
    """A PostgreSQL server of this test's own, which it may stop and start again."""
    import postgres_server as pg

    server = pg.PostgresServer(postgres_server.bin)
    server.start()
    yield server
    server.stop()
