# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The HTTP service over durable runs, a Starlette app: start a run, read it, stream its events, decide calls.

- `GET /` the page; `GET /page.js` its script: static, served without a credential
- `POST /session` {"token"} -> 204 and a session cookie (HttpOnly, SameSite=Strict) standing for the token;
  401 for a wrong token, 429 for one past 10 wrong ones a minute from its address (a valid token is always let
  in); `DELETE /session` -> 204, logged out
- `POST /runs` {"messages", "conversation_id"?, "deadline"? (seconds)} -> 201 {"id", "status"} (right `start`),
  answered once the run is recorded (its workflow starts after the answer; if the server dies first, at its next
  start); 429 while the credential's holder has as many runs open (running or awaiting approval) as the service
  allows; 422 at /deadline for a deadline longer than the service's own (its deadline caps every run's)
- `GET /runs?limit=N&before=ID` -> {"runs": [{"id", "conversation_id", "status", "stop_reason", "created",
  "prompt", "error"}], "next"}: newest first, N from 1 to 100 (default 20), `prompt` the first user message's text (at
  most 200 characters), `next` the `before` of the page after this one, or null (right `read`)
- `GET /runs/{id}` -> {"id", "conversation_id", "status", "stop_reason", "messages", "pending", "metrics",
  "error"}: `error` the {"type", "message", "code", "status"} of the fatal `error` event that stopped the run
  (null when it did not stop with `error`, or its row was stored before the field was kept)
- `GET /runs/{id}/events` -> text/event-stream, each event with its `id:`; from `Last-Event-ID` on (or
  `?after=N`), so a browser that reconnects misses nothing and sees nothing twice; ends after `run_finished`.
  Each event is sent as the SSE text it was stored with (the same bytes live and after a restart), the events of
  one read of the store in one chunk
