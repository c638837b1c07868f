"""What a front end runs on: `RuntimeHost` opens the runtime and the root, says why it
could not, closes them, and puts and answers the trust question."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import piagents
from piagents.agent import Agent
from piagents.ai.registry import ProviderConfigError
from piagents.events import DefinitionsChanged, RuntimeEvent
from piagents.hosting import HostFailure, RuntimeHost
from piagents.supervision.trust import is_trusted, trust
from piagents.testing import FunctionModel
from piagents.trust_question import Notice, TrustQuestion
from support import until


def runtime(home: Path) -> piagents.Runtime:
    return piagents.Runtime(home=home, model=FunctionModel(lambda call: "done"))


def in_dir(work: Path, api: str = "agents"):
    async def open_root(rt: piagents.Runtime) -> Agent:
        return await rt.open_root(cwd=work, agent_api=api)

    return open_root


def stopped_never(failure: HostFailure) -> None:
    raise AssertionError(f"the runtime stopped: {failure}")


def project_with_definitions(work: Path) -> Path:
    folder = work / ".pi-agents" / "agents"
    folder.mkdir(parents=True)
    (folder / "fixer.md").write_text("---\nname: fixer\ndescription: fixes\n---\nFix.\n")
    return work


async def test_start_opens_the_runtime_and_the_root_and_stop_takes_them_offline(home, work):
    host = RuntimeHost(runtime(home), in_dir(work))
    root = await host.start(stopped_never)
    assert isinstance(root, Agent) and root.cwd == str(work.resolve())
    assert await root.prompt("hi") == "done"
    assert host.read_model.agent(root.id) is root
    assert not host.closing
    await host.stop()
    assert host.closing
    assert host.read_model.agent(root.id) is None
    await host.stop()  # twice is harmless
    async with runtime(home) as again:  # its lease was released: another process may open it
        assert (await again.open_root(session=root.id)).id == root.id


async def test_a_session_in_use_is_a_failure_to_show_not_an_exception(home, work):
    async with runtime(home) as holder:
        taken = await holder.open_root(cwd=work)

        async def reopen(rt: piagents.Runtime) -> Agent:
            return await rt.open_root(session=taken.id)

        host = RuntimeHost(runtime(home), reopen)
        failure = await host.start(stopped_never)
        assert isinstance(failure, HostFailure)
        assert failure.title == "Session in use"
        assert "in use by another" in failure.message
        await host.stop()


@pytest.mark.parametrize(
    "error", [ValueError("no such model"), ProviderConfigError("no such model")]
)
async def test_a_root_that_cannot_open_is_a_failure_to_start(home, error):
    async def refuse(rt: piagents.Runtime) -> Agent:
        raise error

    host = RuntimeHost(runtime(home), refuse)
    assert await host.start(stopped_never) == HostFailure(
        "pi-agents could not start", "no such model"
    )
    await host.stop()


async def test_a_runtime_that_cannot_open_is_a_failure_to_start(home, work):
    (home / "store.db").mkdir()  # not a store
    opened: list[str] = []

    async def never(rt: piagents.Runtime) -> Agent:
        opened.append("root")
        raise AssertionError("no root is opened in a runtime that did not open")

    failure = await RuntimeHost(runtime(home), never).start(stopped_never)
    assert isinstance(failure, HostFailure)
    assert failure.title == "pi-agents could not start"
    assert "is a directory, not a pi-agents store" in failure.message
    assert opened == []


async def test_a_runtime_that_stops_by_itself_is_reported_to_the_front_end(home, work):
    failures: list[HostFailure] = []
    host = RuntimeHost(runtime(home), in_dir(work))
    await host.start(failures.append)
    [held] = [t for t in asyncio.all_tasks() if t.get_coro().__name__ == "_hold"]
    held.cancel()  # as if something outside ended it
    await until(lambda: failures, what="the report")
    assert failures == [HostFailure("The runtime stopped", "the runtime stopped")]
    await host.stop()
    assert failures == [HostFailure("The runtime stopped", "the runtime stopped")]


async def test_asked_to_stop_the_runtime_is_not_reported_as_stopped(home, work):
    failures: list[HostFailure] = []
    host = RuntimeHost(runtime(home), in_dir(work))
    await host.start(failures.append)
    await host.stop()
    assert failures == []


async def test_open_root_opens_a_new_root_or_reopens_a_saved_one_and_unload_closes_it(home, work):
    host = RuntimeHost(runtime(home), in_dir(work))
    first = await host.start(stopped_never)
    assert isinstance(first, Agent)
    second = await host.open_root(str(work))
    assert second.id != first.id and second.cwd == first.cwd
    await host.unload(first)
    assert host.read_model.agent(first.id) is None
    again = await host.open_root(str(work), session=first.id)
    assert again.id == first.id
    assert await host.open_root(session=first.id) is again  # loaded already
    await host.stop()


async def test_a_lead_in_a_project_with_untrusted_definitions_is_asked_to_trust_it(home, work):
    project = project_with_definitions(work)
    host = RuntimeHost(runtime(home), in_dir(project, "supervision"))
    lead = await host.start(stopped_never)
    assert isinstance(lead, Agent)
    assert host.trust_question(lead) == TrustQuestion(project.resolve(), ("fixer",))
    await host.stop()


async def test_no_question_for_a_root_of_the_agents_face_nor_in_a_trusted_project(home, work):
    project = project_with_definitions(work)
    host = RuntimeHost(runtime(home), in_dir(project))
    root = await host.start(stopped_never)
    assert isinstance(root, Agent)
    assert host.trust_question(root) is None
    await host.stop()
    trust(home, project)
    host = RuntimeHost(runtime(home), in_dir(project, "supervision"))
    lead = await host.start(stopped_never)
    assert isinstance(lead, Agent)
    assert host.trust_question(lead) is None
    await host.stop()


async def test_the_answer_is_recorded_in_the_hosts_home_and_announced(home, work):
    project = project_with_definitions(work)
    host = RuntimeHost(runtime(home), in_dir(project, "supervision"))
    lead = await host.start(stopped_never)
    assert isinstance(lead, Agent)
    question = host.trust_question(lead)
    assert question is not None
    events: list[RuntimeEvent] = []
    host.read_model.subscribe(events.append)
    assert host.answer_trust(question, False) == Notice(
        f"Project definitions in {question.project} are not used; `pi-agents trust` "
        "trusts the project later."
    )
    assert not is_trusted(home, question.project)
    assert host.answer_trust(question, True) == Notice(
        f"Trusted {question.project}: its agent definitions are used."
    )
    assert is_trusted(home, question.project)
    await until(lambda: any(isinstance(e, DefinitionsChanged) for e in events))
    assert host.trust_question(lead) is None
    await host.stop()
