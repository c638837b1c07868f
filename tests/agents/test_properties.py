"""Random sequences of spawn/send/wait/abort/close keep the tree's invariants."""

import asyncio
import random
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

import piagents
from piagents.testing import FunctionModel
from support import until

MAX_CONCURRENT, MAX_OUTSTANDING = 2, 4
NAMES = ["a", "b", "c", "d"]


class TreeMachine(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.tmp = tempfile.TemporaryDirectory()
        self.home = Path(self.tmp.name) / "home"
        self.work = Path(self.tmp.name) / "work"
        self.work.mkdir(parents=True)
        self.loop = asyncio.new_event_loop()
        self.rng = random.Random(0)
        self.running = 0
        self.max_running = 0
        self.ended: list[str] = []
        self.read: list[str] = []
        self.spawned: list[str] = []
        self.root_id: str | None = None
        self.rt = None
        self.root = None
        self.run(self._open())

    def run(self, coro):
        return self.loop.run_until_complete(coro)

    async def route(self, call):
        if call.agent_name is None:
            return "root"
        self.running += 1
        self.max_running = max(self.max_running, self.running)
        try:
            # turns of random length (the property covers any interleaving)
            await asyncio.sleep(self.rng.choice([0, 0.001, 0.005]))
        finally:
            self.running -= 1
        return f"answer of {call.agent_name}"

    async def _open(self):
        self.rt = piagents.Runtime(
            home=self.home,
            model=FunctionModel(self.route),
            settings={
                "pi-agents": {"maxConcurrent": MAX_CONCURRENT, "maxOutstanding": MAX_OUTSTANDING}
            },
        )
        await self.rt.__aenter__()
        store = self.rt.store
        end_inputs, mark_read = store.end_inputs, store.mark_read

        def tracking_end(ids, *args, **kwargs):
            ended = end_inputs(ids, *args, **kwargs)
            self.ended.extend(r.id for r in ended)
            return ended

        def tracking_read(ids):
            unread = {r.id for r in store.inputs(read=False)}
            self.read.extend(i for i in ids if i in unread)
            mark_read(ids)

        store.end_inputs, store.mark_read = tracking_end, tracking_read
        if self.root_id is None:
            self.root = await self.rt.open_root(cwd=self.work)
            self.root_id = self.root.id
        else:
            self.root = await self.rt.open_root(session=self.root_id)

    async def _close(self):
        await self.rt.__aexit__(None, None, None)

    async def call(self, args):
        res = await self.root.call_tool("agent", args)
        assert res.text
        return res

    @rule(name=st.sampled_from(NAMES))
    def spawn(self, name):
        res = self.run(self.call({"action": "spawn", "name": name, "message": "work"}))
        if not res.is_error:
            self.spawned.append(name)
        else:
            assert res.text.startswith(("Name ", "Input rejected: ")), res.text

    @precondition(lambda self: self.spawned)
    @rule(data=st.data(), delivery=st.sampled_from(["followUp", "steer", "write"]))
    def send(self, data, delivery):
        name = data.draw(st.sampled_from(self.spawned))
        res = self.run(
            self.call({"action": "send", "target": name, "message": "more", "deliverAs": delivery})
        )
        assert not res.is_error or res.text.startswith("Input rejected: "), res.text

    @precondition(lambda self: self.spawned)
    @rule(data=st.data())
    def abort(self, data):
        name = data.draw(st.sampled_from(self.spawned))
        res = self.run(self.call({"action": "abort", "target": name}))
        assert not res.is_error, res.text

    @rule(targeted=st.booleans(), data=st.data())
    def wait(self, targeted, data):
        args = {"action": "wait", "timeout": 10}
        if targeted and self.spawned:
            args["target"] = data.draw(st.sampled_from(self.spawned))
        res = self.run(self.call(args))
        assert not res.is_error, res.text
        # answers take milliseconds: only a notification (a steer) cuts a wait short
        if "Still pending" in res.text:
            assert res.details["interrupted"] is True

    @rule()
    def close_and_reopen(self):
        self.run(self._close())
        self.run(self._open())

    @invariant()
    def slots_and_limits_hold(self):
        assert self.max_running <= MAX_CONCURRENT
        if self.rt is not None and self.root_id is not None:
            tree = self.rt.coordinator.trees.get(self.root_id)
            if tree is not None:
                assert tree.outstanding <= MAX_OUTSTANDING
            open_owned = [
                r
                for r in self.rt.store.inputs(root_id=self.root_id, outstanding=True)
                if r.kind == "input" and r.recipient_id != self.root_id
            ]
            assert len(open_owned) <= MAX_OUTSTANDING

    def teardown(self):
        try:
            self.run(self._settle())
            self.run(self._close())
            store_path = self.home / "store.db"
            from piagents.store.sqlite import SQLiteStore

            store = SQLiteStore(store_path)
            try:
                open_inputs = store.inputs(outstanding=True)
            finally:
                store.close()
            assert open_inputs == [], "every accepted input ends"
            assert len(self.ended) == len(set(self.ended)), "no input ends twice"
            assert len(self.read) == len(set(self.read)), "no result is read twice"
        finally:
            self.loop.close()
            self.tmp.cleanup()

    async def _settle(self):
        coordinator = self.rt.coordinator
        await until(
            lambda: (
                not coordinator.tree_has_live_work(self.root_id)
                and all(coordinator.state_of(a) == "idle" for a in list(self.rt.agents))
            ),
            what="the tree to go idle",
        )


TreeMachine.TestCase.settings = settings(
    max_examples=25,
    stateful_step_count=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_tree_invariants = TreeMachine.TestCase
