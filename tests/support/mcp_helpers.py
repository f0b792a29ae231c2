"""Shared pieces of the MCP tests: the committed SDK as a server process, free ports, an env for children, a
built package imported in this process."""

from __future__ import annotations

import importlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

import pytest

from support.projects import REPO_ROOT

pytest.importorskip("mcp", reason="the MCP tests need the mcp extra: pip install -e '.[mcp]'")

GENERATED = REPO_ROOT / "generated"
SERVE = (sys.executable, "-m", "toolgen_sdk", "mcp")
# Every await of a test runs under this many seconds: nothing may hang.
DEADLINE = 60


def child_env(*paths: Path) -> dict[str, str]:
    """The environment for a server process: this one, with `paths` first on PYTHONPATH."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*(str(p) for p in paths), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_listening(process: subprocess.Popen[str], port: int) -> None:
    """Return once `process` listens on `port` of 127.0.0.1; fail if it exits first or takes past DEADLINE."""
    deadline = time.monotonic() + DEADLINE
    while True:
        if process.poll() is not None:
            raise AssertionError(f"the server exited with {process.returncode}: {process.stderr.read()}")  # type: ignore[union-attr]
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise AssertionError("the MCP HTTP server did not start listening") from None
            time.sleep(0.1)


@contextmanager
def http_server(args: Sequence[str], cwd: Path, env: dict[str, str]) -> Iterator[str]:
    """A `... mcp --http` server process on a free port of 127.0.0.1; yields its URL, stops it after."""
    port = free_port()
    process = subprocess.Popen(
        [*args, "--http", f"127.0.0.1:{port}"],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_listening(process, port)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@contextmanager
def imported_package(generated: Path, package: str) -> Iterator[ModuleType]:
    """`package`, built into `generated`, imported in this process as its users import it (its sub-modules import
    inside the block); after, sys.path and sys.modules are as they were. Give it a name no other test imports."""
    sys.path.insert(0, str(generated))
    importlib.invalidate_caches()
    try:
        module = importlib.import_module(package)
        assert Path(str(module.__file__)).is_relative_to(generated), module.__file__
        yield module
    finally:
        sys.path.remove(str(generated))
        for name in [name for name in sys.modules if name == package or name.startswith(f"{package}.")]:
            del sys.modules[name]
