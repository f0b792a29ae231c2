"""A recording replays the failure the caller met: `HTTPModel(record=DIR)` against a real HTTP server on 127.0.0.1
that cuts bodies short, stalls, sends a gzip bomb, HTML or a dropped stream, then `ReplayModel.from_recordings(DIR)`
meets the same ProviderError (type, message, status, code) or the same stream events, and the exchange says how
the call ended (`whole`, `failure`, `interrupted`)."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from toolgen import runtime as rt

USER = [{"role": "user", "content": "Say hello"}]
ANSWER = json.dumps(
    {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello there."}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
    }
).encode()


def _chunk(text: str, finish: str | None = None) -> str:
    delta = {"content": text} if text else {}
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return "data: " + json.dumps({"id": "c1", "object": "chat.completion.chunk", "choices": [choice]}) + "\n\n"


# An OpenAI Chat stream, as documented: content deltas, a finish_reason, then [DONE].
STREAM = [_chunk("Hello"), _chunk(" there."), _chunk("", "stop"), "data: [DONE]\n\n"]

Act = Callable[[BaseHTTPRequestHandler], None]


def whole(status: int, reason: str, body: bytes, *, content_type: str = "application/json", **extra: Any) -> Act:
    """An answer written byte for byte: `length` a Content-Length other than the body's (False: none, the end of
    the body is the connection closing), `headers` more headers, `stall` seconds after the body before closing."""
    length = extra.get("length", len(body))

    def act(handler: BaseHTTPRequestHandler) -> None:
        head = f"HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nConnection: close\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in extra.get("headers", {}).items())
        if length is not False:
            head += f"Content-Length: {length}\r\n"
        handler.wfile.write(head.encode("latin-1") + b"\r\n" + body)
        handler.wfile.flush()
        time.sleep(extra.get("stall", 0))

    return act


def chunked(pieces: list[str], *, end: bool = True, stall: float = 0) -> Act:
    """A chunked event stream, a chunk per piece; without `end` the connection closes with no last chunk."""

    def act(handler: BaseHTTPRequestHandler) -> None:
        handler.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
        for piece in pieces:
            data = piece.encode()
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            handler.wfile.flush()
        time.sleep(stall)
        if end:
            handler.wfile.write(b"0\r\n\r\n")
        handler.wfile.flush()

    return act


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Any

    def do_POST(self) -> None:  # noqa: N802 - the name http.server calls
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.server.paths.append(self.path)
        self.close_connection = True
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.server.answers.pop(0)(self)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class Server:
    """Answers POSTs on 127.0.0.1 with the given acts, in order."""

    def __init__(self, *answers: Act) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.answers = list(answers)  # type: ignore[attr-defined]
        self.httpd.paths = []  # type: ignore[attr-defined]
        threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True).start()
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def served(*answers: Act) -> Iterator[Server]:
    server = Server(*answers)
    try:
        yield server
    finally:
        server.close()


def live_error(folder: Path, act: Act, mode: str, **options: Any) -> rt.ProviderError:
    """The ProviderError a whole (not streamed) call met, recorded into `folder`."""
    options.setdefault("retry", rt.RetryPolicy(max_retries=0))
    for server in served(act):
        model = rt.HTTPModel(
            server.base, "gpt-4o-mini", api_key="sk-test-Rec0rdTruthKey-0123456789", record=folder, **options
        )
        try:
            with pytest.raises(rt.ProviderError) as raised:
                if mode == "async":
                    asyncio.run(model.acomplete(rt.Request(USER)))
                else:
                    model.complete(rt.Request(USER))
        finally:
            model.close()
    return raised.value


def replayed_error(folder: Path) -> rt.ProviderError:
    with pytest.raises(rt.ProviderError) as raised:
        rt.ReplayModel.from_recordings(folder).complete(rt.Request(USER))
    return raised.value


def seen(error: rt.ProviderError) -> tuple[Any, ...]:
    return (error.wire, error.type, error.message, error.status, error.code)


def exchange(folder: Path, number: int = 1) -> dict[str, Any]:
    return json.loads((folder / f"{number:04d}.exchange.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


# Each failure after the headers of a whole call: the answer, what the caller meets, and whether the body was whole.
AFTER_HEADERS = {
    "body cut short of its Content-Length": (
        whole(200, "OK", ANSWER[:100], length=len(ANSWER)),
        {},
        ("connection_error", "connection error: RemoteProtocolError: peer closed connection without sending"),
        False,
    ),
    "gzip bomb past the cap": (
        whole(200, "OK", gzip.compress(b" " * 2**20), headers={"Content-Encoding": "gzip"}),
        {"max_response_bytes": 64 * 1024},
        ("response_too_large", "the response body decodes to more than the 64 KiB cap; the response was not read"),
        False,
    ),
    "deadline passing mid-body": (
        whole(200, "OK", ANSWER[:50], length=len(ANSWER), stall=4),
        {"timeout": 1.5},
        ("timeout", "timeout: "),
        False,
    ),
}


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("case", list(AFTER_HEADERS))
def test_a_whole_call_failing_after_the_headers_replays_its_failure(case: str, mode: str, tmp_path: Path) -> None:
    act, options, (kind, start), is_whole = AFTER_HEADERS[case]
    live = live_error(tmp_path, act, mode, **options)
    assert (live.type, live.status) == (kind, None) and live.message.startswith(start), live.message
    meta = exchange(tmp_path)
    assert (meta["status"], meta["reason"], meta["stream"], meta["whole"]) == (200, "OK", False, is_whole)
    assert meta["failure"] == {
        "wire": "openai-chat",
        **{k: getattr(live, k) for k in ("message", "type", "code", "status")},
    }
    assert meta["interrupted"] is None
    assert seen(replayed_error(tmp_path)) == seen(live)


def test_a_whole_body_past_its_cap_is_not_kept(tmp_path: Path) -> None:
    """A gzip bomb's inflated bytes are not written out: the failure replays, `whole` and `failure` say why."""
    act, options, _, _ = AFTER_HEADERS["gzip bomb past the cap"]
    live_error(tmp_path, act, "sync", **options)
    assert (tmp_path / "0001.response.json").read_bytes() == b""
    assert exchange(tmp_path)["masked"] is False