- `POST /runs/{id}/approvals/{tool_call_id}` {"decision": approve | deny | edit, "reason"?, "arguments"? (an
  edit's only)} -> 200; 409 when that call is not pending (decided already, or never asked) or its run is being
  cancelled, is past its deadline (even before the run has written its denial) or has ended (right `decide`)
- `POST /runs/{id}/cancel` -> 202 {"id", "status": "cancelling"}: the run stops within about a second, a tool
  call in flight abandoned after its grace (its answer says so); 409 when the run has ended (right `cancel`)
- `GET /stats?window=SECONDS` (default 3600, 1 to 30 days) -> the calls of every run in that window, per tool
  and per model: counts, errors, success rate, p50/p95 durations (RunStats' report)
- `GET /info` -> {"package", "version", "model": {"wire", "name", "offline"}, "tools": [{"name",
  "description"}], "rights"}: what the page shows of the service, and what the caller may do

Every other route needs a credential (auth.py): `Authorization: Bearer TOKEN` or the session cookie, with the
right named above (`read` where none is). Errors are JSON, `{"error": {"field", "message"}}`: 400 for a body that
is not JSON, 401 without a valid credential (with `WWW-Authenticate: Bearer`), 403 for a missing right or a
request from outside the boundary (a foreign Origin, a cookie without Origin on a POST or DELETE), 404 for an unknown
run, 415 for a body not sent as `application/json` (refused before it is read), 421 for a foreign Host, 422 for
a bad field, 429 for wrong tokens past the limit or too many open runs. A stored run is read without an error
for what an earlier release kept (bodies.answer_json). A conversation ending in an assistant turn whose tool
calls no tool message answers would run them at once, with no model call: refused (422 at its tool_calls)
unless the app is made with allow_client_tool_calls=True.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import inspect
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any

from ..extras import missing_extra
from ..loop.events import SSE_HEADERS, sse_comment
from . import bodies
from .auth import (
    RIGHTS,
    Authenticate,
    Credential,
    Refusal,
    Rights,
    TokenAuth,
    Tokens,
    ambient_refusal,
    granted_credential,
    open_access,
)
from .boundary import Boundary, BoundaryMiddleware
from .durable import DeadlineAboveLimit, DurableRuns, OpenRunsLimit
from .page import PAGE_HTML, PAGE_SCRIPT
from .run_record import stored_error
from .stats import parse_window, stored_stats

# How long a stream reader stays quiet before a keep-alive comment.
_KEEP_ALIVE_SECONDS = 15.0
# Events a stream reads (and sends as one chunk) at a time.
_PAGE = 1000
# How the SSE text of the event that ends a run's stream begins.
_FINISHED = "event: run_finished\n"


# Event ids are the database's 64-bit integers: a larger cursor is no id (and the database refuses to compare it).
_LARGEST_ID = 2**63 - 1
# A run in one of these has written its last event.
_ENDED = frozenset({"finished", "error", "stopped"})
# The package this runtime is part of (`toolgen` itself, or a generated package).
_PACKAGE = __name__.split(".")[0]


def _last_event_id(request: Any) -> tuple[int | None, str]:
    """The cursor a reader gives (digits only: int() would also take `+3`, `1_0` and ` 7`), or None; and where it
    was given (the header, or the query's `after`), to name in an error."""
    raw, field = request.headers.get("last-event-id"), "Last-Event-ID"
    if not raw:
        raw, field = request.query_params.get("after"), "after"
    if raw is None or raw == "":
        return 0, field
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 19:
        return None, field
    value = int(raw)
    return (value if value <= _LARGEST_ID else None), field


def _end_of(found: list[str]) -> int | None:
    """How many of these events to send when `run_finished` is among them (the stream ends after it), else None."""
    if found[-1].startswith(_FINISHED):
        return len(found)
    for index, text in enumerate(found):
        if text.startswith(_FINISHED):
            return index + 1
    return None


def _seq_of(text: str) -> int:
    """The seq of an event's SSE text: its second line is `id: <seq>`."""
    return int(text.split("\n", 2)[1][4:])


def page_policy() -> str:
    """The page's Content-Security-Policy: its own script only; inline styles only when the page has some."""
    inline = "<style" in PAGE_HTML or "style=" in PAGE_HTML
    style = "'self' 'unsafe-inline'" if inline else "'self'"
    return (
        f"default-src 'self'; script-src 'self'; style-src {style}; object-src 'none'; "
        "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
    )


def _version(package: str) -> str | None:
    for name in (package, package.replace("_", "-")):
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    found = getattr(sys.modules.get(package), "__version__", None)
    return found if isinstance(found, str) else None


def service_info(
    runs: Any, rights: Rights, version: str | None = None
) -> dict[str, Any]:
    """GET /info: the package, the model (wire and name, or the offline demo), the tools, the caller's rights."""
    model = getattr(runs, "model", None)
    wire, name = getattr(model, "wire", None), getattr(model, "model", None)
    # Known by name: the service does not import the app's demo to ask isinstance.
    if type(model).__name__ == "PromptedModel":
        described: dict[str, Any] = {
            "wire": None,
            "name": "offline demo",
            "offline": True,
        }
    else:
        described = {
            "wire": wire if isinstance(wire, str) else None,
            "name": name if isinstance(name, str) else type(model).__name__,
            "offline": False,
        }
    registry = getattr(runs, "registry", None)
    tools = [
        {"name": str(d.get("name", "")), "description": str(d.get("description") or "")}
        for d in (registry.definitions() if registry is not None else ())
    ]
    return {
        "package": _PACKAGE,
        "version": version,
        "model": described,
        "tools": tools,
        "rights": [right for right in RIGHTS if right in rights],
    }


def service_app(
    runs: DurableRuns,
    *,
    auth: Authenticate | None = None,
    hosts: Iterable[str] | None = None,
    origins: Iterable[str] = (),
    allow_client_tool_calls: bool = False,
) -> Any:
    """The Starlette app serving `runs`; needs the `serve` extra (starlette, uvicorn).

    `auth`: a TokenAuth (tokens and their rights, with the page's sessions), the operator's own Authenticate
    (the request in, the rights granted or None out), or `open_access`; None refuses every request. `hosts`:
    the Host values it answers (HOST:PORT, or HOST for any port; default the loopback names on any port);
    `origins`: more Origins to take besides those of `hosts` (http and https)."""
    try:
        from starlette.applications import Starlette  # type: ignore[import-not-found,unused-ignore]
        from starlette.background import BackgroundTask  # type: ignore[import-not-found,unused-ignore]
        from starlette.exceptions import HTTPException  # type: ignore[import-not-found,unused-ignore]
        from starlette.middleware import Middleware  # type: ignore[import-not-found,unused-ignore]
        from starlette.requests import ClientDisconnect, Request  # type: ignore[import-not-found,unused-ignore]
        from starlette.responses import (  # type: ignore[import-not-found,unused-ignore]
            HTMLResponse,
            Response,
            StreamingResponse,
        )
        from starlette.responses import JSONResponse as PlainJSON  # type: ignore[import-not-found,unused-ignore]
        from starlette.routing import Route  # type: ignore[import-not-found,unused-ignore]
    except ImportError as error:
        named = missing_extra(error, "serve", "The HTTP service")
        if named is None:
            raise
        raise named from None

    class JSONResponse(PlainJSON):  # type: ignore[misc,unused-ignore]
        # A run an earlier release stored may hold what UTF-8 or JSON cannot carry: never a 500 (bodies.py).
        def render(self, content: Any) -> bytes:
            return bodies.answer_json(content)

    store = runs.store
    authenticate: Authenticate = auth if auth is not None else TokenAuth(Tokens({}))
    boundary = Boundary(hosts, origins)
    page_headers = {"Content-Security-Policy": page_policy()}
    version = _version(_PACKAGE)

    def _error(
        status: int, field: str, message: str, headers: dict[str, str] | None = None
    ) -> Response:
        error = {"field": bodies.readable(field), "message": bodies.readable(message)}
        return JSONResponse({"error": error}, status, headers=headers)

    def _refusal(refusal: Refusal) -> Response:
        headers = {}
        if refusal.status == 401:
            headers["WWW-Authenticate"] = "Bearer"
        if refusal.retry_after is not None:
            headers["Retry-After"] = str(refusal.retry_after)
        return _error(refusal.status, refusal.field, refusal.message, headers)

    def _refused(error: bodies.BodyError) -> Response:
        status = (
            413
            if isinstance(error, bodies.BodyTooLarge)
            else 422
            if error.field
            else 400
        )
        return JSONResponse(error.to_json(), status)

    def _not_json(request: Request) -> Response | None:
        if bodies.is_json_type(request.headers.get("content-type")):
            return None
        return _error(
            415,
            "Content-Type",
            "the body must be sent as Content-Type: application/json",
        )

    async def _body(request: Request, limit: int = bodies.MAX_BODY_BYTES) -> Any:
        """The body as JSON, read only up to its limit: a larger one is refused as it comes, not held whole."""
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise bodies.BodyTooLarge(limit)
        # One buffer, let go of once decoded: the body is held as bytes or as text, never both with its parts.
        buffer = bytearray()
        async for chunk in request.stream():
            if len(buffer) + len(chunk) > limit:
                raise bodies.BodyTooLarge(limit)
            buffer += chunk
        text = bodies.body_text(buffer)
        del buffer
        return bodies.parse_json_body(text)

    async def _credential(request: Request) -> Credential | Refusal:
        if isinstance(authenticate, TokenAuth):
            return authenticate.check(request)
        granted = authenticate(request)
        if inspect.isawaitable(granted):
            granted = await granted
        if granted is None:
            return Refusal(401, "this service's authentication refused the request")
        if authenticate is not open_access and "authorization" not in request.headers:
            # Whatever the operator's authentication read, a browser may have sent it by itself.
            refused = ambient_refusal(request)
            if refused is not None:
                return refused
        return granted_credential(granted)

    def guarded(
        handler: Callable[[Request], Awaitable[Response]],
        right: str,
        *,
        json_body: bool = False,
    ) -> Callable[[Request], Awaitable[Response]]:
        """`handler` for a caller holding `right`; with `json_body`, only for a body sent as JSON."""

        async def endpoint(request: Request) -> Response:
            credential = await _credential(request)
            if isinstance(credential, Refusal):
                return _refusal(credential)
            if right not in credential.rights:
                return _error(403, "", f"this credential lacks the `{right}` right")
            if json_body and (refused := _not_json(request)) is not None:
                return refused
            request.state.credential = credential
            return await handler(request)

        return endpoint

    async def http_error(request: Request, error: Exception) -> Response:
        # Starlette's own 404 and 405 (no route, a method a route does not take) in the service's JSON shape.
        if not isinstance(error, HTTPException):
            return _error(500, "", "internal error")
        # A 405's `Allow` (the methods the route takes) comes in the exception's headers.
        headers = dict(error.headers) if error.headers else None
        return _error(error.status_code, "", str(error.detail), headers)

    def page(request: Request) -> Response:
        return HTMLResponse(PAGE_HTML, headers=page_headers)

    def script(request: Request) -> Response:
        return Response(
            PAGE_SCRIPT,
            media_type="text/javascript; charset=utf-8",
            headers=page_headers,
        )

    async def session(request: Request) -> Response:
        secure = request.url.scheme == "https"
        if request.method == "DELETE":
            ended = Response(status_code=204)
            if isinstance(authenticate, TokenAuth):
                if (
                    "authorization" not in request.headers
                    and request.cookies.get(authenticate.cookie)
                    and (ambient := ambient_refusal(request))
                ):
                    # A logout another site's page could cause by itself, as any unsafe request carrying only
                    # the cookie: refused without an Origin (the boundary judges one that is given).
                    return _refusal(ambient)
                authenticate.logout(request)
                ended.headers["Set-Cookie"] = authenticate.clear_cookie(secure)
            return ended
        refused = _not_json(request)
        if refused is not None:
            return refused
        if not isinstance(authenticate, TokenAuth):
            # The operator's authentication judges every request itself: there is no session to open.
            credential = await _credential(request)
            if isinstance(credential, Refusal):
                return _refusal(credential)
            return Response(status_code=204)
        try:
            token = bodies.session_token(
                await _body(request, bodies.MAX_SESSION_BODY_BYTES)
            )
        except bodies.BodyError as error:
            return _refused(error)
        except ClientDisconnect:
            return Response(status_code=400)
        opened = authenticate.login(token, request)
        if isinstance(opened, Refusal):
            return _refusal(opened)
        answer = Response(status_code=204)
        answer.headers["Set-Cookie"] = authenticate.set_cookie(opened, secure)
        return answer

    async def start(request: Request) -> Response:
        try:
            asked = bodies.new_run(
                await _body(request), allow_tool_calls=allow_client_tool_calls
            )
        except bodies.BodyError as error:
            return _refused(error)
        except ClientDisconnect:
            return Response(status_code=400)  # nobody is left to read it
        holder = request.state.credential.holder
        try:
            run_id = await asyncio.to_thread(
                lambda: runs.record(
                    asked.messages,
                    asked.conversation_id,
                    deadline=asked.deadline,
                    holder=holder,
                )
            )
        except OpenRunsLimit as error:
            return _error(429, "", str(error))
        except DeadlineAboveLimit as error:
            return _error(422, "/deadline", str(error))

        async def begin() -> None:
            # Hands the start to DBOS's event loop: nothing to wait for here.
            runs.begin(run_id)

        # Answered once the run is recorded; its workflow starts after the answer has gone (and, if this process
        # dies first, at the next launch).
        return JSONResponse(
            {"id": run_id, "status": "running"}, 201, background=BackgroundTask(begin)
        )

    async def listing(request: Request) -> Response:
        try:
            limit, before = bodies.run_list_query(
                request.query_params.get("limit"), request.query_params.get("before")
            )
        except bodies.BodyError as error:
            return _refused(error)
        if before is not None and await asyncio.to_thread(store.run, before) is None:
            return _error(
                422, "before", f"no run {bodies.shown(before)} to list the runs before"
            )
        # One more than asked: whether there is a page after this one.
        found = await asyncio.to_thread(store.list_runs, limit + 1, before)
        shown = found[:limit]
        following = shown[-1]["id"] if len(found) > limit else None
        return JSONResponse({"runs": shown, "next": following})

    async def state(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        run = await asyncio.to_thread(store.run, run_id)
        if run is None:
            return _error(404, "/id", f"no run {bodies.shown(run_id)}")
        pending = (
            await asyncio.to_thread(store.pending, run_id)
            if run.status != "finished"
            else []
        )
        answer = {
            "id": run.id,
            "conversation_id": run.conversation_id,
            "status": run.status,
            "stop_reason": run.state.get("stop_reason"),
            "messages": run.state.get("messages") or [],
            "pending": pending,
            "metrics": run.state.get("metrics"),
            # What ended a run stopped by `error`; null when none was recorded (so for a row stored before).
            "error": stored_error(run.state),
        }
        if run.state.get(
            "notes"
        ):  # what the store wrote as null (store_rows.state_dumps), and where
            answer["notes"] = run.state["notes"]
        return JSONResponse(answer)

    async def events(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        after, field = _last_event_id(request)
        head, first = await asyncio.to_thread(
            store.replay_start, run_id, after or 0, _PAGE
        )
        if head is None:
            return _error(404, "/id", f"no run {bodies.shown(run_id)}")
        conversation, status = head
        if after is None:
            return _error(422, field, f"{field} must be a whole number below 2**63")
        if (
            request.method == "HEAD"
        ):  # the headers alone: a stream that no one reads would never end
            return Response(headers=dict(SSE_HEADERS))
        if status in _ENDED and not first:
            # Nothing past the cursor of a run that has ended: 204 tells EventSource to stop reconnecting.
            return Response(status_code=204)
        # A cursor past the run's last event (a reader's own number) may be past its run_finished too: such a
        # stream reads the run's status with its events, to end with the run as that cursor's next request would.
        ahead = not first and after > await asyncio.to_thread(store.last_seq, run_id)

        async def stream() -> AsyncIterator[str]:
            # Woken when the run's events are stored (by this process, or on Postgres by any); unwoken it
            # looks again every wakeups.poll_seconds (another process's writes on SQLite). It reads once more
            # as soon as its watch is open, so an event stored between a read and the wait is not waited for.
            # Each read's events go out as one chunk, the SSE text each was given when it was stored.
            wakeups, clock = store.wakeups, asyncio.get_running_loop().time
            seen, sent, found, watched = after, clock(), first, False
            with wakeups.watch(run_id) as watch:
                while True:
                    if found:
                        seen = _seq_of(found[-1])
                        end = _end_of(found)
                        yield "".join(found[:end])
                        if end is not None:
                            return
                        sent = clock()
                    if watched and len(found) < _PAGE:
                        if await request.is_disconnected():
                            return
                        quiet = clock() - sent
                        if quiet >= _KEEP_ALIVE_SECONDS:
                            yield sse_comment("keep-alive")
                            sent, quiet = clock(), 0.0
                        await watch.wait(
                            min(wakeups.poll_seconds, _KEEP_ALIVE_SECONDS - quiet)
                        )
                    if ahead:
                        head, found = await asyncio.to_thread(
                            store.replay_start, run_id, seen, _PAGE
                        )
                        if head is None or (head[1] in _ENDED and not found):
                            return
                    else:
                        found = await asyncio.to_thread(
                            store.sse_after, run_id, conversation, seen, _PAGE
                        )
                    watched = True

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
        run = await asyncio.to_thread(store.run, run_id)
        if run is None:
            return _error(404, "/id", f"no run {bodies.shown(run_id)}")
        if run.status in _ENDED:
            return _error(409, "/id", f"run {run_id!r} has ended ({run.status})")
        refused = await asyncio.to_thread(
            runs.refused_decision, run_id, call_id, answer
        )
        if refused is not None:
            if refused == "cancelled" or await asyncio.to_thread(
                store.cancel_requested, run_id
            ):
                # The run denies its pending calls as it stops: a decision now would not be the one it records.
                return _error(
                    409,
                    "/id",
                    f"run {run_id!r} is being cancelled: it takes no more decisions",
                )
            if refused == "deadline":
                return _error(
                    409,
                    "/id",
                    f"the deadline of run {run_id!r} passed before a decision on call "
                    f"{bodies.shown(call_id)}: the run denies it, and takes no decision now",
                )
            return _error(
                409,
                "/tool_call_id",
                f"call {bodies.shown(call_id)} of run {run_id!r} is not awaiting approval "
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
            return _error(404, "/id", f"no run {bodies.shown(run_id)}")
        if status in _ENDED:
            return _error(409, "/id", f"run {run_id!r} has ended ({status})")
        return JSONResponse({"id": run_id, "status": "cancelling"}, 202)

    async def info(request: Request) -> Response:
        rights: Rights = request.state.credential.rights
        return JSONResponse(
            await asyncio.to_thread(service_info, runs, rights, version)
        )

    start_run, list_runs = (
        guarded(start, "start", json_body=True),
        guarded(listing, "read"),
    )

    async def runs_root(request: Request) -> Response:
        # One route for both: a 405 there names both methods in its `Allow` (Starlette names one route's).
        return await (start_run if request.method == "POST" else list_runs)(request)

    routes = [
        Route("/", page, methods=["GET"]),
        Route("/page.js", script, methods=["GET"]),
        Route("/session", session, methods=["POST", "DELETE"]),
        Route("/runs", runs_root, methods=["GET", "POST"]),
        Route("/runs/{run_id}", guarded(state, "read"), methods=["GET"]),
        Route("/runs/{run_id}/events", guarded(events, "read"), methods=["GET"]),
        Route(
            "/runs/{run_id}/approvals/{call_id}",
            guarded(decide, "decide", json_body=True),
            methods=["POST"],
        ),
        Route("/runs/{run_id}/cancel", guarded(cancel, "cancel"), methods=["POST"]),
        Route("/stats", guarded(stats, "read"), methods=["GET"]),
        Route("/info", guarded(info, "read"), methods=["GET"]),
    ]
    return Starlette(
        routes=routes,
        middleware=[
            Middleware(BoundaryMiddleware, boundary=boundary),
        ],
        exception_handlers={HTTPException: http_error, Exception: http_error},
    )
