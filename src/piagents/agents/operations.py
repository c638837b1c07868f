"""The five operations of the `agent` tool (Pi Agents face) on behalf of a caller.

Each returns the result the model reads; the semantics underneath (delivery,
slots, results, waits) live in the coordinator.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from piagents.agents import texts
from piagents.agents.clock import AsyncioClock, WaitClock
from piagents.agents.coordinator import Coordinator
from piagents.agents.errors import AgentCallError, error
from piagents.agents.listing import (
    ListRow,
    excerpt,
    one_line,
    parse_query,
    render_page,
    unwrap,
)
from piagents.agents.ports import AgentsPorts
from piagents.agents.program_members import program_mark
from piagents.agents.spawn_options import SpawnOptions, spawn_options
from piagents.agents.texts import Shown
from piagents.agents.tree import AgentMarks, Waiter
from piagents.agents.wait_blocks import Block
from piagents.agents.wait_output import ResultItem, UnreadBlocks, block_of, render_wait
from piagents.agents.yielding import slot_given_up
from piagents.ai.registry import ProviderRegistry
from piagents.harness.events import Input
from piagents.harness.loop_records import render
from piagents.harness.tools.base import ToolResult
from piagents.store.base import StoreError
from piagents.store.records import InputRecord, MessageEntry, SearchHit, SessionRecord, new_id

if TYPE_CHECKING:
    from piagents.agent import Agent


class Operations:
    """spawn, send, wait, list and abort, as one caller's tool performs them."""

    def __init__(
        self,
        coordinator: Coordinator,
        ports: AgentsPorts,
        *,
        providers: ProviderRegistry,
        default_model: Callable[[], str | None],
        clock: WaitClock | None = None,
    ) -> None:
        self.c = coordinator
        self.ports = ports
        self.providers = providers
        self.default_model = default_model
        self.clock: WaitClock = clock if clock is not None else AsyncioClock()
        self._unread_blocks: dict[str, UnreadBlocks] = {}  # by reader, while it has some

    @property
    def max_concurrent(self) -> int:
        return self.c.max_concurrent

    @property
    def max_outstanding(self) -> int:
        return self.c.max_outstanding

    async def spawn(self, caller: Agent, args: dict[str, Any]) -> ToolResult:
        me = caller.session.record
        name = args["name"]
        message = args["message"]
        sibling = self._sibling_named(me, name)
        if sibling is not None:
            return error(texts.name_taken(name, self.c.shown(sibling, me).short_id))
        tree = self.c.tree(self.c.root_of(me))
        if tree.outstanding >= self.c.max_outstanding:
            return error(texts.input_rejected(tree.outstanding))
        try:
            options = self.spawn_options(caller, args)
        except AgentCallError as exc:
            return error(str(exc))
        child: Agent | None = None
        try:
            # The child and its first input: one commit, and nothing of it if a part fails.
            with self.ports.store().batch(atomic=True):
                child = self.ports.loader.create_owned(
                    caller,
                    name=name,
                    cwd=options.cwd,
                    model=options.model,
                    thinking=options.thinking,
                    fork=options.fork,
                )
                stored = self.c.record(caller, child, message, "followUp")
                committed = self._commit_first(child, stored)
        except (AgentCallError, StoreError) as exc:
            if child is None:
                raise
            self.c.tree(self.c.root_of(me)).slots.release(child.id)
            await self.ports.loader.discard_owned(child)  # nothing half-made stays behind
            return error(str(exc))
        accepted = self.c.submit_stored(child, stored, committed=committed)
        shown = self.c.shown(child.session.record, me)
        text = texts.spawned(shown, self.c.max_concurrent if accepted.queued else None)
        return ToolResult(text, {"id": child.id, "name": name, "queued": accepted.queued})

    async def send(self, caller: Agent, args: dict[str, Any]) -> ToolResult:
        me = caller.session.record
        delivery = args.get("deliverAs", "followUp")
        target = args["target"]
        message = args["message"]
        if isinstance(target, list) and delivery != "write":
            return error(texts.invalid("`target` may be an array only for deliverAs='write'."))
        targets = target if isinstance(target, list) else [target]
        if not targets:
            return error(texts.invalid("`target` must name at least one Agent."))
        try:
            records = [self.c.address(me, t) for t in targets]
        except AgentCallError as exc:
            return error(str(exc))
        if any(r.id == me.id for r in records):
            return error(texts.message_to_self())
        if delivery == "write":
            for r in records:
                if r.id not in self.ports.agents and self._offline(r):
                    return error(texts.write_to_offline(self.c.shown(r, me)))
            shown = []
            for r in records:
                try:
                    await self.c.delivery.deliver(caller, r, message, "write")
                except AgentCallError as exc:
                    return error(str(exc))
                shown.append(self.c.shown(r, me))
            return ToolResult(texts.write_accepted(shown), {"ids": [r.id for r in records]})
        record = records[0]
        try:
            accepted = await self.c.delivery.deliver(caller, record, message, delivery)
        except AgentCallError as exc:
            return error(str(exc))
        shown1 = self.c.shown(record, me)
        text = texts.input_accepted(shown1, self.c.max_concurrent if accepted.queued else None)
        return ToolResult(text, {"id": record.id, "queued": accepted.queued})

    def _commit_first(self, child: Agent, stored: InputRecord) -> bool:
        """Commit a new Agent's first message to its session with the Agent itself (one
        commit per spawn, not two) when a slot lets it start at once; a queued one
        commits it when it starts, as every input does, so a message aborted while
        queued never enters its conversation."""
        if not self.c.tree(self.c.root_of(child.session.record)).slots.reserve(child.id):
            return False
        child.session.append(MessageEntry(render(Input(stored.text, rendered=stored.rendered))))
        return True

    def spawn_options(self, caller: Agent, args: Mapping[str, Any]) -> SpawnOptions:
        """The options of a new owned Agent of `caller` (`spawn`'s arguments, by their
        names in the tool); raises AgentCallError naming one it may not use."""
        return spawn_options(
            caller,
            cwd=args.get("cwd"),
            model=args.get("model"),
            thinking=args.get("thinkingLevel"),
            context=args.get("context"),
            providers=self.providers,
            default_model=self.default_model,
        )

    def _sibling_named(self, me: SessionRecord, name: str) -> SessionRecord | None:
        """The caller's owned Agent called `name`: one of its own group (its Programs'
        Agents, which it does not see, may share a name with it)."""
        return self.c.directory.named(me.id, self.c.root_of(me), name)

    def _offline(self, record: SessionRecord) -> bool:
        root = self.c.root_of(record)
        if root in self.ports.agents:
            return False
        return self.ports.store().lease_of(root) is None

    def owned_by(self, caller: SessionRecord) -> list[SessionRecord]:
        """The caller's owned Agents, oldest first, not its Programs' (they are the
        Programs' own)."""
        owned = self.c.directory.owned(caller.id, self.c.root_of(caller))
        return [s for s in owned if program_mark(s) is None]

    async def wait(self, caller: Agent, args: dict[str, Any]) -> ToolResult:
        me = caller.session.record
        history = int(args.get("history", 0))
        timeout = float(args.get("timeout", 30))
        tree = self.c.tree(self.c.root_of(me))
        raw = args.get("target")
        selected: list[SessionRecord]
        unread: list[InputRecord] | None = None  # the selected Agents' unread results
        if raw is None:
            owned = self.owned_by(me)
            unread = self._unread([s.id for s in owned])
            with_unread = {r.recipient_id for r in unread}
            selected = [s for s in owned if s.id in with_unread or tree.pending(s.id)]
            if history:
                selected = selected if selected else owned
        else:
            names = raw if isinstance(raw, list) else [raw]
            if not names:
                return error(texts.invalid("`target` must name at least one Agent."))
            selected = []
            try:
                for t in names:
                    rec = self.c.address(me, t)
                    if rec.owner_id != me.id:
                        return error(texts.not_owned(self.c.shown(rec, me)))
                    if rec.id not in (s.id for s in selected):
                        selected.append(rec)
            except AgentCallError as exc:
                return error(str(exc))
        ids = frozenset(s.id for s in selected)
        waiter = Waiter(me.id, ids, unsettled={i for i in ids if tree.pending(i)})
        interrupted = False
        if waiter.unsettled:
            async with slot_given_up(self.c, me, waiter):
                await self.clock.wait_for(waiter.done, timeout)
            interrupted = waiter.interrupted
            unread = None  # more may have ended meanwhile
        return self._collect(caller, selected, history, interrupted, unread)

    def _unread(self, recipient_ids: Sequence[str]) -> list[InputRecord]:
        return self.ports.store().unread_results(recipient_ids)

    def _collect(
        self,
        caller: Agent,
        selected: Sequence[SessionRecord],
        history: int,
        interrupted: bool,
        unread: list[InputRecord] | None,
    ) -> ToolResult:
        """`unread`: the selected Agents' unread results when just read, else None.
        Without `history` only unread results are read: a tree's read results grow
        with every result it was given, and a wait's paging would read them all again."""
        me = caller.session.record
        tree = self.c.tree(self.c.root_of(me))
        ids = [s.id for s in selected]
        by_id = {s.id: s for s in selected}
        ended: list[InputRecord]
        if history:
            ended = self.ports.store().inputs(recipient_ids=ids, has_result=True, outstanding=False)
        else:
            ended = self._unread(ids) if unread is None else unread
        shown = self.c.shown_to(me)  # once: a page of a wait for 1,000 names them all
        items: list[ResultItem] = []
        blocks: list[Block] = []
        if history:
            for agent_id in ids:
                read = [r for r in ended if r.recipient_id == agent_id and r.read]
                for r in read[-history:]:
                    items.append(_item(r, shown(by_id[agent_id]), True))
                    blocks.append(block_of(items[-1]))
        memo = self._unread_blocks.setdefault(me.id, UnreadBlocks()).at(self.c.directory.version)
        for r in ended:
            if not r.read:
                item, block = memo.get(r.id) or memo.put(
                    _item(r, shown(by_id[r.recipient_id]), False)
                )
                items.append(item)
                blocks.append(block)
        pending = [(s.id, shown(s)) for s in selected if tree.pending(s.id)]
        path = self.ports.home / "outputs" / me.id / f"wait-{new_id()}.txt"
        output = render_wait(items, pending, interrupted, blocks=blocks, full_output_path=str(path))
        if output.full_text is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(output.full_text, encoding="utf-8")
        unread_ids = {r.id for r in ended if not r.read}
        newly_read = [i for i in output.returned if i in unread_ids]
        self.ports.store().mark_read(newly_read)
        memo.forget(newly_read)
        if not memo:
            del self._unread_blocks[me.id]
        return ToolResult(output.text, output.details)

    def list_agents(self, caller: Agent, args: dict[str, Any]) -> ToolResult:
        me = caller.session.record
        visible = {s.id: s for s in self.c.visible(me)}
        state_filter = args.get("state")
        limit = int(args.get("limit", 20))
        offset = int(args.get("offset", 0))
        groups = parse_query(args.get("query") or "")
        store = self.ports.store()
        root_id = self.c.root_of(me)
        hits: dict[str, SearchHit] = {}
        if groups:
            hits = {h.session_id: h for h in store.search(root_id, me.is_root, groups)}
            order = {sid: h.timestamp for sid, h in hits.items() if sid in visible}
        else:
            times = store.request_times(root_id, me.is_root)
            order = {sid: times.get(sid, s.created) for sid, s in visible.items()}
        ranked = sorted(order, key=lambda sid: (order[sid], sid), reverse=True)
        states: dict[str, str] = {}
        if state_filter:
            states = self._states([visible[sid] for sid in ranked])
            ranked = [sid for sid in ranked if states[sid] == state_filter]
        page_ids = ranked[offset : offset + limit]
        page = [visible[sid] for sid in page_ids]
        if not state_filter:
            states = self._states(page)
        requests = store.latest_requests(page_ids)
        shorts = self.c.short_map(me)
        rows: list[ListRow] = []
        for s in page:
            hit = hits.get(s.id)
            request = requests.get(s.id)
            shown_req: tuple[int, str] | None = None
            if hit is not None and hit.text is not None:
                shown_req = (hit.timestamp, excerpt(hit.text, groups))
            elif request is not None:
                shown_req = (request[0], one_line(unwrap(request[1])))
            shown = Shown(s.name, shorts.get(s.id, s.id[:8]))
            rows.append(
                ListRow(s.id, shown, s.owner_id, states.get(s.id, "idle"), s.cwd, shown_req)
            )
        text, details = render_page(rows, len(ranked), offset)
        return ToolResult(text, details)

    def _states(self, records: Sequence[SessionRecord]) -> dict[str, str]:
        out: dict[str, str] = {}
        remote = []
        for s in records:
            if s.id in self.ports.agents or not s.is_root or self.c.root_of(s) in self.ports.agents:
                out[s.id] = self.c.state_of(s.id)
            else:
                remote.append(s.id)
        for sid, state in self.ports.store().states(remote).items():
            out[sid] = "idle" if state == "offline" else state
        for sid in remote:
            out.setdefault(sid, "idle")
        return out

    async def abort(self, caller: Agent, args: dict[str, Any]) -> ToolResult:
        me = caller.session.record
        try:
            record = self.c.address(me, args["target"])
        except AgentCallError as exc:
            return error(str(exc))
        shown = self.c.shown(record, me)
        if record.owner_id != me.id:
            return error(texts.not_owned(shown))
        agent = self.ports.agents.get(record.id)
        if agent is None:
            return ToolResult(texts.nothing_to_abort(shown), {"id": record.id, "aborted": False})
        marks = self.c.marks.setdefault(agent.id, AgentMarks())
        marks.aborting_by_owner = True
        try:
            result = await agent.loop.abort(self.c.abort_timeout)
        finally:
            marks.aborting_by_owner = False
        if not result.had_work:
            return ToolResult(texts.nothing_to_abort(shown), {"id": record.id, "aborted": False})
        marks.stopped = True
        if not result.stopped:
            return ToolResult(texts.did_not_stop(shown), {"id": record.id, "aborted": True}, True)
        return ToolResult(texts.aborted(shown), {"id": record.id, "aborted": True})


def fork_entries(caller: Agent) -> list[MessageEntry]:
    """A snapshot of the caller's conversation as the child's first entries."""
    return [MessageEntry(m) for m in caller.session.context()]


def _item(r: InputRecord, shown: Shown, history: bool) -> ResultItem:
    return ResultItem(r.id, r.recipient_id, shown, r.status, r.result or "", history)
