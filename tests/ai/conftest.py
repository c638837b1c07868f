from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from loopback import LoopbackServer


@pytest.fixture
async def server() -> AsyncIterator[LoopbackServer]:
    loopback = LoopbackServer()
    await loopback.start()
    yield loopback
    await loopback.close()
