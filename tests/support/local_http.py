"""A real HTTP server on 127.0.0.1 for client tests: each POST goes to a handler function that sees the request
as received (path, headers, raw body) and answers with a status, a content type and body bytes."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Received:
    """One request as the server read it off the socket."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True)
class Answer:
    body: bytes
    status: int = 200
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    # Bytes per write: a stream arrives in pieces, as over a real network.
    chunk: int = 0


Handler = Callable[[Received], Answer]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    handler: Handler
    seen: list[Received]


class _RequestHandler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:  # noqa: N802 - the name http.server calls
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        received = Received("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        self.server.seen.append(received)
        answer = self.server.handler(received)
        self.send_response(answer.status)
        self.send_header("Content-Type", answer.content_type)
        for key, value in answer.headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(answer.body)))
        self.end_headers()
        step = answer.chunk or len(answer.body) or 1
        for start in range(0, len(answer.body), step):
            self.wfile.write(answer.body[start : start + step])
            self.wfile.flush()

    def log_message(self, format: str, *args: Any) -> None:
        pass


class LocalServer:
    """Serves POSTs with `handler` until closed; `seen` lists the requests in order."""

    def __init__(self, handler: Handler) -> None:
        self._server = _Server(("127.0.0.1", 0), _RequestHandler)
        self._server.handler = handler
        self._server.seen = []
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()

    @property
    def base(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def seen(self) -> list[Received]:
        return self._server.seen

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def serving(handler: Handler) -> Iterator[LocalServer]:
    """A fixture body: a server for the test, closed after it."""
    server = LocalServer(handler)
    try:
        yield server
    finally:
        server.close()


def queue(*answers: Answer) -> Handler:
    """A handler giving `answers` in order, then a 500 saying none is left."""
    left = list(answers)
    return lambda _: left.pop(0) if left else Answer(b'{"message": "no answer queued"}', 500)