def test_a_cut_body_keeps_what_came(tmp_path: Path) -> None:
    act, options, _, _ = AFTER_HEADERS["body cut short of its Content-Length"]
    live_error(tmp_path, act, "sync", **options)
    assert (tmp_path / "0001.response.json").read_bytes() == ANSWER[:100]


# 200 answers that are no JSON document: the caller meets invalid_response, and so does the replay (not an empty
# message the loop would retry into "no recording left").
NOT_JSON = {
    "html": (whole(200, "OK", b"<html>maintenance</html>", content_type="text/html"), "'<html>maintenance</html>'"),
    "empty": (whole(200, "OK", b""), "''"),
    "cut, no length": (whole(200, "OK", ANSWER[:100], length=False), repr(ANSWER[:100].decode())),
    "not UTF-8": (whole(200, "OK", ANSWER.replace(b"Hello", b"H\xe9llo")), None),
}


@pytest.mark.parametrize("case", list(NOT_JSON))
def test_a_200_body_that_is_no_json_replays_as_the_same_error(case: str, tmp_path: Path) -> None:
    act, text = NOT_JSON[case]
    live = live_error(tmp_path, act, "sync")
    assert live.type == "invalid_response" and live.message.startswith("the response is not JSON: ")
    if text is not None:
        assert live.message == f"the response is not JSON: {text}"
    assert seen(replayed_error(tmp_path)) == seen(live)
    replay = rt.ReplayModel.from_recordings(tmp_path)
    ran = rt.run(USER, replay, rt.Registry([]))
    assert ran.stop_reason == "error" and seen(ran.error) == seen(live) and len(replay.requests) == 1


def test_an_error_status_replays_with_its_reason_phrase(tmp_path: Path) -> None:
    live = live_error(tmp_path, whole(401, "Unauthorized", b"<html>nope</html>", content_type="text/html"), "sync")
    assert seen(live) == ("openai-chat", "http_error", "HTTP 401 Unauthorized: <html>nope</html>", 401, None)
    assert exchange(tmp_path)["reason"] == "Unauthorized"
    assert seen(replayed_error(tmp_path)) == seen(live)


def test_an_error_body_past_its_cap_replays_and_is_not_whole(tmp_path: Path) -> None:
    bomb = whole(500, "Internal Server Error", gzip.compress(b"x" * 2**21), headers={"Content-Encoding": "gzip"})
    live = live_error(tmp_path, bomb, "sync")
    assert (live.type, live.status) == ("response_too_large", 500)
    meta = exchange(tmp_path)
    assert (meta["whole"], meta["failure"]["type"]) == (False, "response_too_large")
    assert seen(replayed_error(tmp_path)) == seen(live)


