"""Roots in different processes on one home see and message each other."""

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import piagents
from piagents.agents.mailbox import poke
from piagents.store.base import SessionInUse
from piagents.testing import FunctionModel
from support import until

HERE = Path(__file__).parent


def start_peer(home, cwd, name, tmp_path, store=None, **peer_env):
    ready, log, stop = tmp_path / f"{name}.id", tmp_path / f"{name}.log", tmp_path / f"{name}.stop"
    env = {
        **os.environ,
        "PYTHONPATH": f"{HERE}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
        **peer_env,
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            str(HERE / "peer_process.py"),
            str(home),
            str(cwd),
            name,
            str(ready),
            str(log),
            str(stop),
            *((store,) if store else ()),
        ],
        env=env,
        stdin=subprocess.DEVNULL,
    )
    return proc, ready, log, stop


async def test_a_root_messages_a_root_held_by_another_process(home, work, tmp_path):
    proc, ready, log, stop = start_peer(home, work, "bob", tmp_path)
    try:
        await until(ready.exists)
        bob_id = ready.read_text()
        async with piagents.Runtime(home=home, model=FunctionModel(lambda c: "alice")) as rt:
            alice = await rt.open_root(cwd=work, name="alice")
            listed = await alice.call_tool("agent", {"action": "list", "query": "bob"})
            assert listed.details["agents"] == [{"id": bob_id, "name": "bob", "state": "idle"}]
            res = await alice.call_tool(
                "agent", {"action": "send", "target": "bob", "message": "hello from alice"}
            )
            assert res.text == f"Input accepted by bob ({bob_id[:8]})."
            await until(lambda: log.exists() and "hello from alice" in log.read_text())
            assert (
                'note="Reply with send">\\nhello from alice\\n</agent-message>' in log.read_text()
            )
            w = await alice.call_tool(
                "agent",
                {
                    "action": "send",
                    "target": "bob",
                    "message": "just so you know",
                    "deliverAs": "write",
                },
            )
            assert not w.is_error
            # the session is in use by the other process
            with pytest.raises(SessionInUse, match=f"pid {proc.pid} "):
                await rt.open_root(session=bob_id)
    finally:
        stop.touch()
        proc.wait(timeout=20)


async def test_on_postgresql_a_root_held_by_another_process_is_woken_by_notify(
    tmp_path, work, postgres_url
):
    # Two homes, as on two machines: nothing but the database is shared.
    peer_home, home = tmp_path / "peer-home", tmp_path / "home"
    proc, ready, log, stop = start_peer(peer_home, work, "bob", tmp_path, postgres_url)
    try:
        await until(ready.exists)
        bob_id = ready.read_text()
        model = FunctionModel(lambda c: "alice")
        settings = {"store": postgres_url}
        async with piagents.Runtime(home=home, model=model, settings=settings) as rt:
            bob_holder = rt.store.lease_of(bob_id)
            assert bob_holder is not None and bob_holder.pid == proc.pid
            assert not await poke(bob_holder.token)  # no Unix socket: only the database
            alice = await rt.open_root(cwd=work, name="alice")
            res = await alice.call_tool(
                "agent", {"action": "send", "target": bob_id, "message": "over the database"}
            )
            assert res.text == f"Input accepted by bob ({bob_id[:8]})."
            await until(lambda: log.exists() and "over the database" in log.read_text())
            [accepted] = rt.store.inputs(recipient_ids=[bob_id])
            assert accepted.delivered  # taken by bob's runtime, woken by the NOTIFY
    finally:
        stop.touch()
        proc.wait(timeout=20)


async def test_a_root_of_a_killed_process_on_another_machine_is_taken_over_once_it_lapsed(
    tmp_path, work, postgres_url
):
    leases = {"leaseRenewMs": 50, "leaseLapseMs": 2000}
    proc, ready, _log, stop = start_peer(
        tmp_path / "peer-home",
        work,
        "bob",
        tmp_path,
        postgres_url,
        PEER_HOST="machine-b",
        PEER_AGENTS_SETTINGS=json.dumps(leases),
    )
    try:
        await until(ready.exists)
        bob_id = ready.read_text()
        model = FunctionModel(lambda c: "taken over")
        settings = {"store": postgres_url, "pi-agents": leases}
        async with piagents.Runtime(home=tmp_path / "home", model=model, settings=settings) as rt:
            with pytest.raises(SessionInUse, match=f"pid {proc.pid} on machine-b"):
                await rt.open_root(session=bob_id)
            proc.kill()  # kill -9: nothing released; its pid means nothing on this machine
            proc.wait()
            assert rt.store.lease_of(bob_id) is not None  # until its heartbeat lapses

            async def take_over():
                try:
                    return await rt.open_root(session=bob_id)
                except SessionInUse:
                    return None

            bob = await until(take_over, "bob's heartbeat to lapse")
            assert await bob.prompt("are you there") == "taken over"
            [me] = [w for w in rt.store.workers() if w.token == rt.holder.token]
            [gone] = [w for w in rt.store.workers() if w.host == "machine-b"]
            assert me.alive and not gone.alive
    finally:
        stop.touch()
        proc.wait(timeout=20)


