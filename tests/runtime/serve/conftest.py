"""Servers of the package built from this checkout, started for one test and killed after it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from support.serve_helpers import SourceServer


@pytest.fixture
def serve(tmp_path: Path, source_build: Path) -> Iterator[Callable[..., SourceServer]]:
    # Imported here, not above: without the serve extra, support.serve_helpers skips the module importing it, and
    # a skip raised while pytest loads a conftest is an error that ends the whole run.
    from support.serve_helpers import SourceServer, stop_all

    started: list[SourceServer] = []

    def start(*args: str, env: dict[str, str] | None = None, wait: bool = True) -> SourceServer:
        """A server of `args`, answering; `wait=False`: spawned only (its `ready()` waits), to start several."""
        server = SourceServer(source_build, tmp_path, *args, env=env)
        started.append(server)
        server.spawn()
        return server.ready() if wait else server

    try:
        yield start
    finally:
        stop_all(started)  # what these tests check is said while the servers run, not in how they stop
