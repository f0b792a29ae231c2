"""API keys never leave a model client, model calls keep a wall-clock deadline, sync handlers run on the registry's pool.

Every server here is a real HTTP server on 127.0.0.1, in a thread: one echoes the credentials it was sent back
in its error bodies (JSON, plain text, cut short, URL-encoded, inside a stream), one drips its body a byte at
a time. The bounds on time are generous: they prove a deadline was kept, not how fast anything is.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import textwrap
import threading
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import fields, is_dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from toolgen import runtime as rt

KEY = "sk-test-Zq8/Lm+4Rt9=Vw2kXy7Pa0Jh3"
OTHER_KEY = "gw-Hq5tY2uXk9Lp0Wm3Rb7N"
CREDENTIALS = ("authorization", "x-api-key", "api-key", "x-goog-api-key", "x-gateway-key")


def _echoed(handler: BaseHTTPRequestHandler) -> list[str]:
    """The credentials of the request, the scheme word of Authorization left off."""
    values = []
    for name in CREDENTIALS:
        value = handler.headers.get(name)
        if value:
            values.append(value.split()[-1])
    return values


def _body(mode: str, secrets: list[str]) -> tuple[int, str, bytes]:
    """The status, content type and body a careless server sends back, each echoing the keys its own way."""
    joined = " ".join(secrets)
    if mode == "json":
        detail = {"message": f"Invalid API key: {joined}", "type": "invalid_request_error", "code": joined}
        body = {"error": detail, "request": {"headers": {"Authorization": f"Bearer {joined}"}, "key": joined}}
        return 401, "application/json", json.dumps(body).encode()
    if mode == "text":
        return 401, "text/plain", f"denied for key={joined}\n".encode()
    if mode == "partial":
        masked = " ".join(f"{s[:12]}****{s[-6:]}" for s in secrets)
        body = {"error": {"message": f"Incorrect API key provided: {masked}.", "type": "auth"}}
        return 401, "application/json", json.dumps(body).encode()
    if mode == "urlencoded":
        quoted = " ".join(urllib.parse.quote(s, safe="") for s in secrets)
        return 403, "text/html", f"<a href='/retry?key={quoted}'>forbidden</a>".encode()
    if mode == "stream":
        event = {"error": {"message": f"key {joined} revoked", "type": "auth", "code": joined}}
        return 200, "text/event-stream", f"data: {json.dumps(event)}\n\n".encode()
    if mode == "garbled":
        # Frames that do not parse: their text goes into the stream's errors, which the final message keeps.
        return 200, "text/event-stream", f'data: {{"x": "{joined}"\n\ndata: not json {joined}\n\n'.encode()
    raise AssertionError(mode)


class _EchoHandler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - the name http.server calls
        self.rfile.read(int(self.headers.get("content-length") or 0))
        status, kind, body = _body(self.path.split("/")[1], _echoed(self))
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _DripHandler(BaseHTTPRequestHandler):
    """200, then a byte every DRIP_EVERY seconds for a minute: each read is quick, the whole response never ends."""

    def do_POST(self) -> None:  # noqa: N802 - the name http.server calls
        self.rfile.read(int(self.headers.get("content-length") or 0))
        streaming = "event-stream" in (self.headers.get("accept") or "")
        self.send_response(200)
        self.send_header("content-type", "text/event-stream" if streaming else "application/json")
        self.end_headers()
        try:
            for _ in range(DRIPS):
                self.wfile.write(b"\n" if streaming else b" ")
                self.wfile.flush()
                time.sleep(DRIP_EVERY)
        except OSError:
            pass  # the client gave up: the point of the test

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _LateStallHandler(BaseHTTPRequestHandler):
    """200 and a first line of the stream, one more byte just before the client's deadline, then silence."""

    def do_POST(self) -> None:  # noqa: N802 - the name http.server calls
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        try:
            self.wfile.write(b": open\n")
            self.wfile.flush()
            time.sleep(STALL_AFTER)
            self.wfile.write(b"\n")
            self.wfile.flush()
            time.sleep(30)
        except OSError:
            pass

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _HeaderDripHandler(BaseHTTPRequestHandler):
    """A status line and then a header a byte every DRIP_EVERY seconds: the response never gets as far as a body."""

    def do_POST(self) -> None:  # noqa: N802 - the name http.server calls
        self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            self.wfile.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
            for _ in range(DRIPS):
                self.wfile.write(b"a")
                self.wfile.flush()
                time.sleep(DRIP_EVERY)
        except OSError:
            pass

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _serve(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def echo() -> Iterator[str]:
    yield from _serve(_EchoHandler)


@pytest.fixture
def drip() -> Iterator[str]:
    yield from _serve(_DripHandler)


@pytest.fixture
def late_stall() -> Iterator[str]:
    yield from _serve(_LateStallHandler)


@pytest.fixture
def header_drip() -> Iterator[str]:
    yield from _serve(_HeaderDripHandler)


REQUEST = rt.Request(messages=[{"role": "user", "content": "hi"}])
NO_RETRY = rt.RetryPolicy(max_retries=0)


def _assert_clean(*texts: str, secrets: tuple[str, ...] = (KEY,)) -> None:
    for text in texts:
        for secret in secrets:
            for form in (secret, urllib.parse.quote(secret, safe=""), secret[:12], secret[-10:]):
                assert form not in text, f"{form!r} leaked into {text!r}"


def _texts(value: Any) -> list[str]:
    """Every way a value can be shown: str, repr, and for errors and events each field as JSON."""
    out = [str(value), repr(value)]
    if isinstance(value, BaseException):
        out += [repr(value.args), *(repr(getattr(value, name, None)) for name in ("message", "raw", "code", "type"))]
    if is_dataclass(value) and not isinstance(value, type):
        out += [repr(getattr(value, f.name)) for f in fields(value)]
        out += [t for f in fields(value) for t in _texts(getattr(value, f.name))[:2]]
    return out


MODES = ("json", "text", "partial", "urlencoded")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("wire", ["openai-chat", "anthropic", "gemini"])
def test_a_key_echoed_in_an_error_body_is_redacted_everywhere(echo: str, mode: str, wire: str) -> None:
    model = rt.HTTPModel(f"{echo}/{mode}", "m", wire=wire, api_key=KEY, retry=NO_RETRY)
    try:
        with pytest.raises(rt.ProviderError) as raised:
            model.complete(REQUEST)
        error = raised.value
        assert error.status in (401, 403)
        _assert_clean(*_texts(error), json.dumps(error.raw), json.dumps(error.to_json()))
        assert "***" in error.message or "***" in json.dumps(error.raw)
        streamed = list(model.stream(REQUEST))
        for event in streamed:
            _assert_clean(*_texts(event))
        assert isinstance(streamed[-1], rt.MessageEnd) and not streamed[-1].complete
    finally:
        model.close()


@pytest.mark.parametrize("mode", MODES)
def test_keys_given_as_extra_headers_in_any_case_are_redacted_too(echo: str, mode: str) -> None:
    headers = {"X-Gateway-Key": "not a credential header", "Authorization": f"Bearer {KEY}", "API-KEY": OTHER_KEY}
    model = rt.HTTPModel(f"{echo}/{mode}", "m", headers=headers, retry=NO_RETRY)
    try:
        with pytest.raises(rt.ProviderError) as raised:
            model.complete(REQUEST)
        _assert_clean(*_texts(raised.value), json.dumps(raised.value.raw), secrets=(KEY, OTHER_KEY))
    finally:
        model.close()
    _assert_clean(repr(model), str(vars(model).get("_redactor")), secrets=(KEY, OTHER_KEY))


@pytest.mark.parametrize("mode", ["stream", "garbled"])
@pytest.mark.parametrize("wire", ["openai-chat", "anthropic", "gemini", "openai-responses", "cohere", "ollama"])
def test_a_key_echoed_inside_a_stream_is_redacted_from_its_events(echo: str, mode: str, wire: str) -> None:
    model = rt.HTTPModel(f"{echo}/{mode}", "m", wire=wire, api_key=KEY, retry=NO_RETRY)
    try:
        events = list(model.stream(REQUEST))
    finally:
        model.close()
    errors = [e for e in events if isinstance(e, rt.StreamError)]
    assert errors, events
    for event in events:
        _assert_clean(*_texts(event))
    end = events[-1]
    assert isinstance(end, rt.MessageEnd)
    _assert_clean(json.dumps(getattr(end.response, "extras", None), default=repr))


def test_async_calls_redact_the_same(echo: str) -> None:
    model = rt.HTTPModel(f"{echo}/json", "m", wire="anthropic", api_key=KEY, retry=NO_RETRY)

    async def both() -> tuple[BaseException, list[Any]]:
        try:
            await model.acomplete(REQUEST)
        except rt.ProviderError as error:
            failure: BaseException = error
        else:  # pragma: no cover - the server always refuses
            raise AssertionError("no error")
        return failure, [event async for event in model.astream(REQUEST)]

    error, events = asyncio.run(both())
    _assert_clean(*_texts(error), json.dumps(getattr(error, "raw", None)))
    for event in [*events, *(e.response for e in events if isinstance(e, rt.MessageEnd))]:
        _assert_clean(*_texts(event))


@pytest.mark.parametrize(("mode", "stream"), [("json", False), ("json", True), ("garbled", True)])
def test_the_run_its_error_event_and_its_result_hold_no_key(echo: str, mode: str, stream: bool) -> None:
    model = rt.HTTPModel(f"{echo}/{mode}", "m", api_key=KEY, retry=NO_RETRY)
    tools = rt.Registry({})
    try:
        events = rt.run_events([{"role": "user", "content": "hi"}], model, tools, stream=stream)
        seen = list(events)
        result = events.result
        arun_result = asyncio.run(rt.arun([{"role": "user", "content": "hi"}], model, tools, stream=stream))
    finally:
        model.close()
    errors = [event for event in seen if event.type == "error"]
    assert errors and result.stop_reason == "error" and arun_result.stop_reason == "error"
    for event in seen:
        _assert_clean(json.dumps(event.data, default=repr), repr(event))
    for outcome in (result, arun_result):
        _assert_clean(repr(outcome), *_texts(outcome.error))


def test_the_redactor_keeps_ordinary_text_and_masks_only_the_key() -> None:
    redactor = rt.HTTPModel("http://127.0.0.1:9", "m", api_key=KEY)._redactor
    assert redactor.text("model gpt-4o-mini not found (HTTP 404)") == "model gpt-4o-mini not found (HTTP 404)"
    assert redactor.text(f"key={KEY}, retry later") == "key=***, retry later"
    assert redactor.text(f"got {KEY[:12]}…{KEY[-4:]}") == "got ***…" + KEY[-4:]
    assert redactor.value({"k": [KEY, 1, None]}) == {"k": ["***", 1, None]}


@pytest.mark.parametrize("short", ["k", "test", "ollama", "sk-1234"])
def test_a_short_key_is_masked_where_it_stands_alone_not_inside_words(short: str) -> None:
    redactor = rt.HTTPModel("http://127.0.0.1:9", "m", api_key=short)._redactor
    text = "the call took more than 2 s; a testing ollama_host sk-12345 token"
    assert redactor.text(text) == text
    assert redactor.text(f"key={short}, retry") == "key=***, retry"
    assert redactor.text(f'{{"key": "{short}"}}') == '{"key": "***"}'
    assert redactor.text(short) == "***"


# ---- the deadline of a model call ----

# The call's deadline, five times the drip's pace: every read is quick, only the whole call can take too long.
CALL_TIMEOUT = 0.5
DRIP_EVERY, DRIPS = 0.1, 600  # a byte every 0.1 s for a minute
BOUND = 5.0  # seconds: the deadline plus room for a slow machine; without the deadline the drip holds 60 s
STALL_TIMEOUT, STALL_AFTER = 2.0, 1.8  # a byte just before the deadline restarts a per-read timeout of 2 s


def _dripping(drip: str, wire: str = "openai-chat") -> Any:
    return rt.HTTPModel(drip, "m", wire=wire, api_key=KEY, timeout=CALL_TIMEOUT, retry=NO_RETRY)


def test_a_dripping_endpoint_cannot_hold_a_sync_call_past_its_deadline(drip: str) -> None:
    model = _dripping(drip)
    try:
        started = time.monotonic()
        with pytest.raises(rt.ProviderError) as raised:
            model.complete(REQUEST)
        assert raised.value.type == "timeout" and time.monotonic() - started < BOUND
        started = time.monotonic()
        events = list(model.stream(REQUEST))
        assert time.monotonic() - started < BOUND
    finally:
        model.close()
    assert any(isinstance(e, rt.StreamError) and f"more than {CALL_TIMEOUT}" in e.message for e in events), events
    assert isinstance(events[-1], rt.MessageEnd) and not events[-1].complete


def test_a_stall_just_before_the_deadline_ends_the_sync_stream_at_the_deadline(late_stall: str) -> None:
    # Waiting for the next chunk only between chunks would hold the call a whole per-read timeout more
    # (until STALL_AFTER + STALL_TIMEOUT, 3.8 s, at the least); the deadline is 2 s.
    model = rt.HTTPModel(late_stall, "m", api_key=KEY, timeout=STALL_TIMEOUT, retry=NO_RETRY)
    try:
        started = time.monotonic()
        events = list(model.stream(REQUEST))
        held = time.monotonic() - started
    finally:
        model.close()
    assert held < STALL_AFTER + STALL_TIMEOUT - 0.5, held
    assert any(isinstance(e, rt.StreamError) and f"more than {STALL_TIMEOUT}" in e.message for e in events), events


def test_a_dripping_endpoint_cannot_hold_an_async_call_past_its_deadline(drip: str) -> None:
    model = _dripping(drip, "anthropic")

    async def both() -> tuple[BaseException | None, list[Any]]:
        failure = None
        try:
            await model.acomplete(REQUEST)
        except rt.ProviderError as error:
            failure = error
        return failure, [event async for event in model.astream(REQUEST)]

    started = time.monotonic()
    error, events = asyncio.run(both())
    assert time.monotonic() - started < 2 * BOUND
    assert isinstance(error, rt.ProviderError) and error.type == "timeout"
    assert any(isinstance(e, rt.StreamError) for e in events)
    assert isinstance(events[-1], rt.MessageEnd) and not events[-1].complete


def test_headers_dripped_a_byte_at_a_time_cannot_hold_a_call_either(header_drip: str) -> None:
    model = _dripping(header_drip)
    try:
        for call in (model.complete, lambda request: list(model.stream(request))):
            started = time.monotonic()
            try:
                events = call(REQUEST)
            except rt.ProviderError as error:
                assert error.type == "timeout"
            else:
                assert isinstance(events[-1], rt.MessageEnd) and events[-1].response.type == "timeout"
            assert time.monotonic() - started < BOUND
        started = time.monotonic()
        with pytest.raises(rt.ProviderError):
            asyncio.run(model.acomplete(REQUEST))
        assert time.monotonic() - started < BOUND
    finally:
        model.close()


@pytest.mark.parametrize("stream", [False, True])
def test_a_run_against_a_dripping_endpoint_ends_with_a_timeout(drip: str, stream: bool) -> None:
    model = _dripping(drip)
    tools = rt.Registry({})
    try:
        started = time.monotonic()
        result = rt.run([{"role": "user", "content": "hi"}], model, tools, stream=stream)
        assert time.monotonic() - started < BOUND
        started = time.monotonic()
        aresult = asyncio.run(rt.arun([{"role": "user", "content": "hi"}], model, tools, stream=stream))
        assert time.monotonic() - started < BOUND
    finally:
        model.close()
    assert result.stop_reason == "error" and aresult.stop_reason == "error"


def test_retries_stop_when_the_deadline_leaves_no_time_for_them(echo: str) -> None:
    # 401 is final anyway; a 5xx asking for a minute's wait must not be waited for past a 2 s deadline.
    model = rt.HTTPModel(f"{echo}/text", "m", api_key=KEY, timeout=2, retry=rt.RetryPolicy(max_retries=5))
    try:
        started = time.monotonic()
        with pytest.raises(rt.ProviderError):
            model.complete(REQUEST)
        assert time.monotonic() - started < BOUND
    finally:
        model.close()


# ---- sync handlers on the registry's pool ----

SCHEMA = {"type": "object"}


def _call(name: str, index: int) -> dict[str, Any]:
    return {"id": f"call_{name}_{index}", "type": "function", "function": {"name": name, "arguments": "{}"}}


def test_slow_sync_handlers_never_make_queued_fast_ones_time_out_unrun() -> None:
    ran: list[int] = []
    tools = rt.Registry({}, max_workers=8)
    tools.add("slow", SCHEMA, lambda args, ctx: time.sleep(0.15) or "slow")
    tools.add("fast", SCHEMA, lambda args, ctx: ran.append(1) or "fast", timeout=0.5)

    async def crowd() -> list[Any]:
        calls = [_call("slow", i) for i in range(85)] + [_call("fast", i) for i in range(5)]
        return await asyncio.gather(*(tools.adispatch(call) for call in calls))

    outcomes = asyncio.run(crowd())
    fast = [o for o in outcomes if o.name == "fast"]
    # 85 x 0.15 s on 8 threads queue the fast calls for over 1.5 s, past their 0.5 s timeout: it counts from the
    # start.
    assert [o.is_error for o in fast] == [False] * 5 and len(ran) == 5
    assert all(not o.is_error for o in outcomes)


def test_a_sync_dispatch_deadline_counts_from_when_the_handler_starts() -> None:
    tools = rt.Registry({}, max_workers=1)
    tools.add("slow", SCHEMA, lambda args, ctx: time.sleep(1.0) or "slow", timeout=10)
    tools.add("fast", SCHEMA, lambda args, ctx: "fast", timeout=0.5)
    slow = threading.Thread(target=tools.dispatch, args=(_call("slow", 0),))
    slow.start()
    time.sleep(0.2)  # the one thread is busy: the fast call waits for it, longer than its own timeout
    outcome = tools.dispatch(_call("fast", 0))
    slow.join()
    assert not outcome.is_error and outcome.content == "fast"


def test_an_abandoned_handler_gives_its_thread_back_to_the_pool() -> None:
    release = threading.Event()
    tools = rt.Registry({}, max_workers=1)
    tools.add("stuck", SCHEMA, lambda args, ctx: release.wait(30) and "late", timeout=0.2)
    tools.add("fast", SCHEMA, lambda args, ctx: "fast", timeout=2)
    try:
        assert tools.dispatch(_call("stuck", 0)).error.kind == "timeout"
        assert asyncio.run(tools.adispatch(_call("stuck", 1))).error.kind == "timeout"
        assert tools.dispatch(_call("fast", 0)).content == "fast"
        assert asyncio.run(tools.adispatch(_call("fast", 1))).content == "fast"
    finally:
        release.set()


def test_an_abandoned_sync_handler_never_keeps_the_interpreter_from_exiting() -> None:
    script = textwrap.dedent(
        """
        import asyncio, time
        from toolgen import runtime as rt

        tools = rt.Registry({})
        tools.add("stuck", {"type": "object"}, lambda args, ctx: time.sleep(120), timeout=0.2)
        call = {"id": "c", "type": "function", "function": {"name": "stuck", "arguments": "{}"}}
        print(tools.dispatch(call).error.kind, asyncio.run(tools.adispatch(call)).error.kind)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["timeout", "timeout"]


def test_a_pool_needs_a_thread() -> None:
    with pytest.raises(ValueError, match="at least one thread"):
        rt.Registry({}, max_workers=0)


def _deaf_handler(release: threading.Event) -> Any:
    """An async handler that swallows every cancellation until `release` is set, then answers."""

    async def deaf(args: Any, ctx: Any) -> Any:
        while not release.is_set():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(0.05)
        return "late"

    return deaf


def test_an_async_handler_that_ignores_cancellation_cannot_hold_adispatch_past_its_timeout() -> None:
    release = threading.Event()
    tools = rt.Registry({})
    tools.add("deaf", SCHEMA, _deaf_handler(release), timeout=0.3)
    tools.add("fast", SCHEMA, lambda args, ctx: "fast", timeout=2)

    async def dispatch_then_release() -> tuple[Any, float, Any]:
        started = time.monotonic()
        outcome = await tools.adispatch(_call("deaf", 0))
        elapsed = time.monotonic() - started
        after = await tools.adispatch(_call("fast", 0))
        release.set()  # lets asyncio.run end the abandoned handler's task when it closes the loop
        return outcome, elapsed, after

    try:
        outcome, elapsed, after = asyncio.run(dispatch_then_release())
    finally:
        release.set()
    assert outcome.error.kind == "timeout" and elapsed < BOUND
    assert after.content == "fast"


def test_an_async_handler_that_ignores_cancellation_cannot_hold_sync_dispatch_or_the_exit() -> None:
    release = threading.Event()
    tools = rt.Registry({})
    tools.add("deaf", SCHEMA, _deaf_handler(release), timeout=0.3)
    try:
        started = time.monotonic()
        outcome = tools.dispatch(_call("deaf", 0))
        assert outcome.error.kind == "timeout" and time.monotonic() - started < BOUND
    finally:
        release.set()
    script = textwrap.dedent(
        """
        import asyncio
        from toolgen import runtime as rt

        async def deaf(args, ctx):
            while True:
                try:
                    await asyncio.sleep(100)
                except asyncio.CancelledError:
                    pass

        tools = rt.Registry({})
        tools.add("deaf", {"type": "object"}, deaf, timeout=0.2)
        call = {"id": "c", "type": "function", "function": {"name": "deaf", "arguments": "{}"}}
        print(tools.dispatch(call).error.kind)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["timeout"]


def test_a_sync_dispatch_of_an_async_handler_works_inside_a_running_event_loop() -> None:
    async def answer(args: Any, ctx: Any) -> Any:
        await asyncio.sleep(0)
        return "async"

    tools = rt.Registry({})
    tools.add("answer", SCHEMA, answer, timeout=2)
    tools.add("untimed", SCHEMA, answer)

    async def inside() -> list[Any]:
        return [tools.dispatch(_call(name, 0)) for name in ("answer", "untimed")]

    assert [outcome.content for outcome in asyncio.run(inside())] == ["async", "async"]
