"""The operations of the `agent` tool: what a caller may ask of `spawn`."""

import sys
import uuid
from pathlib import Path

import pytest

import piagents
from piagents.testing import FunctionModel


@pytest.fixture
def planted_module(work: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A module a model could have written into the working directory: importing it
    leaves a mark."""
    name = f"planted_{uuid.uuid4().hex[:8]}"
    mark = work / "imported"
    (work / f"{name}.py").write_text(
        f"open({str(mark)!r}, 'w').close()\ndef route(call):\n    return 'pwned'\n"
    )
    monkeypatch.chdir(work)
    monkeypatch.syspath_prepend(str(work))
    return name


@pytest.mark.parametrize("spec", ["{mod}:route", "sys:exit", "os:system"])
async def test_a_model_cannot_spawn_with_a_faux_route_of_its_choosing(
    home: Path, work: Path, planted_module: str, spec: str
) -> None:
    model = "faux/" + spec.format(mod=planted_module)
    async with piagents.Runtime(home=home, model=FunctionModel(lambda call: "hi")) as rt:
        root = await rt.open_root(cwd=work)
        res = await root.call_tool(
            "agent", {"action": "spawn", "name": "w", "message": "hi", "model": model}
        )
        assert res.is_error
        assert res.text.startswith(f"Invalid agent call: model {model!r}:")
        assert "faux" in res.text and "configured" in res.text
        assert rt.store.list_sessions(owner_id=root.id) == []  # nothing half-made
    assert not (work / "imported").exists()
    assert planted_module not in sys.modules


async def test_an_owned_agent_may_use_the_faux_route_its_caller_was_given(
    home: Path, work: Path, planted_module: str
) -> None:
    model = f"faux/{planted_module}:route"
    async with piagents.Runtime(home=home, model=model) as rt:
        root = await rt.open_root(cwd=work)
        for name, args in (("same", {"model": f"{model}:high"}), ("inherited", {})):
            res = await root.call_tool(
                "agent", {"action": "spawn", "name": name, "message": "hi", **args}
            )
            assert not res.is_error, res.text
        waited = await root.call_tool("agent", {"action": "wait", "target": ["same", "inherited"]})
        assert waited.text.count("pwned") == 2


async def test_a_model_may_spawn_with_the_embedders_function_model(home: Path, work: Path) -> None:
    async with piagents.Runtime(home=home, model=FunctionModel(lambda call: "hi")) as rt:
        root = await rt.open_root(cwd=work)
        res = await root.call_tool(
            "agent", {"action": "spawn", "name": "w", "message": "hi", "model": "faux/function"}
        )
        assert not res.is_error, res.text


async def test_a_model_may_spawn_with_a_configured_provider(home: Path, work: Path) -> None:
    settings = {"providers": {"mine": {"baseUrl": "http://127.0.0.1:9/v1"}}}
    async with piagents.Runtime(
        home=home, model=FunctionModel(lambda call: "hi"), settings=settings
    ) as rt:
        root = await rt.open_root(cwd=work)
        res = await root.call_tool(
            "agent", {"action": "spawn", "name": "w", "message": "hi", "model": "mine/any-model"}
        )
        assert not res.is_error, res.text
        unknown = await root.call_tool(
            "agent", {"action": "spawn", "name": "x", "message": "hi", "model": "nowhere/m"}
        )
        assert unknown.is_error and 'Unknown provider "nowhere"' in unknown.text


async def test_a_cwd_with_a_nul_byte_is_an_invalid_call(home: Path, work: Path) -> None:
    async with piagents.Runtime(home=home, model=FunctionModel(lambda call: "hi")) as rt:
        root = await rt.open_root(cwd=work)
        res = await root.call_tool(
            "agent", {"action": "spawn", "name": "w", "message": "hi", "cwd": "a\0b"}
        )
        assert res.is_error
        assert (
            res.text
            == "Invalid agent call: cwd 'a\\x00b' is not a valid path (it holds a NUL byte)."
        )
        assert rt.store.list_sessions(owner_id=root.id) == []
