# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The HTTP service over durable runs, a Starlette app: start a run, read it, stream its events, decide calls.

- `GET /` the page; `GET /page.js` its script
- `POST /runs` {"messages", "conversation_id"?, "deadline"? (seconds)} -> 201 {"id", "status"}
- `GET /runs/{id}` -> {"id", "conversation_id", "status", "stop_reason", "messages", "pending", "metrics"}
- `GET /runs/{id}/events` -> text/event-stream, each event with its `id:`; from `Last-Event-ID` on (or
  `?after=N`), so a browser that reconnects misses nothing and sees nothing twice; ends after `run_finished`
- `POST /runs/{id}/approvals/{tool_call_id}` {"decision": approve | deny | edit, "reason"?, "arguments"?}
  -> 200; 409 when that call is not pending (decided already, or never asked)
- `POST /runs/{id}/cancel` -> 202 {"id", "status": "cancelling"}: the run stops within about a second, a tool
  call in flight abandoned after its grace (its answer says so); 409 when the run has ended
- `GET /stats?window=SECONDS` (default 3600, 1 to 30 days) -> the calls of every run in that window, per tool
  and per model: counts, errors, success rate, p50/p95 durations (RunStats' report)

Errors are JSON, `{"error": {"field", "message"}}`: 400 for a body that is not JSON, 422 for a bad field,
404 for an unknown run.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from ..loop.events import SSE_HEADERS, sse_comment, sse_encode
from . import bodies
from .durable import DurableRuns, DurableRunsError
from .page import PAGE_HTML, PAGE_SCRIPT
from .stats import parse_window, stored_stats

# How long a stream reader stays quiet before a keep-alive comment.
_KEEP_ALIVE_SECONDS = 15.0


# Event ids are the database's 64-bit integers: a larger cursor is no id (and the database refuses to compare it).
_LARGEST_ID = 2**63 - 1
# A run in one of these has written its last event.
_ENDED = frozenset({"finished", "error", "stopped"})


def _last_event_id(request: Any) -> int | None:
    """The cursor a reader gives (digits only: int() would also take `+3`, `1_0` and ` 7`), or None."""
    raw = request.headers.get("last-event-id") or request.query_params.get("after")
    if raw is None or raw == "":
        return 0
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 19:
        return None
    value = int(raw)
    return value if value <= _LARGEST_ID else None


def service_app(runs: DurableRuns) -> Any:
    """The Starlette app serving `runs`; needs the `serve` extra (starlette, uvicorn)."""
    try:
        from starlette.applications import Starlette
        from starlette.exceptions import HTTPException
        from starlette.requests import ClientDisconnect, Request
        from starlette.responses import (
            HTMLResponse,
            JSONResponse,
            Response,
            StreamingResponse,
        )
        from starlette.routing import Route
    except ModuleNotFoundError as error:
        if error.name != "starlette":
            raise
        raise DurableRunsError(
            "the HTTP service needs Starlette, the `serve` extra: pip install starlette"
        ) from None
    store = runs.store

    def _error(status: int, field: str, message: str) -> Response:
        return JSONResponse({"error": {"field": field, "message": message}}, status)

    def _refused(error: bodies.BodyError) -> Response:
        status = (
            413
            if isinstance(error, bodies.BodyTooLarge)
            else 422
            if error.field
            else 400
        )
        return JSONResponse(error.to_json(), status)

    async def _body(request: Request) -> Any:
        """The body as JSON, read only up to its limit: a larger one is refused as it comes, not held whole."""
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > bodies.MAX_BODY_BYTES:
            raise bodies.BodyTooLarge()
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > bodies.MAX_BODY_BYTES:
                raise bodies.BodyTooLarge()
            chunks.append(chunk)
        return bodies.parse_json_body(b"".join(chunks))

    async def http_error(request: Request, error: Exception) -> Response:
        # Starlette's own 404 and 405 (no route, a method a route does not take) in the service's JSON shape.
        status = error.status_code if isinstance(error, HTTPException) else 500
        detail = error.detail if isinstance(error, HTTPException) else "internal error"
        return _error(status, "", str(detail))

    def page(request: Request) -> Response:
        return HTMLResponse(PAGE_HTML)

    def script(request: Request) -> Response:
        return Response(PAGE_SCRIPT, media_type="text/javascript; charset=utf-8")

    async def start(request: Request) -> Response:
        try:
            asked = bodies.new_run(await _body(request))
        except bodies.BodyError as error:
            return _refused(error)
        except ClientDisconnect:
            return Response(status_code=400)  # nobody is left to read it
        run_id = await asyncio.to_thread(
            lambda: runs.start(
                asked.messages, asked.conversation_id, deadline=asked.deadline
            )
        )
        return JSONResponse({"id": run_id, "status": "running"}, 201)

    def state(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        run = store.run(run_id)
        if run is None:
            return _error(404, "/id", f"no run {run_id!r}")
        return JSONResponse(
            {
                "id": run.id,
                "conversation_id": run.conversation_id,
                "status": run.status,
                "stop_reason": run.state.get("stop_reason"),
                "messages": run.state.get("messages") or [],
                "pending": store.pending(run_id) if run.status != "finished" else [],
                "metrics": run.state.get("metrics"),
            }
        )

    async def events(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        run = await asyncio.to_thread(store.run, run_id)
        if run is None:
            return _error(404, "/id", f"no run {run_id!r}")
        conversation = run.conversation_id
        after = _last_event_id(request)
        if after is None:
            return _error(
                422, "Last-Event-ID", "Last-Event-ID must be a whole number below 2**63"
            )
        if (
            request.method == "HEAD"
        ):  # the headers alone: a stream that no one reads would never end
            return Response(headers=dict(SSE_HEADERS))
        if run.status in _ENDED and not await asyncio.to_thread(
            store.events_after, run_id, after, 1
        ):
            # Nothing past the cursor of a run that has ended: 204 tells EventSource to stop reconnecting.
            return Response(status_code=204)

        async def stream() -> AsyncIterator[str]:
            # Woken when the run's events are stored (by this process, or on Postgres by any); unwoken it
            # looks again every wakeups.poll_seconds (another process's writes on SQLite). The watch opens
            # before the first read, so an event stored between a read and the wait is not waited for.
            wakeups, page = store.wakeups, 500
            clock = asyncio.get_running_loop().time
            seen, sent = after, clock()
            with wakeups.watch(run_id) as watch:
                while True:
                    found = await asyncio.to_thread(
                        store.events_after, run_id, seen, page
                    )
                    for stored in found:
                        seen = stored.seq
                        yield sse_encode(stored.event(conversation))
                        if stored.type == "run_finished":
                            return
                    if found:
                        sent = clock()
                    if len(found) == page:
                        continue  # more may be there already
                    if await request.is_disconnected():
                        return
                    quiet = clock() - sent
                    if quiet >= _KEEP_ALIVE_SECONDS:
                        yield sse_comment("keep-alive")
                        sent, quiet = clock(), 0.0
                    await watch.wait(
                        min(wakeups.poll_seconds, _KEEP_ALIVE_SECONDS - quiet)
                    )

        return StreamingResponse(stream(), headers=dict(SSE_HEADERS))

    async def decide(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        call_id = request.path_params["call_id"]
        try:
            answer = bodies.approval(await _body(request))
        except bodies.BodyError as error:
            return _refused(error)
        except ClientDisconnect:
            return Response(status_code=400)
        if await asyncio.to_thread(store.run, run_id) is None:
            return _error(404, "/id", f"no run {run_id!r}")
        if not await asyncio.to_thread(runs.decide, run_id, call_id, answer):
            return _error(
                409,
                "/tool_call_id",
                f"call {call_id!r} of run {run_id!r} is not awaiting approval "
                "(decided already, or never asked)",
            )
        return JSONResponse({"id": call_id, "decision": answer.decision})

    async def stats(request: Request) -> Response:
        window = parse_window(request.query_params.get("window"))
        if window is None:
            return _error(
                422,
                "window",
                "window must be a number of seconds from 1 to 2592000 (30 days)",
            )
        report = await asyncio.to_thread(stored_stats, store, window)
        return JSONResponse(report.to_json())

    async def cancel(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        status = await asyncio.to_thread(runs.cancel, run_id)
        if status is None:
            return _error(404, "/id", f"no run {run_id!r}")
        if status in _ENDED:
            return _error(409, "/id", f"run {run_id!r} has ended ({status})")
        return JSONResponse({"id": run_id, "status": "cancelling"}, 202)

    routes = [
        Route("/", page, methods=["GET"]),
        Route("/page.js", script, methods=["GET"]),
        Route("/runs", start, methods=["POST"]),
        Route("/runs/{run_id}", state, methods=["GET"]),
        Route("/runs/{run_id}/events", events, methods=["GET"]),
        Route("/runs/{run_id}/approvals/{call_id}", decide, methods=["POST"]),
        Route("/runs/{run_id}/cancel", cancel, methods=["POST"]),
        Route("/stats", stats, methods=["GET"]),
    ]
    return Starlette(
        routes=routes,
        exception_handlers={HTTPException: http_error, Exception: http_error},
    )
