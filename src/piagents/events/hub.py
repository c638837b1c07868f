"""One runtime's event stream: callbacks and bounded async subscriptions.

Events are published right after the store commits what they announce, in
commit order, on the event loop's thread. A callback is called at once, in
the publisher's call: it must be quick and must not block (an error it raises is
logged and ends nothing else). An async subscription buffers up to `maxsize`
events; when its reader falls that far behind, newer events are dropped (never the
publisher slowed) and the reader gets one `EventsLost(count)` in their place, after
which it should read the read model again to catch up.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncIterator, Callable
from types import TracebackType

from piagents.events.records import AgentLoopEvent, EventsLost, RuntimeEvent
from piagents.harness.events import LoopEvent

log = logging.getLogger("piagents")

Listener = Callable[[RuntimeEvent], None]
DEFAULT_MAXSIZE = 10_000


class Subscription:
    """An async iterator of events; `close()` (or leaving `async with`) ends it."""

    def __init__(self, hub: EventHub, maxsize: int) -> None:
        if maxsize < 1:
            raise ValueError("maxsize must be at least 1")
        self._hub = hub
        self.maxsize = maxsize
        self._queue: deque[RuntimeEvent] = deque()
        self._lost = 0
        self._ready = asyncio.Event()
        self.closed = False

    def put(self, event: RuntimeEvent) -> None:
        if self.closed:
            return
        if len(self._queue) >= self.maxsize:
            self._lost += 1
            return
        if self._lost:
            self._queue.append(EventsLost(self._lost))
            self._lost = 0
        self._queue.append(event)
        self._ready.set()

    def close(self) -> None:
        self.closed = True
        self._hub.remove(self)
        self._ready.set()

    def __aiter__(self) -> AsyncIterator[RuntimeEvent]:
        return self

    async def __anext__(self) -> RuntimeEvent:
        while True:
            if self._queue:
                return self._queue.popleft()
            if self._lost:
                lost, self._lost = self._lost, 0
                return EventsLost(lost)
            if self.closed:
                raise StopAsyncIteration
            self._ready.clear()
            await self._ready.wait()

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()


class EventHub:
    """Where the runtime publishes its events and front ends subscribe to them."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self._loop_event_listeners = 0  # listeners that hear `AgentLoopEvent`s
        self._subscriptions: list[Subscription] = []
        self._followers: dict[str, list[Callable[[LoopEvent], None]]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None  # where events are delivered
        self._held: list[RuntimeEvent] | None = None  # published inside `held()`

    def subscribe(
        self, listener: Listener, kinds: tuple[type[RuntimeEvent], ...] | None = None
    ) -> Callable[[], None]:
        """Call `listener` with every event from now on, or only with those of `kinds`;
        returns what unsubscribes it. A listener that does not ask for `AgentLoopEvent`
        costs nothing per streamed delta (nobody else listening, none is built)."""
        hears_loop = kinds is None or any(issubclass(AgentLoopEvent, k) for k in kinds)

        def deliver(event: RuntimeEvent) -> None:
            if isinstance(event, kinds):  # type: ignore[arg-type]
                listener(event)

        call = listener if kinds is None else deliver
        self._listeners.append(call)
        self._loop_event_listeners += hears_loop

        def unsubscribe() -> None:
            if call in self._listeners:
                self._listeners.remove(call)
                self._loop_event_listeners -= hears_loop

        return unsubscribe

    def events(self, maxsize: int = DEFAULT_MAXSIZE) -> Subscription:
        """Every event from now on, as an async iterator buffering up to `maxsize`."""
        subscription = Subscription(self, maxsize)
        self._subscriptions.append(subscription)
        return subscription

    def remove(self, subscription: Subscription) -> None:
        if subscription in self._subscriptions:
            self._subscriptions.remove(subscription)

    def publish(self, event: RuntimeEvent) -> None:
        """Deliver `event` now; from another thread (a store call run off the event
        loop), it is handed to the loop's thread and delivered there."""
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = self._loop
            if loop is not None and not loop.is_closed():
                loop.call_soon_threadsafe(self._deliver, event)
                return
        if self._held is not None:
            self._held.append(event)
            return
        self._deliver(event)

    def held(self) -> _Held:
        """Events published inside are delivered when it ends, in order, or dropped when
        it raises: around a store batch, which commits (or undoes) them all at once."""
        return _Held(self)

    def _deliver(self, event: RuntimeEvent) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:
                log.exception("An event listener failed")
        for subscription in list(self._subscriptions):
            subscription.put(event)

    def follow(self, agent_id: str, listener: Callable[[LoopEvent], None]) -> Callable[[], None]:
        """Call `listener` with the loop events of one Agent only (what a transcript
        shows), without hearing every other Agent's; returns what stops it."""
        self._followers.setdefault(agent_id, []).append(listener)

        def stop() -> None:
            followers = self._followers.get(agent_id, [])
            if listener in followers:
                followers.remove(listener)
            if not followers:
                self._followers.pop(agent_id, None)

        return stop

    def loop_listener(self, agent_id: str) -> Callable[[LoopEvent], None]:
        """What an Agent's loop calls: its events go out as `AgentLoopEvent`s, and to
        those following that Agent."""

        def forward(event: LoopEvent) -> None:
            if self._loop_event_listeners or self._subscriptions:
                self.publish(AgentLoopEvent(agent_id, event))
            for listener in list(self._followers.get(agent_id, ())):
                try:
                    listener(event)
                except Exception:
                    log.exception("An event listener failed")

        return forward

    def close(self) -> None:
        """The runtime closed: async subscriptions end once their reader has drained them."""
        for subscription in list(self._subscriptions):
            subscription.close()


class _Held:
    """`EventHub.held()` (a class, not a generator's context manager: a spawn holds once)."""

    __slots__ = ("_events", "_hub")

    def __init__(self, hub: EventHub) -> None:
        self._hub = hub
        self._events: list[RuntimeEvent] | None = None

    def __enter__(self) -> None:
        if self._hub._held is None:  # else inside another: that one delivers them
            self._events = self._hub._held = []

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        events = self._events
        if events is None:
            return
        self._hub._held = None
        if exc is None:
            for event in events:
                self._hub._deliver(event)
