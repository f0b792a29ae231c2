"""The package built from the repo's own project, as the agent loop's tests use it."""

from __future__ import annotations

import importlib
from types import ModuleType, SimpleNamespace

import pytest


@pytest.fixture(scope="module")
def sdk(source_package: ModuleType) -> SimpleNamespace:
    """The package built from the repo's own project: its runtime's declared surface, and the demo and framing
    modules that surface leaves out."""
    name = source_package.__name__
    return SimpleNamespace(
        package=source_package,
        runtime=importlib.import_module(f"{name}._runtime"),
        demo=SimpleNamespace(
            **{
                **vars(importlib.import_module(f"{name}._runtime.demo.sandbox")),
                **vars(importlib.import_module(f"{name}._runtime.demo.handlers")),
            }
        ),
        framing=importlib.import_module(f"{name}._runtime.streams.framing"),
    )