def test_a_recording_without_failures_or_reasons_replays_as_before(tmp_path: Path) -> None:
    """A folder recorded before these fields were written: an error status still replays, reason phrase left out."""
    live_error(tmp_path, whole(401, "Unauthorized", b"<html>nope</html>", content_type="text/html"), "sync")
    meta = exchange(tmp_path)
    for name in ("reason", "failure", "interrupted", "decoded_from"):
        meta.pop(name, None)
    (tmp_path / "0001.exchange.json").write_text(json.dumps(meta), encoding="utf-8")
    assert seen(replayed_error(tmp_path)) == ("openai-chat", "http_error", "HTTP 401: <html>nope</html>", 401, None)


# ---- streams ----


def outline(event: Any) -> Any:
    """An event as compared live against replay: everything but the exception object a StreamError keeps."""
    if isinstance(event, rt.StreamError):
        return ("StreamError", event.message, event.code, event.type, event.status, event.provider)
    if isinstance(event, rt.MessageEnd):
        end = event.response
        said = end.to_json() if isinstance(end, rt.ProviderError) else (end.message, end.finish, end.usage)
        return ("MessageEnd", event.complete, event.status, said)
    return event


def live_stream(folder: Path, act: Act, mode: str, **options: Any) -> list[Any]:
    for server in served(act):
        model = rt.HTTPModel(server.base, "gpt-4o-mini", record=folder, retry=rt.RetryPolicy(max_retries=0), **options)
        try:
            events = asyncio.run(_collected(model)) if mode == "async" else list(model.stream(rt.Request(USER)))
        finally:
            model.close()
    return [outline(e) for e in events]


async def _collected(model: Any) -> list[Any]:
    return [event async for event in model.astream(rt.Request(USER))]


def replayed_stream(folder: Path) -> list[Any]:
    return [outline(e) for e in rt.ReplayModel.from_recordings(folder).stream(rt.Request(USER))]


BROKEN = {
    "connection dropped mid-event": (
        chunked([*STREAM[:2], STREAM[2][:20]], end=False),
        {},
        ("RemoteProtocolError", "peer closed connection without sending complete message body"),
    ),
    "deadline passing mid-stream": (chunked(STREAM[:1], stall=4), {"timeout": 1.5}, ("DeadlinePassed", "the ")),
}


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("case", list(BROKEN))
def test_a_stream_that_broke_off_is_not_whole_and_replays_the_same_events(case: str, mode: str, tmp_path: Path) -> None:
    act, options, (name, start) = BROKEN[case]
    live = live_stream(tmp_path, act, mode, **options)
    errors = [e for e in live if isinstance(e, tuple) and e[0] == "StreamError"]
    assert errors[0][1].startswith(f"stream interrupted: {name}: {start}"), errors
    assert live[-1][:3] == ("MessageEnd", False, "cut")
    meta = exchange(tmp_path)
    assert (meta["stream"], meta["whole"], meta["failure"]) == (True, False, None)
    assert meta["interrupted"]["error"] == name
    assert errors[0][1] == f"stream interrupted: {name}: {meta['interrupted']['message']}"
    assert replayed_stream(tmp_path) == live


def test_a_whole_stream_is_whole_and_one_the_reader_left_is_not(tmp_path: Path) -> None:
    assert live_stream(tmp_path, chunked(STREAM), "sync")[-1][:3] == ("MessageEnd", True, "complete")
    assert (exchange(tmp_path)["whole"], exchange(tmp_path)["interrupted"]) == (True, None)
    for server in served(chunked(STREAM)):
        model = rt.HTTPModel(server.base, "m", record=tmp_path)
        events = model.stream(rt.Request(USER))
        next(events)
        events.close()  # type: ignore[attr-defined]
        model.close()
    assert (exchange(tmp_path, 2)["whole"], exchange(tmp_path, 2)["interrupted"]) == (False, None)


def test_a_stream_past_its_cap_replays_as_too_large(tmp_path: Path) -> None:
    pieces = [_chunk("x" * 1000) for _ in range(40)] + STREAM[2:]
    live = live_stream(tmp_path, chunked(pieces), "sync", max_response_bytes=16 * 1024)
    assert live[-1][:3] == ("MessageEnd", False, "failed") and live[-1][3]["type"] == "response_too_large"
    assert exchange(tmp_path)["interrupted"]["error"] == "BodyTooLarge"
    assert replayed_stream(tmp_path) == live