async def test_an_input_to_an_offline_root_from_the_sdk_is_served_in_the_senders_runtime(
    home, work, tmp_path
):
    served = []

    def route(call):
        if call.agent_name == "carol":
            served.append([m.text for m in call.messages if m.role == "user"][-1])
            return "carol here"
        return "alice"

    async with piagents.Runtime(home=home, model=FunctionModel(route)) as rt:
        carol = await rt.open_root(cwd=work, name="carol")
        carol_id = carol.id
    proc, ready, _log, stop = start_peer(home, work, "bob", tmp_path)
    try:
        await until(ready.exists)
        async with piagents.Runtime(home=home, model=FunctionModel(route)) as rt:
            alice = await rt.open_root(cwd=work, name="alice")
            res = await alice.call_tool(
                "agent", {"action": "send", "target": carol_id, "message": "wake up"}
            )
            assert not res.is_error, res.text
            await until(lambda: served)
            assert served[0].endswith("wake up\n</agent-message>")
            await until(lambda: carol_id not in rt.agents)
    finally:
        stop.touch()
        proc.wait(timeout=20)


def test_the_command_line_wakes_an_offline_root_in_a_background_process(
    home, work, tmp_path, store_url
):
    # On PostgreSQL (`--store`), the background `pi-agents serve` is given the same store.
    settings = {"store": store_url} if store_url else None
    store_flag = ["--store", store_url] if store_url else []
    log = tmp_path / "carol.log"
    env = {
        **os.environ,
        "PYTHONPATH": f"{HERE}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
        "PEER_LOG": str(log),
    }
    code = (
        "import asyncio, piagents\n"
        "async def main():\n"
        f"    rt = piagents.Runtime(home={str(home)!r}, model='faux/peer_process:scripted',\n"
        f"                          settings={settings!r})\n"
        "    async with rt:\n"
        f"        r = await rt.open_root(cwd={str(work)!r}, name='carol')\n"
        "        print(r.id)\n"
        "asyncio.run(main())\n"
    )
    carol_id = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    sender = tmp_path / "sender.py"
    sender.write_text(
        "from piagents.testing import Reply, ToolCall\n"
        "def route(call):\n"
        "    if len(call.messages) == 1:\n"
        f"        args = {{'action': 'send', 'target': {carol_id!r}, 'message': 'from the cli'}}\n"
        "        return Reply(tool_calls=[ToolCall('agent', args)])\n"
        "    return call.messages[-1].text\n"
    )
    env["PYTHONPATH"] = f"{tmp_path}{os.pathsep}{env['PYTHONPATH']}"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "piagents.cli",
            "--home",
            str(home),
            *store_flag,
            "--model",
            "faux/sender:route",
            "-p",
            "tell carol",
        ],
        env=env,
        cwd=work,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"Input accepted by carol ({carol_id[:8]})."

    async def wait_for_log():
        await until(lambda: log.exists() and "from the cli" in log.read_text(), timeout=30)

    asyncio.run(wait_for_log())
    assert (home / "store.db").exists() == (store_url is None)


async def test_a_crash_loses_no_committed_entry_and_leaves_no_input_unsettled(home, work, tmp_path):
    proc, ready, _log, _stop = start_peer(home, work, "crasher", tmp_path)
    try:
        await until(ready.exists)
    finally:
        proc.kill()  # SIGKILL: no cleanup at all
        proc.wait(timeout=20)
    root_id = ready.read_text()
    async with piagents.Runtime(home=home, model=FunctionModel(lambda c: "after")) as rt:
        root = await rt.open_root(session=root_id)  # the dead process's lease is taken over
        texts = [m.text for m in root.session.context()]
        assert texts[:2] == ["before the crash", "crasher handled it"]
        assert rt.store.inputs(outstanding=True) == []
        res = await root.call_tool("agent", {"action": "wait"})
        assert 'status="aborted"' in res.text or res.text == "The input was aborted."
        listed = await root.call_tool("agent", {"action": "list"})
        assert listed.details["agents"][0]["state"] == "idle"
