"""`pi-agents workers` lists the holders registered in a store: capacity, load,
heartbeat age, alive or lapsed; as a table or as JSON."""

from __future__ import annotations

import json

import piagents
from piagents.cli import main
from piagents.cli_workers import table
from piagents.store.base import LeaseHolder, Registration, WorkerRecord
from piagents.store.postgres import PostgresStore
from piagents.testing import FunctionModel
from support import eventually


def test_a_home_without_a_store_has_no_workers(home, capsys) -> None:
    assert main(["workers", "--home", str(home)]) == 0
    assert capsys.readouterr().out == "No workers.\n"
    assert main(["workers", "--home", str(home), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


async def test_an_open_runtime_is_listed_alive_with_its_load(home, work, capsys) -> None:
    async with piagents.Runtime(home, model=FunctionModel(lambda c: "ok")) as rt:
        await rt.open_root(cwd=work)
        rt.presence.beat()  # its load, now
        assert main(["workers", "--home", str(home), "--json"]) == 0
        [me] = json.loads(capsys.readouterr().out)
        assert rt.holder is not None
        assert me["token"] == rt.holder.token and me["pid"] == rt.holder.pid
        assert (me["kind"], me["capacity"], me["load"], me["state"]) == (
            "runtime",
            None,
            1,
            "alive",
        )
        assert 0 <= me["heartbeatAgeS"] < 15
        assert main(["workers", "--home", str(home)]) == 0
        header, line = capsys.readouterr().out.splitlines()
        assert header.split() == [
            "TOKEN", "KIND", "HOST", "PID", "CAPACITY", "LOAD", "HEARTBEAT", "STATE",
        ]  # fmt: skip
        assert line.split()[:2] == [rt.holder.token[:8], "runtime"]
        assert line.split()[-1] == "alive"
    assert main(["workers", "--home", str(home)]) == 0
    assert capsys.readouterr().out == "No workers.\n"  # it left the registry as it closed


def test_a_postgresql_stores_workers_lapse_as_the_homes_settings_say(
    home, postgres_url, capsys
) -> None:
    (home / "settings.json").write_text(json.dumps({"pi-agents": {"leaseLapseMs": 200}}))
    store = PostgresStore(postgres_url)
    try:
        remote = LeaseHolder(4242, "machine-b", "f" * 32, "1")
        store.register(Registration(remote, kind="worker", capacity=6, load=2))

        def listed() -> dict:
            assert main(["workers", "--home", str(home), "--store", postgres_url, "--json"]) == 0
            [w] = json.loads(capsys.readouterr().out)
            return w

        assert (listed()["host"], listed()["capacity"], listed()["load"]) == ("machine-b", 6, 2)
        lapsed = eventually(lambda: (w := listed())["state"] == "lapsed" and w, "a lapse")
        assert lapsed["heartbeatAgeS"] >= 0.2
    finally:
        store.close()


def test_the_table_shows_a_missing_capacity_as_a_dash() -> None:
    w = WorkerRecord("0123456789abcdef", "h", 7, "worker", None, 0, 2.5, False, 0.0)
    assert table([w])[1].split() == ["01234567", "worker", "h", "7", "-", "0", "2.5", "s", "lapsed"]
