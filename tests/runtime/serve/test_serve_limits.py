"""The service's limits against a real server: slow clients are dropped, the cap holds, streams stay open."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import resource
import select
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from support.projects import SOURCE_PACKAGE
from support.serve_helpers import LIST_FILES, Server, awaiting

from toolgen.runtime.app.server_limits import (
    BODY_SECONDS,
    HEADER_SECONDS,
    KEEP_ALIVE_SECONDS,
    RESERVED_FILES,
    ServerLimits,
    fitted,
)
from toolgen.runtime.serve.http import _KEEP_ALIVE_SECONDS as STREAM_KEEP_ALIVE_SECONDS

# Each test holds sockets open for a timeout's length: minutes in all, run after the main suite (.ci/run).
pytestmark = pytest.mark.slow

# On top of a timeout: all a loaded 2-core machine may add before a dropped client sees its connection end.
SLACK = 30.0
HEAD = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slow\r\nAccept: */*\r\nX-Padding: " + b"p" * 200


class LimitedServer(Server):
    """The serve verb of the package built from this checkout's runtime, optionally with few open files."""

    def __init__(self, build: Path, cwd: Path, *args: str, open_files: int | None = None) -> None:
        database = f"sqlite:///{cwd / 'runs.sqlite'}"
        env = {"PYTHONPATH": f"{build}{os.pathsep}{cwd}"}
        super().__init__(cwd, "--database", database, *args, env=env, package=SOURCE_PACKAGE)
        self.open_files = open_files

    def start(self) -> LimitedServer:
        command = [sys.executable, "-m", self.package, "serve", "--port", str(self.port), *self.args]
        log = (self.cwd / f"server-{self.port}.log").open("ab")
        limit = self.open_files

        def few_files() -> None:
            if limit is not None:
                resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

        self.process = subprocess.Popen(
            command, cwd=self.cwd, env=self.env, stdout=log, stderr=log, preexec_fn=few_files
        )
        _until(self._answers, lambda: f"the server answering: {self.log()}")
        return self

    def _answers(self) -> bool:
        assert self.process is not None and self.process.poll() is None, self.log()
        with contextlib.suppress(Exception):
            return bool(self.client.get("/").status_code == 200)
        return False

    def head(self, method: str, path: str, *lines: str) -> bytes:
        """A request's head as a raw client writes it, with the client's credentials if it sends any."""
        auth = self.client.headers.get("authorization")
        fields = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{self.port}", *lines]
        fields += [f"Authorization: {auth}"] if auth else []
        return ("\r\n".join(fields) + "\r\n\r\n").encode()

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=60)


def _fresh_get(server: Server, path: str = "/") -> int:
    """The status a client new to the server gets (a pooled connection left idle may be one closed to make way)."""
    return httpx.get(server.url + path, headers=dict(server.client.headers), timeout=60).status_code


