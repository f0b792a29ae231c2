"""The generated SDK's `serve` verb as a real process on a free loopback port, for the service's tests."""

from __future__ import annotations

import contextlib
import glob
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Self

import httpx
import pytest

from support.projects import REPO_ROOT, SOURCE_PACKAGE, default_sigint

GENERATED = REPO_ROOT / "generated"
LIST_FILES = "list the files in the workspace"
# The variable the serve verb takes its token from (the runtime's auth.TOKEN_ENV).
TOKEN_ENV = "TOOLGEN_SERVE_TOKEN"

pytest.importorskip("dbos", reason="the serve extra (dbos) is not installed")
pytest.importorskip("starlette", reason="the serve extra (starlette) is not installed")
pytest.importorskip("uvicorn", reason="the serve extra (uvicorn) is not installed")


def required(kind: str, reason: str) -> None:
    """Skip for want of a Debian package, except where TOOLGEN_REQUIRE_<KIND> says it must be there (CI)."""
    if os.environ.get(f"TOOLGEN_REQUIRE_{kind.upper()}"):
        pytest.fail(f"{reason}, and TOOLGEN_REQUIRE_{kind.upper()} is set", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Server:
    """`python -m toolgen_sdk serve` in `cwd`, on its own port; start() again after kill() reuses both.

    The server's token is `token` (TOOLGEN_SERVE_TOKEN, a new one per server unless `env` gives it), which
    `client` sends as `Authorization: Bearer`, with JSON's Content-Type; `package` is the package served."""

    def __init__(self, cwd: Path, *args: str, env: dict[str, str] | None = None, package: str = "toolgen_sdk") -> None:
        self.cwd = cwd
        self.args = args
        self.package = package
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {
            **os.environ,
            TOKEN_ENV: f"test-token-{secrets.token_urlsafe(16)}",
            "PYTHONPATH": f"{GENERATED}{os.pathsep}{cwd}",
            **(env or {}),
        }
        self.token = self.env[TOKEN_ENV]
        self.process: subprocess.Popen[bytes] | None = None
        headers = {"Content-Type": "application/json"}
        if self.token:  # an empty one: the server makes its own (auth.kept_token)
            headers["Authorization"] = f"Bearer {self.token}"
        self.client = httpx.Client(base_url=self.url, timeout=30, headers=headers)

    def start(self) -> Self:
        return self.spawn().ready()

    def spawn(self) -> Self:
        """Start the process without waiting for it to answer (`ready` waits): servers that start together."""
        command = [sys.executable, "-m", self.package, "serve", "--port", str(self.port), *self.args]
        log = (self.cwd / f"server-{self.port}.log").open("ab")
        self.process = subprocess.Popen(
            command, cwd=self.cwd, env=self.env, stdout=log, stderr=log, preexec_fn=default_sigint
        )
        return self

    def ready(self) -> Self:
        """Wait until the spawned server answers."""
        assert self.process is not None, "ready() before spawn()"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"the server exited with {self.process.returncode}: {self.log()}")
            with contextlib.suppress(httpx.HTTPError):
                if self.client.get("/").status_code == 200:
                    return self
            time.sleep(0.1)
        raise AssertionError(f"the server did not answer within 60 s: {self.log()}")

    def log(self) -> str:
        return (self.cwd / f"server-{self.port}.log").read_text(encoding="utf-8", errors="replace")

    def kill(self) -> None:
        """SIGKILL: no cleanup of any kind, as when a machine loses power."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=30)

    def stop(self, *, graceful: bool = True) -> None:
        """SIGTERM and wait for the clean stop; `graceful=False`: SIGKILL, for a test that does not check the stop
        (a clean stop takes the best part of a second: uvicorn's shutdown, then DBOS's)."""
        if not graceful:
            self.kill()
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()
        self.client.close()

    # -- the API --

    def start_run(self, prompt: str, **extra: Any) -> str:
        answer = self.client.post("/runs", json={"messages": [{"role": "user", "content": prompt}], **extra})
        assert answer.status_code == 201, answer.text
        run_id: str = answer.json()["id"]
        return run_id

    def state(self, run_id: str) -> dict[str, Any]:
        answer = self.client.get(f"/runs/{run_id}")
        assert answer.status_code == 200, answer.text
        data: dict[str, Any] = answer.json()
        return data

    def wait_for(self, run_id: str, done: Callable[[dict[str, Any]], bool], seconds: float = 60) -> dict[str, Any]:
        deadline = time.monotonic() + seconds
        state = self.state(run_id)
        while not done(state):
            if time.monotonic() > deadline:
                raise AssertionError(f"run {run_id} never got there: {state}\n{self.log()}")
            time.sleep(0.1)
            state = self.state(run_id)
        return state

    def events(self, run_id: str, last_event_id: int = 0) -> list[tuple[int, str, dict[str, Any]]]:
        """The run's events from the SSE endpoint (which ends after run_finished): (id, type, data)."""
        import json

        found: list[tuple[int, str, dict[str, Any]]] = []
        headers = {"Last-Event-ID": str(last_event_id)}
        with self.client.stream("GET", f"/runs/{run_id}/events", headers=headers) as answer:
            assert answer.status_code == 200, answer.read()
            assert answer.headers["content-type"].startswith("text/event-stream")
            fields: dict[str, str] = {}
            for line in answer.iter_lines():
                if line == "":
                    if "data" in fields:
                        event = json.loads(fields["data"])
                        # Stored events keep the wall-clock time they happened, to join the page with a trace.
                        assert isinstance(event["time"], float) and event["time"] > 1.7e9, event
                        found.append((int(fields["id"]), fields["event"], event["data"]))
                    fields = {}
                elif not line.startswith(":"):
                    key, _, value = line.partition(": ")
                    fields[key] = value
        return found


