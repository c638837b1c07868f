from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest
from loopback import LoopbackServer


@pytest.fixture
async def server() -> AsyncIterator[LoopbackServer]:
    loopback = LoopbackServer()
    await loopback.start()
    yield loopback
    await loopback.close()


@pytest.fixture
async def provider(server: LoopbackServer, case: Any) -> AsyncIterator[Any]:
    """The adapter under test (its module's `case` fixture says which), on the loopback server."""
    p = case.connect(server.url)
    yield p
    await p.aclose()


@pytest.fixture
def unused_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port
