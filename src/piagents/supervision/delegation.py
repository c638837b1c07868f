"""`delegate` and `continue`: a new generation of a managed agent, from a definition.

Each assignment is one generation, recorded in the store before the call returns.
Placement `inline` runs the managed agent in this runtime, as an owned Agent of the
lead's tree (it shares the tree's slots); placements `process` and `tmux` start a
`pi-agents worker` process of its own (`remote`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from piagents.harness.session import Session
from piagents.harness.tools.base import ToolResult
from piagents.store.records import GenerationRecord, SessionRecord, new_id
from piagents.supervision import error_texts, remote, texts
from piagents.supervision.attachments import ComposedMessage, attachment_details
from piagents.supervision.definitions import AgentDefinition, DefinitionRefused
from piagents.supervision.errors import SupervisionError, invalid_request
from piagents.supervision.host import Supervising
from piagents.supervision.labels import automatic_label
from piagents.supervision.placement import REMOTE
from piagents.supervision.ports import AgentHandle
from piagents.supervision.records import MANAGED, Kind, within_reach
from piagents.supervision.requests import ContinueRequest, DelegateRequest


async def delegate(sup: Supervising, caller: AgentHandle, req: DelegateRequest) -> ToolResult:
    roster, mine = sup.controller(caller, "delegate")
    try:
        definition = roster.resolve(req.definition, mine)
    except DefinitionRefused as exc:
        raise invalid_request("delegate", str(exc), next_action="call list") from exc
    cwd = _cwd(caller, req.cwd)
    label = req.label or automatic_label(definition.name, _labels_in_use(sup, caller))
    _check_label_free(sup, caller, label, "delegate")
    source: list[Any] = []
    if req.fork is not None:
        source_record = _session_of(sup, req.fork, "delegate", "fork")
        if not within_reach(caller.session.record, source_record, lead=mine is None):
            text = texts.fork_out_of_reach(source_record.id, lead=mine is None)
            raise invalid_request("delegate", text, next_action="call list")
        if source_record.meta.get(MANAGED, {}).get("retired"):
            raise invalid_request(
                "delegate",
                error_texts.retired_not_forkable(source_record.id),
                next_action=error_texts.NEXT_DELEGATE_FRESH,
            )
        source = _fork_entries(sup, source_record.id)
    message = sup.compose(caller, req.task, req.files, "delegate")
    model = definition.model or str(caller.model)
    remote.check_model(model, sup.placement, "delegate")
    thinking = definition.thinking or sup.ports.default_thinking
    session = Session.create(
        sup.ports.store(),
        cwd=cwd,
        model=model,
        thinking=thinking,
        name=label,
        owner_id=caller.id,
        root_id=caller.session.record.root_id or caller.id,
        meta={MANAGED: {"definition": definition.name, "label": label}},
    )
    if source:
        session.append(*source)
    return await _start(
        sup,
        caller,
        session,
        definition,
        label,
        message,
        cwd=cwd,
        kind="delegate",
        task=req.task,
        timeout_ms=req.timeout_ms,
    )


async def continue_(sup: Supervising, caller: AgentHandle, req: ContinueRequest) -> ToolResult:
    roster, mine = sup.controller(caller, "continue")
    record = _session_of(sup, req.session, "continue", "session")
    if record.id == caller.id:
        raise invalid_request(
            "continue",
            error_texts.CONTINUE_OWN_SESSION,
            next_action=error_texts.NEXT_FORK_INSTEAD,
        )
    meta = record.meta.get(MANAGED)
    if not isinstance(meta, dict):
        raise invalid_request("continue", error_texts.not_managed_session(record.id))
    if not within_reach(caller.session.record, record, lead=mine is None):
        text = texts.continue_out_of_reach(record.id, lead=mine is None)
        raise invalid_request("continue", text)
    if meta.get("retired"):
        raise invalid_request(
            "continue",
            error_texts.retired_not_continuable(record.id),
            next_action=error_texts.NEXT_DELEGATE_FRESH,
        )
    # Its last generation's result may be read before that agent is offline: let it go.
    await sup.generations.offline(record.id)
    if sup.ports.agents.get(record.id) is not None or sup.ports.store().generations(
        session_id=record.id, live=True
    ):
        raise SupervisionError(
            "agent_busy",
            error_texts.session_busy(record.id),
            "continue",
            next_action=error_texts.NEXT_STEER_OR_CLOSE,
        )
    try:
        definition = roster.resolve(str(meta.get("definition")), mine)
    except DefinitionRefused as exc:
        raise invalid_request("continue", str(exc), next_action="call list") from exc
    label = str(meta.get("label"))
    _check_label_free(sup, caller, label, "continue")
    remote.check_model(definition.model or record.model, sup.placement, "continue")
    message = sup.compose(caller, req.task, req.files, "continue")
    session = Session.load(sup.ports.store(), record.id)
    if definition.model and definition.model != session.record.model:
        session.set_model(definition.model)
    if definition.thinking and definition.thinking != session.record.thinking:
        session.set_thinking(definition.thinking)
    return await _start(
        sup,
        caller,
        session,
        definition,
        label,
        message,
        cwd=record.cwd,
        kind="continue",
        task=req.task,
        timeout_ms=req.timeout_ms,
    )


def _cwd(caller: AgentHandle, given: str | None) -> str:
    if given is None:
        return caller.cwd
    if "\0" in given:
        raise invalid_request("delegate", error_texts.cwd_has_nul(given))
    path = Path(caller.cwd, given).expanduser().resolve()
    if not path.is_dir():
        raise invalid_request("delegate", error_texts.cwd_not_a_directory(given, path))
    return str(path)


def _labels_in_use(sup: Supervising, caller: AgentHandle) -> set[str]:
    root = caller.session.record.root_id or caller.id
    return {g.label for g in sup.ports.store().generations(root_id=root, live=True)}


def _check_label_free(sup: Supervising, caller: AgentHandle, label: str, operation: str) -> None:
    if label in _labels_in_use(sup, caller):
        raise SupervisionError(
            "agent_label_exists",
            error_texts.label_taken(label),
            operation,
            next_action=error_texts.label_taken_next(operation),
        )


def _session_of(sup: Supervising, given: str, operation: str, field_name: str) -> SessionRecord:
    """An exact saved session: its full ID, or its path as `list` shows it."""
    store = sup.ports.store()
    session_id = given
    prefix = f"{store.location}#"
    if given.startswith(prefix):
        session_id = given[len(prefix) :]
    record = store.get_session(session_id)
    if record is None:
        raise SupervisionError(
            "target_not_found",
            error_texts.no_saved_session(given, field_name),
            operation,
            next_action=error_texts.NEXT_COPY_SESSION,
        )
    return record


def _fork_entries(sup: Supervising, session_id: str) -> list[Any]:
    from piagents.harness.context import context_entries

    entries = sup.ports.store().entries(session_id, from_last_compaction=True)
    return [msgspec.structs.replace(e, id=new_id()[:8]) for e in context_entries(entries)]


async def _start(
    sup: Supervising,
    caller: AgentHandle,
    session: Session,
    definition: AgentDefinition,
    label: str,
    message: ComposedMessage,
    *,
    cwd: str,
    kind: Kind,
    task: str,
    timeout_ms: int | None = None,
) -> ToolResult:
    holder = sup.ports.holder()
    assert holder is not None
    owner_gen = sup.generation_of(caller.id)
    where = sup.placement
    gen = GenerationRecord(
        id=new_id(),
        label=label,
        definition=definition.name,
        root_id=caller.session.record.root_id or caller.id,
        owner_id=caller.id,
        session_id=session.id,
        cwd=cwd,
        task=task,
        placement=where,
        kind=kind,
        pid=holder.pid,
        host=holder.host,
        started=holder.started,
        token=holder.token,
        pane=f"inline:{session.id}",
        parent_label=owner_gen.label if owner_gen is not None else None,
    )
    if where in REMOTE:
        # Its worker records its own process; until then, the lead's is the evidence.
        gen = await remote.start(sup, caller, gen, message.text, timeout_ms, kind)
        sup.changed()
        return _started(sup, gen, kind, message)
    sup.ports.store().add_generation(gen)  # durable before anything runs
    try:
        agent = sup.ports.load_managed(session)
        sup.generations.adopt(gen, agent, definition)
        sup.ports.delivery.accept(
            caller, agent, message.text, "followUp", has_result=False, plain=True
        )
    except Exception as exc:
        rolled_back = sup.generations.roll_back(gen)
        raise SupervisionError(
            "internal_failure" if rolled_back else "rollback_failure",
            error_texts.start_failed(exc),
            kind,
            rollback_occurred=rolled_back,
            next_action=error_texts.NEXT_CHECK_DEFINITION,
        ) from exc
    sup.changed()
    return _started(sup, gen, kind, message)


def _started(
    sup: Supervising, gen: GenerationRecord, kind: Kind, message: ComposedMessage
) -> ToolResult:
    text = (texts.delegated if kind == "delegate" else texts.continued)(
        agent=gen.label, definition=gen.definition, session=gen.session_id, request=gen.id
    )
    return ToolResult(
        text,
        {
            "action": kind,
            "agent": gen.label,
            "definition": gen.definition,
            "session": gen.session_id,
            "sessionPath": sup.session_path(gen.session_id),
            "request": gen.id,
            "startup": {
                "placement": gen.placement,
                "pid": gen.pid,
                "host": gen.host,
                "pane": gen.pane,
                "state": gen.state,
                "started": gen.started,
            },
            "attachments": attachment_details(message.attachments),
        },
    )
