"""Each package's `__init__` names its few public names, and imports them only on
first use: importing a package (or one module of it) imports no other module."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys

import pytest

PACKAGES = (
    "piagents.agents",
    "piagents.ai",
    "piagents.events",
    "piagents.harness",
    "piagents.harness.tools",
    "piagents.programs",
    "piagents.store",
    "piagents.supervision",
    "piagents.tui",
)


@pytest.mark.parametrize("package", PACKAGES)
def test_a_packages_docstring_names_each_public_name_and_each_resolves(package: str) -> None:
    module = importlib.import_module(package)
    doc = module.__doc__ or ""

    assert module.__all__, f"{package} names its public names"
    for name in module.__all__:
        assert re.search(rf"`{re.escape(name)}(\(\))?`", doc), f"{package}: {name} unnamed"
        assert getattr(module, name) is not None
    with pytest.raises(AttributeError):
        module.no_such_name  # noqa: B018


def test_importing_the_packages_imports_none_of_their_modules() -> None:
    code = (
        "import sys\n"
        + "".join(f"import {p}\n" for p in PACKAGES)
        + "print(' '.join(sorted(m for m in sys.modules if m.startswith('piagents'))))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()

    assert sorted(loaded) == sorted(["piagents", *PACKAGES])
