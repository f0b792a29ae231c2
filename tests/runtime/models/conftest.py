"""A fixture importing a generated package for one test: on sys.path meanwhile, its `models_t_` modules gone after."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator
from types import ModuleType

import pytest
from support.projects import Project


@pytest.fixture
def load_package() -> Iterator[Callable[[Project], ModuleType]]:
    added: list[str] = []

    def load(project: Project) -> ModuleType:
        sys.path.insert(0, str(project.root / "generated"))
        added.append(str(project.root / "generated"))
        return importlib.import_module(project.package)

    yield load
    for path in added:
        sys.path.remove(path)
    for name in [m for m in sys.modules if m.startswith("models_t_")]:
        del sys.modules[name]
