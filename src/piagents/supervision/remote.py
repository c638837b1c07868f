"""The lead's side of generations placed in worker processes (`process`, `tmux`).

Everything crosses through the store first: the assignment, steering messages and
control messages (`interrupt`, `reply`, `close`) wait in the managed session's
inbox, then the worker is poked through its lease token. A worker records its
pid, host, start time and token in the generation; that is the startup evidence,
and what recovery uses to prove a worker alive or gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any, Final

import msgspec

from piagents.ai.messages import now_ms
from piagents.ai.models import loadable_elsewhere
from piagents.store.records import (
    GenerationRecord,
    InputDelivery,
    InputKind,
    InputRecord,
    SessionRecord,
    new_id,
)
from piagents.supervision import error_texts, placement, texts
from piagents.supervision.errors import SupervisionError, invalid_request
from piagents.supervision.ports import AgentHandle, HasPorts
from piagents.supervision.records import Observed, recorded_state

CONTROL: Final = "control"  # InputRecord kind of a control message; its text is JSON
DEFAULT_START_TIMEOUT_MS = 30_000
_POLL_S = 0.05


def is_remote(g: GenerationRecord) -> bool:
    return g.placement in placement.REMOTE


def check_model(model: str, where: str, operation: str) -> None:
    if where in placement.REMOTE and not loadable_elsewhere(model):
        raise invalid_request(
            operation,
            error_texts.model_not_loadable(model, where),
            next_action=error_texts.NEXT_LOADABLE_MODEL,
        )


def control_text(op: str, generation_id: str, **fields: Any) -> str:
    return json.dumps({"op": op, "generation": generation_id, **fields})


def read_control(stored: InputRecord) -> dict[str, Any]:
    try:
        data = json.loads(stored.text)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def leave(
    sup: HasPorts,
    sender: SessionRecord,
    g: GenerationRecord,
    text: str,
    *,
    kind: InputKind = "input",
    delivery: InputDelivery = "followUp",
    delivered: bool = False,
) -> InputRecord:
    """A message for the managed session, kept in the store for its worker."""
    # As inline: a controller's messages reach its managed agent as they are (`plain`).
    return sup.ports.delivery.commit(
        InputRecord(
            id=new_id(),
            root_id=g.root_id,
            recipient_id=g.session_id,
            sender_id=sender.id,
            kind=kind,
            delivery=delivery,
            text=text,
            has_result=False,
            status="completed" if kind == CONTROL else "outstanding",
            delivered=delivered,
            rendered=text,
        )
    )


def nudge(sup: HasPorts, g: GenerationRecord) -> None:
    """Poke the worker running `g` (it also looks on its own every second)."""
    sup.ports.delivery.nudge(g.token)


# ---- start -----------------------------------------------------------------------------


async def start(
    sup: HasPorts,
    caller: AgentHandle,
    g: GenerationRecord,
    assignment: str,
    timeout_ms: int | None,
    operation: str,
) -> GenerationRecord:
    """Record `g` and its assignment, start its worker, and wait for the worker's own
    record of itself; on failure the worker is killed and `g` ends `failed`."""
    store = sup.ports.store()
    if g.placement == placement.POOL and not any(
        w.kind == "worker" and w.alive for w in store.workers()
    ):
        raise SupervisionError(
            "internal_failure",
            error_texts.worker_start_failed(g.placement, error_texts.NO_POOL_WORKERS),
            operation,
        )
    store.add_generation(g)  # durable first: a restarted lead finds it
    _drop_stale(sup, g.session_id)
    leave(sup, caller.session.record, g, assignment)
    spawned: placement.Spawned | None = None
    try:
        # Until the worker records itself (only it writes the generation meanwhile), the
        # lead's own process is its evidence: a lead killed now leaves it `lost`, and a
        # worker starting after that finds it no longer `starting` and exits.
        if g.placement == placement.POOL:
            placement.offer(store, g.id, sup.ports.worker_options())
        else:
            spawned = await placement.spawn(
                sup.ports.home, g.id, g.placement, sup.ports.worker_options()
            )
        timeout = (timeout_ms or DEFAULT_START_TIMEOUT_MS) / 1000
        return await _wait_started(sup, g, spawned, timeout)
    except (placement.PlacementError, OSError, TimeoutError, _WorkerExited) as exc:
        rolled_back = _roll_back(sup, g, spawned)
        raise SupervisionError(
            "internal_failure" if rolled_back else "rollback_failure",
            error_texts.worker_start_failed(g.placement, _reason(exc)),
            operation,
            rollback_occurred=rolled_back,
            next_action=error_texts.check_worker_log(
                placement.run_dir(sup.ports.home, g.id) / placement.LOG_FILE
            ),
        ) from exc


class _WorkerExited(Exception):
    pass


def _reason(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return error_texts.WORKER_TOO_SLOW
    return str(exc) or type(exc).__name__


async def _wait_started(
    sup: HasPorts, recorded: GenerationRecord, spawned: placement.Spawned | None, timeout: float
) -> GenerationRecord:
    # The worker pokes this runtime once it has recorded itself (a drain here, which
    # tells the coordinator's listeners); the poll is for a poke lost, or a worker that
    # exits without one.
    poked = asyncio.Event()
    listeners = sup.ports.coordinator.listeners
    listeners.append(poked.set)
    try:
        async with asyncio.timeout(timeout):
            while True:
                poked.clear()
                g = sup.ports.store().get_generation(recorded.id)
                if g is not None and g.token and g.token != recorded.token:
                    return g  # the worker's own record of itself
                if g is not None and g.outcome is not None:
                    raise _WorkerExited(error_texts.worker_could_not_run(g.error or g.outcome))
                if spawned is not None and spawned.exited():
                    raise _WorkerExited(error_texts.WORKER_EXITED_EARLY)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(_POLL_S):
                        await poked.wait()
    finally:
        with contextlib.suppress(ValueError):
            listeners.remove(poked.set)


def _roll_back(sup: HasPorts, g: GenerationRecord, spawned: placement.Spawned | None) -> bool:
    try:
        current = sup.ports.store().get_generation(g.id) or g
        if spawned is not None:
            placement.kill_group(spawned.pid)
            holder = placement.holder_of(spawned.pid)
            current = msgspec.structs.replace(
                current, pid=spawned.pid, host=holder.host, started=spawned.started, token=None
            )
        failed = msgspec.structs.replace(
            current,
            state="ended",
            outcome="failed",
            error=texts.START_FAILED,
            updated=now_ms(),
            ended=now_ms(),
        )
        sup.ports.store().update_generation(failed, end=True)
        _drop_stale(sup, g.session_id)  # the assignment nobody will take
        return True
    except Exception:
        return False


def _drop_stale(sup: HasPorts, session_id: str) -> None:
    """Messages left for an earlier worker of this session that never took them."""
    waiting = sup.ports.store().take_undelivered([session_id])
    sup.ports.store().end_inputs([i.id for i in waiting if i.kind != CONTROL], "aborted", None)


# ---- controls --------------------------------------------------------------------------


def steer(sup: HasPorts, caller: AgentHandle, g: GenerationRecord, text: str) -> None:
    leave(sup, caller.session.record, g, text, delivery="steer")
    nudge(sup, g)


def interrupt(sup: HasPorts, caller: AgentHandle, g: GenerationRecord, text: str) -> None:
    # The replacement message is recorded now and taken by the worker after it aborts.
    replacement = leave(sup, caller.session.record, g, text, delivered=True)
    control = control_text("interrupt", g.id, input=replacement.id)
    leave(sup, caller.session.record, g, control, kind=CONTROL, delivery=CONTROL)
    nudge(sup, g)


def reply(sup: HasPorts, caller: AgentHandle, g: GenerationRecord, ask: str, text: str) -> None:
    control = control_text("reply", g.id, ask=ask, text=text)
    leave(sup, caller.session.record, g, control, kind=CONTROL, delivery=CONTROL)
    nudge(sup, g)


async def close(sup: HasPorts, g: GenerationRecord, cascaded: list[str]) -> bool:
    """Ask the worker to close (it closes its own agents first), give it the abort
    timeout, then kill its process group; `g` and its agents end `closed`. True when
    a question was abandoned."""
    _descendants(sup, g, cascaded)
    abandoned = g.ask_id is not None and g.state == "blocked"
    timeout = sup.ports.settings().agents.abort_timeout_ms / 1000
    owner = sup.ports.store().get_session(g.owner_id)
    if g.state not in ("lost", "unknown") and g.pid is not None and owner is not None:
        control = control_text("close", g.id)
        leave(sup, owner, g, control, kind=CONTROL, delivery=CONTROL)
        if g.token:
            await sup.ports.delivery.poke(g.token)
        store = sup.ports.store()
        if not await placement.wait_gone(store, g, timeout) and placement.on_this_machine(g):
            placement.kill_group(g.pid)  # another machine's cannot be signalled from here
            await placement.wait_gone(store, g, 2.0)
    end_closed(sup, g)
    return abandoned


def _descendants(sup: HasPorts, g: GenerationRecord, labels: list[str]) -> None:
    for child in sup.ports.store().generations(owner_id=g.session_id, live=True):
        _descendants(sup, child, labels)
        labels.append(child.label)


def end_closed(sup: HasPorts, g: GenerationRecord) -> None:
    """`g` and whatever of its own agents is still recorded live end `closed`."""
    store = sup.ports.store()
    for child in store.generations(owner_id=g.session_id, live=True):
        end_closed(sup, child)
    current = store.get_generation(g.id) or g
    if current.outcome is None:
        closed = msgspec.structs.replace(
            current, state="ended", outcome="closed", updated=now_ms(), ended=now_ms()
        )
        store.update_generation(closed, end=True)


def inspect(sup: HasPorts, g: GenerationRecord) -> tuple[str, bool, list[tuple[int, str]]]:
    """The worker's live evidence: for tmux its pane as the user sees it, otherwise what
    the worker last wrote (its output tail and foreground processes)."""
    evidence, _ = placement.read_evidence(sup.ports.store(), g.id)
    processes = [
        (int(p[0]), str(p[1]))
        for p in evidence.get("processes") or []
        if isinstance(p, list) and len(p) == 2
    ]
    if g.placement == "tmux" and g.pane and g.pane.startswith("%"):
        captured = placement.capture_pane(g.pane)
        if captured is not None:
            return captured[0], captured[1], processes
    output = str(evidence.get("recent_output") or "")
    return output, bool(evidence.get("recent_output_truncated")), processes


def observe(sup: HasPorts, g: GenerationRecord, has_transcript: bool) -> Observed:
    """What the lead knows of a worker's generation: its recorded state, and its last
    activity and context use from the evidence the worker last wrote."""
    evidence, written = placement.read_evidence(sup.ports.store(), g.id)
    tokens = evidence.get("tokens")
    return Observed(
        recorded_state(g),
        pending_ask=g.state == "blocked" and g.ask_id is not None,
        has_transcript=has_transcript,
        last_activity=max(g.updated, written or 0),
        tokens=tokens if isinstance(tokens, int) else None,
    )