def _until(done: Callable[[], bool], what: Callable[[], str], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, f"{what()} never happened"
        time.sleep(0.05)


@contextlib.contextmanager
def _serving(build: Path, cwd: Path, *args: str, open_files: int | None = None) -> Iterator[LimitedServer]:
    server = LimitedServer(build, cwd, *args, open_files=open_files)
    try:
        yield server.start()
    finally:
        server.stop()


@pytest.fixture(scope="module")
def server(source_build: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LimitedServer]:
    with _serving(source_build, tmp_path_factory.mktemp("limits")) as started:
        yield started


def _trickle(connection: socket.socket, data: bytes, seconds: float) -> tuple[bytes, int]:
    """Send `data` a byte a second until the server ends the connection: what it answered, and the bytes sent."""
    connection.setblocking(False)
    deadline, sent = time.monotonic() + seconds, 0
    while time.monotonic() < deadline:
        if select.select([connection], [], [], 1.0)[0]:
            return _rest(connection, deadline), sent
        try:
            sent += connection.send(data[sent : sent + 1])
        except OSError:  # closed already: what it answered is still there to read, unless a reset took it
            return _rest(connection, deadline), sent
    raise AssertionError(f"still connected after {seconds} s and {sent} bytes")


def _rest(connection: socket.socket, deadline: float) -> bytes:
    """What the server sends until it closes the connection (a reset ends it too)."""
    connection.setblocking(True)
    answer = b""
    while True:
        connection.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            chunk = connection.recv(65536)
        except ConnectionResetError:
            return answer
        except TimeoutError:
            raise AssertionError(f"still connected at the deadline, after {answer!r}") from None
        if not chunk:
            return answer
        answer += chunk


def _status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else 0


def _log_is_quiet(server: Server, most_bytes: int = 4096) -> None:
    log = server.log()
    assert "Traceback" not in log, log[-3000:]
    assert len(log.encode()) < most_bytes, log[-3000:]


# -- read timeouts --


def test_a_client_sending_its_head_a_byte_a_second_is_answered_408_and_closed(server: LimitedServer) -> None:
    with server.connect() as slow, server.connect() as silent:
        answer, sent = _trickle(slow, HEAD, HEADER_SECONDS + SLACK)
        assert sent < len(HEAD)  # cut off before its head was whole
        assert _status(answer) in (408, 0), answer  # 0: a byte sent as the server closed reset the connection
        # One that sends nothing at all is answered and closed the same way.
        silent_answer = _rest(silent, time.monotonic() + SLACK)
        assert _status(silent_answer) == 408, silent_answer
        assert json.loads(silent_answer.partition(b"\r\n\r\n")[2])["error"]["message"]
    assert server.client.get("/").status_code == 200
    _log_is_quiet(server)


def test_a_body_that_trickles_is_cut_after_the_body_timeout(server: LimitedServer) -> None:
    body = json.dumps({"messages": [{"role": "user", "content": "x" * 400}]}).encode()
    head = server.head("POST", "/runs", "Content-Type: application/json", f"Content-Length: {len(body)}")
    with server.connect() as slow:
        slow.sendall(head)
        answer, sent = _trickle(slow, body, BODY_SECONDS + SLACK)
    assert sent < len(body)
    assert _status(answer) in (408, 0), answer
    assert server.client.get("/").status_code == 200
    _log_is_quiet(server)


def test_an_event_stream_outlives_the_read_and_keep_alive_timeouts(server: LimitedServer) -> None:
    # The stream's first keep-alive comment comes after the longest of these: reading it shows the stream lived.
    assert max(HEADER_SECONDS, KEEP_ALIVE_SECONDS) < STREAM_KEEP_ALIVE_SECONDS
    run_id = server.start_run(LIST_FILES)
    call_id = server.wait_for(run_id, awaiting)["pending"][0]["id"]
    kinds: list[str] = []
    with server.client.stream("GET", f"/runs/{run_id}/events") as stream:
        assert stream.status_code == 200
        for line in stream.iter_lines():
            if line.startswith("event: "):
                kinds.append(line.removeprefix("event: "))
            if line == ": keep-alive" and "approval_decided" not in kinds:
                decided = server.client.post(f"/runs/{run_id}/approvals/{call_id}", json={"decision": "approve"})
                assert decided.status_code == 200, decided.text
    assert kinds[-1] == "run_finished", kinds
    assert "approval_decided" in kinds
    _log_is_quiet(server)


# -- the connection cap --


def _open(port: int, count: int, head: bytes = b"") -> list[socket.socket]:
    """`count` non-blocking connections to `port`, each having sent `head` if it could yet."""
    opened = []
    for _ in range(count):
        connection = socket.socket()
        connection.setblocking(False)
        connection.connect_ex(("127.0.0.1", port))
        opened.append(connection)
    _nudge(opened, head)
    return opened


def _nudge(connections: list[socket.socket], data: bytes) -> None:
    for connection in connections:
        with contextlib.suppress(OSError):
            connection.send(data)


def _ended(connection: socket.socket) -> bool:
    """Whether the server has closed `connection` (reading, non-blocking, whatever it answered first)."""
    try:
        while chunk := connection.recv(65536):
            pass
        return not chunk
    except (BlockingIOError, InterruptedError):
        return False
    except OSError as error:
        return error.errno != errno.ENOTCONN  # still connecting: not ended


def _taken_in(idle: list[socket.socket], cap: int) -> None:
    """Wait until the server has accepted every one of `idle`: all but the `cap` it may hold have ended.

    A client arriving in the same accept batch as `cap` sockets of a flood is told 503 (the server closes none
    it has not yet read from, so a flood cannot reset a client whose request is on its way; docs/serving.md);
    once the flood is in, the longest idle make way. The server's listen backlog must take the flood at once."""
    _until(
        lambda: sum(_ended(each) for each in idle) >= len(idle) - cap,
        lambda: f"all but {cap} of {len(idle)} idle sockets closed",
        HEADER_SECONDS + SLACK,
    )


def _close(connections: list[socket.socket]) -> None:
    for connection in connections:
        connection.close()


def test_idle_sockets_past_the_cap_do_not_lock_out_a_client(source_build: Path, tmp_path: Path) -> None:
    with _serving(source_build, tmp_path, "--max-connections", "50") as server:
        idle = _open(server.port, 500, HEAD[:20])
        try:
            _taken_in(idle, 50)
            # While the 50 it holds stay open, a client is answered: the longest idle make way for it.
            for _ in range(3):
                assert _fresh_get(server) == 200
            # And all of them end: closed to make way, or answered 408 at the end of the header timeout.
            _until(
                lambda: all(_ended(each) for each in idle), lambda: "every idle socket closed", HEADER_SECONDS + SLACK
            )
        finally:
            _close(idle)
        assert _fresh_get(server) == 200
        _log_is_quiet(server)


def test_streams_count_toward_the_cap_and_past_it_a_new_connection_is_answered_503(
    source_build: Path, tmp_path: Path
) -> None:
    with _serving(source_build, tmp_path, "--max-connections", "3") as server:
        run_id = server.start_run(LIST_FILES)
        server.wait_for(run_id, awaiting)
        server.client.close()  # its idle connection is one of the three
        streams = [server.connect() for _ in range(3)]
        try:
            for stream in streams:
                stream.sendall(server.head("GET", f"/runs/{run_id}/events"))
                assert stream.recv(65536).startswith(b"HTTP/1.1 200"), "a stream within the cap is served"
            with server.connect() as late:
                answer = _rest(late, time.monotonic() + SLACK)
            assert _status(answer) == 503, answer
            assert _asked(server) == 503
            # One stream ends: its place is free again, once the server has seen it close.
            streams.pop().close()
            _until(lambda: _asked(server) == 200, lambda: "a new connection served")
            _log_is_quiet(server)
            # A stop does not wait on the streams still open, nor cancel them: they are closed at once.
            server.stop()
            assert server.process is not None and server.process.returncode == 0, server.log()
            log = server.log()
            assert "Exception in ASGI application" not in log, log[-3000:]
            assert "timeout graceful shutdown exceeded" not in log, log[-3000:]
        finally:
            _close(streams)


def _asked(server: LimitedServer) -> int:
    """The status a new connection gets for `GET /`."""
    with server.connect() as connection:
        connection.sendall(server.head("GET", "/", "Connection: close"))
        return _status(_rest(connection, time.monotonic() + SLACK))


def test_a_process_allowed_few_files_serves_fewer_connections_and_never_runs_out(
    source_build: Path, tmp_path: Path
) -> None:
    with _serving(source_build, tmp_path, open_files=400) as server:
        limits = fitted(ServerLimits(), 400)
        cap = limits.max_connections
        assert f"serving at most {cap} connections, not 1000" in server.log()
        # One accept batch (a backlog) never fills more than half the cap with sockets not yet read from, so a
        # newcomer always finds one read to make way for it, even amid the flood.
        assert limits.backlog <= cap // 2, limits
        idle = _open(server.port, 1000, HEAD[:20])
        try:
            for _ in range(3):
                assert _fresh_get(server) == 200
        finally:
            _close(idle)
        log = server.log()
        assert "Traceback" not in log and "socket.accept()" not in log, log[-3000:]


# Holds `count` connections to `port` open, each having sent the start of a head, and sends each one more
# byte a second until its stdin closes; prints how many connected, failed, and were still connecting after two
# minutes. Run as its own process: each holds 10,000.
_SLOW_CLIENTS = textwrap.dedent(
    """
    import resource, select, socket, sys, time

    port, count = int(sys.argv[1]), int(sys.argv[2])
    resource.setrlimit(resource.RLIMIT_NOFILE, (count + 64, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
    held = []
    for _ in range(count):
        connection = socket.socket()
        connection.setblocking(False)
        connection.connect_ex(("127.0.0.1", port))
        held.append(connection)
    # Each one's connect has finished (its first bytes sent), or failed, or is still being retried: counted.
    poller, pending = select.epoll(), {}
    for connection in held:
        poller.register(connection.fileno(), select.EPOLLOUT)
        pending[connection.fileno()] = connection
    connected, failed, deadline = 0, 0, time.monotonic() + 120
    while pending and time.monotonic() < deadline:
        ready = poller.poll(1.0)
        for fd, _ in ready:
            connection = pending.pop(fd)
            poller.unregister(fd)
            if connection.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                failed += 1
                continue
            connected += 1
            try:
                connection.send(b"GET / HTTP/1.1\\r\\n")
            except OSError:
                pass
    print(connected, failed, len(pending), flush=True)
    while not select.select([sys.stdin], [], [], 1.0)[0]:
        for connection in held:
            try:
                connection.send(b"x")
            except OSError:
                pass
    """
)


def _arriving(port: int) -> tuple[int, int]:
    """Connections to `port` not yet accepted: those in the listener's accept queue, and those whose
    handshake the server has not finished (SYN_RECV), from the kernel's own table (/proc/net/tcp)."""
    queued = half_open = 0
    with open("/proc/net/tcp") as table:
        next(table)
        for line in table:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) != port:
                continue
            if fields[3] == "0A":  # listening: rx_queue is the accept queue's length
                queued += int(fields[4].split(":")[1], 16)
            elif fields[3] == "03":
                half_open += 1
    return queued, half_open


