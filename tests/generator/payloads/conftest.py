"""The project `toolgen validate` places problems in: built once per module, its package the only `sdk` meanwhile."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.projects import Project


@pytest.fixture(scope="module")
def built(built_root: Path) -> Iterator[Project]:
    """The test module's one built project: every test writes its own files in it.

    Its package has the name `sdk` to itself while the module runs, as in a `toolgen validate` process: with an
    `sdk` other tests of this worker imported from their own projects set aside, load_sdk would import the
    package anew on every run (the same findings, many times slower). What was set aside comes back after."""
    owned = [name for name in sys.modules if name == "sdk" or name.startswith("sdk.")]
    set_aside = {name: sys.modules.pop(name) for name in owned}
    yield Project(built_root)
    for name in [name for name in sys.modules if name == "sdk" or name.startswith("sdk.")]:
        del sys.modules[name]
    sys.modules.update(set_aside)
