"""What the service's hot paths cost the server: POST /runs to its answer, and a run's events replayed over SSE.

Each measurement is a process of its own (DBOS keeps one instance a process) that serves the real Starlette app
(`service_app`, token authentication, the boundary middleware) over a DurableRuns on SQLite in a temporary folder,
called in-process through ASGI (no socket, no HTTP client: what is counted is the server's), beside the floor: a
bare Starlette app doing the least the same request needs, called the same way, interleaved with it.

- post: `POST /runs` with a one-message conversation, CPU time (the whole process: `time.process_time`) from
  the call to the answer's last byte; each run is waited for (not counted) before the next request. The floor:
  a Starlette route that reads the JSON body and answers 201 with an id.
- replay: `GET /runs/{id}/events` of a finished run of about `--events` events (its model streams an answer
  of that many words), from the first event to the last byte. The floor: a Starlette StreamingResponse of the
  very bytes the service sent, one chunk per event, from memory (they are checked equal).

    python benchmarks/serve_costs.py post --requests 50 [--generator DIR]
    python benchmarks/serve_costs.py replay --events 1000 --requests 20 [--generator DIR] [--side ours|floor]

prints one JSON line: the CPU seconds of each request of each side. `bench_serve_delivery.py` runs these and puts
them in its section of README.md (with callgrind's instruction counts for the replay). Nothing here is a test.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

TOKEN = "bench-token-0123456789abcdef0123456789"
HOST = "127.0.0.1:8000"


def opening() -> list[dict[str, Any]]:
    """The conversation a measured run starts from: one user message, made afresh for each run."""
    return [{"role": "user", "content": "go"}]


async def asgi(
    app: Any, method: str, path: str, body: bytes = b"", token: str | None = TOKEN
) -> tuple[int, bytes, float]:
    """One request through the app: its status, its body, and the process's CPU time at its last byte."""
    headers = [(b"host", HOST.encode()), (b"content-type", b"application/json")]
    if token:
        headers.append((b"authorization", f"Bearer {token}".encode()))
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    given = False
    connected: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    status, chunks, answered = 0, [], 0.0

    async def receive() -> dict[str, Any]:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        await connected  # the client stays until the response is over
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status, answered
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                answered = time.process_time()

    try:
        await app(scope, receive, send)
    finally:
        connected.cancel()
    return status, b"".join(chunks), answered


def _wal(path: Path) -> str:
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA journal_mode=WAL")
    return f"sqlite:///{path}"


def _service(folder: str, words: int) -> tuple[Any, Any]:
    """A DurableRuns whose model answers `words` words, and the service's app over it."""
    from toolgen.runtime import DurableRuns, ModelClientBase, Registry, Response, service_app
    from toolgen.runtime.serve.auth import TokenAuth, Tokens

    answer = " ".join(f"word{n}" for n in range(words)) or "done"

    class Model(ModelClientBase):
        def complete(self, request: Any) -> Any:
            return Response({"role": "assistant", "content": answer}, {"reason": "stop", "raw": None}, model="scripted")

    durable = DurableRuns(Registry({}), Model(), database_url=_wal(Path(folder) / "runs.sqlite"), name="bench-serve")
    return durable, service_app(durable, auth=TokenAuth(Tokens.single(TOKEN)))


def _ended(durable: Any, run_id: str) -> None:
    """Wait for the run's end: `result()`, or for a toolgen without it, the store's row watched for its end."""
    if hasattr(durable, "result"):
        durable.result(run_id, timeout=60)
        return
    store = durable.store
    with store.wakeups.watch(run_id) as watch:
        while (found := store.run(run_id)) is None or found.status not in ("finished", "error", "stopped"):
            watch.wait_blocking(0.05)


def _floor_post() -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def start(request: Request) -> JSONResponse:
        asked = await request.json()
        return JSONResponse({"id": uuid.uuid4().hex, "status": "running", "messages": len(asked["messages"])}, 201)

    return Starlette(routes=[Route("/runs", start, methods=["POST"])])


def _floor_replay(events: list[bytes]) -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}

    async def stream() -> Any:
        for event in events:
            yield event

    async def replay(request: Request) -> StreamingResponse:
        return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)

    return Starlette(routes=[Route("/runs/{run_id}/events", replay, methods=["GET"])])


