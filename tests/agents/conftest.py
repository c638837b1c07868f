import asyncio

import pytest


class Script:
    """Routes model calls by agent name to per-agent handlers; records calls."""

    def __init__(self):
        self.handlers = {}
        self.calls = []

    def on(self, name, handler):
        self.handlers[name] = handler
        return handler

    async def __call__(self, call):
        self.calls.append(call)
        handler = self.handlers.get(call.agent_name) or self.handlers.get("*")
        if handler is None:
            return f"{call.agent_name} done"
        out = handler(call)
        if asyncio.iscoroutine(out):
            out = await out
        return out


@pytest.fixture
def script():
    return Script()


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request):
    """None (the home's SQLite store) or a PostgreSQL database's URL: a scenario that
    takes it runs on both stores."""
    if request.param == "sqlite":
        return None
    return request.getfixturevalue("postgres_url")