@contextlib.contextmanager
def serving(cwd: Path, *args: str, env: dict[str, str] | None = None, graceful: bool = True) -> Iterator[Server]:
    """A started Server, stopped at the end (see Server.stop for `graceful`)."""
    server = Server(cwd, *args, env=env)
    try:
        yield server.start()
    finally:
        server.stop(graceful=graceful)


class SourceServer(Server):
    """The serve verb of the package built from this checkout's runtime (the committed generated/ may lag it)."""

    def __init__(self, build: Path, cwd: Path, *args: str, env: dict[str, str] | None = None) -> None:
        path = {"PYTHONPATH": f"{build}{os.pathsep}{cwd}"}
        super().__init__(cwd, *args, env={**path, **(env or {})}, package=SOURCE_PACKAGE)


def stop_all(servers: Sequence[Server]) -> None:
    """SIGKILL every one at once, for tests that do not check how they stop: no grace period waited out one by
    one."""
    for server in servers:
        if server.process is not None and server.process.poll() is None:
            server.process.send_signal(signal.SIGKILL)
    for server in servers:
        server.stop(graceful=False)


def awaiting(state: dict[str, Any]) -> bool:
    return state["status"] == "awaiting_approval" and bool(state["pending"])


def over(state: dict[str, Any]) -> bool:
    return state["status"] in ("finished", "stopped", "error")


def _postgres_bin(name: str) -> str | None:
    return shutil.which(name) or next(iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))), None)


@contextlib.contextmanager
def postgres_cluster() -> Iterator[str]:
    """A throwaway PostgreSQL cluster on a free port, with a database `runs`: its URL."""
    initdb, pg_ctl = _postgres_bin("initdb"), _postgres_bin("pg_ctl")
    if initdb is None or pg_ctl is None:
        required("postgres", "Debian's postgresql is not installed (apt-get install postgresql; .ci/run does)")
    assert initdb is not None and pg_ctl is not None
    # Outside pytest's temporary folders, which only root may enter.
    root = Path(tempfile.mkdtemp(prefix="toolgen-postgres-"))
    data, sockets = root / "data", root / "sockets"
    sockets.mkdir()
    # PostgreSQL refuses to run as root: as root, the server runs as the postgres user the package made.
    as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    if as_user:
        shutil.chown(root, "postgres")
        shutil.chown(sockets, "postgres")
    port = free_port()
    subprocess.run([*as_user, initdb, "-D", str(data), "-A", "trust", "-U", "toolgen"], check=True, capture_output=True)
    options = f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off"
    log = root / "server.log"
    subprocess.run([*as_user, pg_ctl, "-D", str(data), "-o", options, "-l", str(log), "-w", "start"], check=True)
    try:
        psql = _postgres_bin("psql") or "psql"
        subprocess.run(
            [psql, "-h", "127.0.0.1", "-p", str(port), "-U", "toolgen", "-d", "postgres", "-c", "CREATE DATABASE runs"],
            check=True,
            capture_output=True,
        )
        yield f"postgresql://toolgen@127.0.0.1:{port}/runs"
    finally:
        subprocess.run([*as_user, pg_ctl, "-D", str(data), "-m", "immediate", "stop"], check=False)
        shutil.rmtree(root, ignore_errors=True)