def measure_post(requests: int) -> dict[str, Any]:
    body = json.dumps({"messages": opening()}).encode()
    ours, floor = [], []
    with tempfile.TemporaryDirectory(prefix="toolgen-bench-post-") as folder:
        durable, app = _service(folder, 0)
        floor_app = _floor_post()
        gc.collect()
        gc.freeze()  # as the serve verb does once it has started

        async def main() -> None:
            for number in range(requests + 3):  # three untimed warm-ups of each
                started = time.process_time()
                status, answer, done = await asgi(app, "POST", "/runs", body)
                if status != 201:
                    raise SystemExit(f"POST /runs answered {status}: {answer!r}")
                spent = done - started
                await asyncio.to_thread(_ended, durable, json.loads(answer)["id"])
                started = time.process_time()
                status, answer, done = await asgi(floor_app, "POST", "/runs", body, token=None)
                if number >= 3:
                    ours.append(spent)
                    floor.append(done - started)

        asyncio.run(main())
        durable.close()
    return {"ours": ours, "floor": floor}


def measure_replay(events: int, requests: int, side: str) -> dict[str, Any]:
    ours, floor = [], []
    with tempfile.TemporaryDirectory(prefix="toolgen-bench-replay-") as folder:
        durable, app = _service(folder, events)
        run_id = durable.start(opening(), None)
        _ended(durable, run_id)
        path = f"/runs/{run_id}/events"
        gc.collect()
        gc.freeze()  # as the serve verb does once it has started

        async def main() -> int:
            status, sent, _ = await asgi(app, "GET", path)
            if status != 200:
                raise SystemExit(f"GET {path} answered {status}")
            pieces = [piece + b"\n\n" for piece in sent.split(b"\n\n") if piece]
            floor_app = _floor_replay(pieces)
            _, same, _ = await asgi(floor_app, "GET", path, token=None)
            if same != sent:
                raise SystemExit("the floor did not send the service's bytes")
            for number in range(requests + 2):  # two untimed warm-ups of each
                if side in ("both", "ours"):
                    started = time.process_time()
                    _, got, done = await asgi(app, "GET", path)
                    if got != sent:
                        raise SystemExit("a replay sent other bytes than the first")
                    if number >= 2:
                        ours.append(done - started)
                if side in ("both", "floor"):
                    started = time.process_time()
                    _, got, done = await asgi(floor_app, "GET", path, token=None)
                    if number >= 2:
                        floor.append(done - started)
            return len(pieces)

        count = asyncio.run(main())
        durable.close()
    return {"ours": ours, "floor": floor, "events": count}


@contextlib.contextmanager
def extracted(ref: str | None) -> Iterator[str | None]:
    """The `generator/` folder of commit `ref` (git archive, into a temporary folder), or None without a ref."""
    if ref is None:
        yield None
        return
    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory(prefix="toolgen-bench-ref-") as folder:
        archive = subprocess.run(["git", "archive", ref, "generator"], cwd=root, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", folder], input=archive.stdout, check=True)
        yield str(Path(folder) / "generator")


def run_child(arguments: list[str], generator: str | None, callgrind: bool = False) -> tuple[dict[str, Any], int]:
    """This script in a fresh process: its JSON line, and (under callgrind) the instructions it ran."""
    command = [sys.executable, __file__, *arguments, *(["--generator", generator] if generator else [])]
    if callgrind:
        command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command]
    done = subprocess.run(
        command, capture_output=True, text=True, check=False, env={**os.environ, "PYTHONHASHSEED": "0"}
    )
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(arguments)} failed:\n{done.stderr[-3000:]}")
    found = re.search(r"Collected : (\d+)", done.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1]), int(found.group(1)) if found else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("case", choices=("post", "replay"))
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--events", type=int, default=1000, help="words of the replayed run's answer")
    parser.add_argument("--side", choices=("both", "ours", "floor"), default="both", help="replay: whose requests")
    parser.add_argument("--generator", help="the folder holding the toolgen package to measure")
    options = parser.parse_args()
    sys.path.insert(0, options.generator or str(Path(__file__).resolve().parents[1] / "generator"))
    if options.case == "post":
        print(json.dumps(measure_post(options.requests)))
    else:
        print(json.dumps(measure_replay(options.events, options.requests, options.side)))


if __name__ == "__main__":
    main()
