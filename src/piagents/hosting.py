"""What a front end runs on: a runtime held open for as long as it runs (opened in a
task of its own, closed once, and the reason when it could not open or stopped on its
own), and the root it shows, opened and closed for it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from piagents.agent import Agent
from piagents.ai.registry import ProviderConfigError
from piagents.read_model import ReadModel
from piagents.runtime import Runtime
from piagents.store.base import SessionInUse, StoreError
from piagents.trust_question import Notice, TrustQuestion, answer, trust_question


class HeldRuntime:
    """`async with runtime` in a task: `open()` waits until it is open (or failed);
    `close()` takes its Agents offline and closes the store; `on_stopped` is called
    when it ends without being asked to."""

    def __init__(self, runtime: Runtime, on_stopped: Callable[[], None]) -> None:
        self.runtime = runtime
        self._on_stopped = on_stopped
        self._task: asyncio.Task[None] | None = None
        self._open = asyncio.Event()
        self._stop = asyncio.Event()

    @property
    def closing(self) -> bool:
        return self._stop.is_set()

    async def open(self) -> bool:
        """True once the runtime is open; False when it failed to (see `error()`)."""
        self._task = asyncio.create_task(self._hold())
        self._task.add_done_callback(self._ended)
        opened = asyncio.create_task(self._open.wait())
        await asyncio.wait({self._task, opened}, return_when=asyncio.FIRST_COMPLETED)
        opened.cancel()
        return self._open.is_set()

    async def _hold(self) -> None:
        async with self.runtime:
            self._open.set()
            await self._stop.wait()

    def _ended(self, task: asyncio.Task[None]) -> None:
        if self._open.is_set() and not self._stop.is_set():
            self._on_stopped()

    def error(self) -> str:
        """Why the runtime did not open, or stopped."""
        task = self._task
        if task is not None and task.done() and not task.cancelled() and task.exception():
            return str(task.exception())
        return "the runtime stopped"

    async def close(self) -> None:
        """Take every Agent offline and close the store; safe to call twice."""
        self._stop.set()
        if self._task is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await self._task


RootOpener = Callable[[Runtime], Awaitable[Agent]]


def open_in_cwd(runtime: Runtime) -> Awaitable[Agent]:
    """A new root in the current directory (the UI's default)."""
    return runtime.open_root(Path.cwd())


@dataclass(frozen=True, slots=True)
class HostFailure:
    """Why a front end cannot start or go on, as its error screen says it."""

    title: str
    message: str


class RuntimeHost:
    """What a front end runs on: a runtime (not yet entered) and the root `open_root`
    opens in it. `start()` opens both, or says why it could not; `stop()` takes every
    Agent offline and closes the store. The front end shows the root and reads it
    through `read_model`; it never opens or closes the runtime itself."""

    def __init__(self, runtime: Runtime, open_root: RootOpener = open_in_cwd) -> None:
        self.runtime = runtime
        self._open_root = open_root
        self._held = HeldRuntime(runtime, self._stopped)
        self._on_stopped: Callable[[HostFailure], None] | None = None

    @property
    def read_model(self) -> ReadModel:
        return self.runtime.read_model

    @property
    def closing(self) -> bool:
        """True once `stop()` was called: nothing is read any more."""
        return self._held.closing

    async def start(self, on_stopped: Callable[[HostFailure], None]) -> Agent | HostFailure:
        """Open the runtime, then the root; `on_stopped` is told if the runtime later
        ends without being asked to."""
        self._on_stopped = on_stopped
        if not await self._held.open():
            return HostFailure("pi-agents could not start", self._held.error())
        try:
            return await self._open_root(self.runtime)
        except SessionInUse as exc:
            return HostFailure("Session in use", str(exc))
        except (StoreError, ProviderConfigError, ValueError) as exc:
            return HostFailure("pi-agents could not start", str(exc))

    def _stopped(self) -> None:
        if self._on_stopped is not None:
            self._on_stopped(HostFailure("The runtime stopped", self._held.error()))

    async def stop(self) -> None:
        """Take every Agent offline and close the store; safe to call twice."""
        await self._held.close()

    async def open_root(self, cwd: str | None = None, *, session: str | None = None) -> Agent:
        """Another root: a new one in `cwd`, or the saved session `session` (the user
        asked for a new session or to resume one). Raises StoreError,
        ProviderConfigError or ValueError."""
        if session is not None:
            return await self.runtime.open_root(session=session)
        return await self.runtime.open_root(cwd)

    async def unload(self, root: Agent) -> None:
        """Take a root the front end no longer shows offline, with its owned Agents."""
        await self.runtime.unload(root)

    def trust_question(self, root: Agent) -> TrustQuestion | None:
        """What to ask when `root` is a lead in a project whose own definitions are not
        trusted yet; None when there is nothing to ask."""
        model = self.read_model
        if model.face(root) != "supervision":
            return None
        return trust_question(self.runtime.home, model.project_of(root.cwd))

    def answer_trust(self, question: TrustQuestion, trusted: bool | None) -> Notice:
        """Record the user's answer (None: dismissed); what to tell them."""
        return answer(self.runtime.home, question, trusted, self.runtime.event_hub)