@pytest.mark.slow
def test_twenty_thousand_slow_sockets_do_not_lock_out_a_client(source_build: Path, tmp_path: Path) -> None:
    # Two processes of 10,000 each: one process here may not open 20,000 files and keep its own.
    per_process = 10_000
    with _serving(source_build, tmp_path) as server:
        clients = [
            subprocess.Popen(
                [sys.executable, "-c", _SLOW_CLIENTS, str(server.port), str(per_process)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        try:
            for client in clients:
                assert client.stdout is not None
                # connected, failed, still connecting: every one of them got through to the server
                counts = client.stdout.readline().split()
                assert counts == [str(per_process), "0", "0"], (counts, server.log()[-3000:])
            # A client that saw its connect finish may still be queued at the server (its last ACK dropped while
            # the accept queue was full): the claim is of sockets held, so the flood lands first.
            _until(
                lambda: _arriving(server.port) == (0, 0),
                lambda: f"the flood landing (queued, half-open: {_arriving(server.port)})",
                180,
            )
            # While 20,000 are open and trickling, a client is served, in full, as if they were not there.
            assert _fresh_get(server) == 200
            posted = httpx.post(
                server.url + "/runs", json={"messages": []}, headers=dict(server.client.headers), timeout=60
            )
            assert posted.status_code == 422, posted.text
            assert _fresh_get(server) == 200
        finally:
            for client in clients:
                client.communicate(timeout=60)  # closing stdin ends it
        assert _fresh_get(server) == 200
        _log_is_quiet(server)


# -- what the limits are --


def test_the_cap_and_backlog_are_fitted_under_the_open_files_limit() -> None:
    asked = ServerLimits(max_connections=1000, backlog=1024)
    assert fitted(asked, None) == asked
    assert fitted(asked, 1_048_576) == asked
    for open_files in (16, 64, 400, 1024, 4096):
        limits = fitted(asked, open_files)
        assert 1 <= limits.max_connections <= asked.max_connections
        # Admitted connections and two backlogs of accepted ones still leave the process files of its own.
        reserve = min(RESERVED_FILES, open_files // 4)
        assert limits.max_connections + 2 * limits.backlog + reserve <= open_files, (open_files, limits)


def test_max_connections_takes_a_whole_number_from_one(source_build: Path, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(source_build)}
    for bad in ("0", "-3", "many"):
        ran = subprocess.run(
            [sys.executable, "-m", SOURCE_PACKAGE, "serve", "--max-connections", bad],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert ran.returncode == 2, ran.stderr
        assert "--max-connections" in ran.stderr and "Traceback" not in ran.stderr


# A bare asyncio server allowed 64 files, with the filter `serve` puts on asyncio's logger.
_OUT_OF_FILES = textwrap.dedent(
    """
    import asyncio, resource, sys
    from toolgen.runtime.app.server_limits import quiet_repeats

    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
    quiet_repeats()

    async def main():
        held = []

        class Hold(asyncio.Protocol):
            def connection_made(self, transport):
                held.append(transport)

        server = await asyncio.get_running_loop().create_server(Hold, "127.0.0.1", 0, backlog=512)
        print(server.sockets[0].getsockname()[1], flush=True)
        await asyncio.sleep(float(sys.argv[1]))

    asyncio.run(main())
    """
)


def test_an_accept_out_of_files_is_one_line_a_minute_not_a_traceback_each() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", _OUT_OF_FILES, "4"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    port = int(child.stdout.readline())
    clients = _open(port, 300)
    try:
        _, errors = child.communicate(timeout=120)
    finally:
        _close(clients)
    lines = [line for line in errors.splitlines() if line.strip()]
    assert "Traceback" not in errors, errors[-3000:]
    assert 1 <= len(lines) <= 2, errors[-3000:]
    assert "socket.accept() out of system resource" in lines[0] and "Too many open files" in lines[0], lines
