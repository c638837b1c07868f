"""A loopback HTTP/1.1 server that plays scripted answers to the real SDK clients.

Each test queues responses: an SSE stream (which may drop the connection part way or
stay open until the client leaves) or an HTTP error with a JSON body. The server
records every request it receives and notices when a client hangs up mid-stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from piagents.ai.events import StreamEvent


def sse(data: dict[str, Any] | str, event: str | None = None) -> str:
    """One Server-Sent Event frame."""
    payload = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n"


@dataclass(frozen=True, slots=True)
class Stream:
    """A 200 text/event-stream answer made of SSE frames (see `sse`)."""

    frames: Sequence[str]
    drop_after: int | None = None  # close the socket after this many frames
    hold_open: bool = False  # after the frames, keep the stream open until the client leaves
    delay_s: float = 0.0  # pause before each frame


@dataclass(frozen=True, slots=True)
class Failure:
    """An HTTP error answer with a JSON body."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)  # e.g. retry-after


@dataclass(frozen=True, slots=True)
class Raw:
    """Any complete answer: a status, a content type and a body sent as they are."""

    status: int
    content_type: str
    body: str


Scripted = Stream | Failure | Raw
# Looks at a request body as a real server would: an answer of its own (a Failure refuses
# the request), or None to give the scripted one.
Check = Callable[[Any], "Scripted | None"]


@dataclass(slots=True)
class Received:
    method: str
    path: str
    headers: dict[str, str]  # names lowercased
    body: Any
    client_left_early: bool = False  # the client closed the socket before the stream ended


@dataclass(slots=True)
class LoopbackServer:
    requests: list[Received] = field(default_factory=list)
    client_left: asyncio.Event = field(default_factory=asyncio.Event)
    _script: deque[Scripted] = field(default_factory=deque)
    check: Check | None = None
    # Answers given to every request for a path (GET /v1/models), outside the script.
    routes: dict[str, Scripted] = field(default_factory=dict)
    _server: asyncio.Server | None = None
    _handlers: set[asyncio.Task[None]] = field(default_factory=set)

    def reply(self, *responses: Scripted) -> None:
        self._script.extend(responses)

    @property
    def url(self) -> str:
        assert self._server is not None
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in self._handlers:
            task.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            while await self._exchange(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the client went away between requests
        except asyncio.CancelledError:
            pass  # the server is closing; asyncio logs handlers that end cancelled
        finally:
            self._handlers.discard(task)
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def _exchange(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Answer one request; False when the connection is done."""
        head = await reader.readuntil(b"\r\n\r\n")
        request_line, *lines = head.decode("latin-1").rstrip("\r\n").split("\r\n")
        method, path = request_line.split(" ")[:2]
        headers = {}
        for line in lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        size = int(headers.get("content-length", "0"))
        raw = await reader.readexactly(size) if size else b""
        received = Received(method, path, headers, json.loads(raw) if raw else None)
        self.requests.append(received)
        own = self.check(received.body) if self.check is not None and method == "POST" else None
        if path in self.routes:
            answer: Scripted = self.routes[path]
        elif method == "GET":  # a server that has no such endpoint (GET /v1/models, ...)
            answer = Failure(404, {"error": {"message": f"File Not Found: {path}"}})
        elif own is not None:
            answer = own
        elif not self._script:
            answer = Failure(500, {"error": {"message": "loopback: nothing scripted"}})
        else:
            answer = self._script.popleft()
        if isinstance(answer, Failure):
            extra = {"content-type": "application/json", **answer.headers}
            await _send_whole(writer, answer.status, extra, json.dumps(answer.body))
            return True
        if isinstance(answer, Raw):
            await _send_whole(
                writer, answer.status, {"content-type": answer.content_type}, answer.body
            )
            return True
        return await self._send_stream(reader, writer, answer, received)

    async def _send_stream(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        stream: Stream,
        received: Received,
    ) -> bool:
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"cache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n"
        )
        try:
            for sent, frame in enumerate(stream.frames):
                if sent == stream.drop_after:
                    return False  # no terminating chunk: the body breaks off
                if stream.delay_s:
                    await asyncio.sleep(stream.delay_s)  # a slow server, on purpose
                data = frame.encode()
                writer.write(b"%x\r\n%s\r\n" % (len(data), data))
                await writer.drain()
            if stream.drop_after is not None:
                return False
            if stream.hold_open:
                await reader.read()  # returns b"" when the client closes its socket
                self._left(received)
                return False
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            return True
        except ConnectionError:
            self._left(received)
            return False

    def _left(self, received: Received) -> None:
        received.client_left_early = True
        self.client_left.set()


async def _send_whole(
    writer: asyncio.StreamWriter, status: int, headers: dict[str, str], text: str
) -> None:
    body = text.encode()
    head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    writer.write(
        b"HTTP/1.1 %d %s\r\n%scontent-length: %d\r\n\r\n%s"
        % (status, b"OK" if status < 400 else b"Error", head.encode(), len(body), body)
    )
    await writer.drain()


async def collect(events: AsyncIterator[StreamEvent]) -> list[StreamEvent]:
    return [event async for event in events]


async def cancel_after_first_event(events: AsyncIterator[StreamEvent]) -> None:
    """Consume `events` in a task and cancel that task once the first event has arrived."""
    started = asyncio.Event()

    async def consume() -> None:
        async for _ in events:
            started.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert task.cancelled()
