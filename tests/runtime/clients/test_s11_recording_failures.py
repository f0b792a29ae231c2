"""A replay meets what the live caller met when the call was retried or never answered: `HTTPModel(record=DIR)`
against a real HTTP server on 127.0.0.1 (or a port nothing listens on), then `ReplayModel.from_recordings(DIR)`
raises the same RetriedError (attempts, each retry's failure and wait, why no other), emits the same retry events
without sleeping the waits, and raises the same ProviderError for a refused connection or a timeout before any
header came."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest
from support.local_http import Answer, Received, queue, serving
from test_recording_truth_replay import (
    ANSWER,
    STREAM,
    USER,
    _collected,
    exchange,
    outline,
    replayed_stream,
    seen,
)

from toolgen import runtime as rt
from toolgen.runtime.clients.retry import RetriedError

KEY = "sk-test-Rec0rdRetryKey-0123456789"
QUICK = {"max_retries": 2, "backoff": 0.01, "max_backoff": 0.02}
# OpenAI's documented error bodies.
BOOM = json.dumps({"error": {"message": "boom", "type": "server_error", "code": None}}).encode()
LIMITED = json.dumps({"error": {"message": "slow down", "type": "requests", "code": "rate_limit_exceeded"}}).encode()
SSE = "text/event-stream"


def said(error: rt.ProviderError) -> tuple[Any, ...]:
    """All a caller can read of an error: its class, fields, text, and for a RetriedError the attempts made."""
    retried = isinstance(error, RetriedError)
    return (
        type(error).__name__,
        seen(error),
        str(error),
        error.attempts if retried else None,
        [note.to_json() for note in error.retries] if retried else None,
        error.gave_up if retried else None,
    )


def model(base: str, folder: Path, **options: Any) -> Any:
    return rt.HTTPModel(base, "gpt-4o-mini", api_key=KEY, record=folder, **options)


def live_error(base: str, folder: Path, mode: str, **options: Any) -> rt.ProviderError:
    client = model(base, folder, **options)
    try:
        with pytest.raises(rt.ProviderError) as raised:
            if mode == "async":
                asyncio.run(client.acomplete(rt.Request(USER)))
            else:
                client.complete(rt.Request(USER))
    finally:
        client.close()
    return raised.value


def replayed_error(folder: Path) -> rt.ProviderError:
    with pytest.raises(rt.ProviderError) as raised:
        rt.ReplayModel.from_recordings(folder).complete(rt.Request(USER))
    return raised.value


def live_stream(base: str, folder: Path, mode: str, **options: Any) -> list[Any]:
    client = model(base, folder, **options)
    try:
        events = asyncio.run(_collected(client)) if mode == "async" else list(client.stream(rt.Request(USER)))
    finally:
        client.close()
    return [outline(event) for event in events]


def free_port() -> int:
    """A port on 127.0.0.1 nothing listens on: connecting to it is refused."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        port: int = held.getsockname()[1]
    return port


# ---- retried attempts ----


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_call_failing_after_retries_replays_the_same_retried_error(mode: str, tmp_path: Path) -> None:
    fails = [Answer(BOOM, 500), Answer(LIMITED, 429), Answer(BOOM, 503)]
    for server in serving(queue(*fails)):
        live = live_error(server.base, tmp_path, mode, retry=rt.RetryPolicy(**QUICK))
    assert isinstance(live, RetriedError) and live.attempts == 3 and live.gave_up is not None
    assert [(n.attempt, n.status, n.message) for n in live.retries] == [(1, 500, "boom"), (2, 429, "slow down")]
    # One exchange, the call's last attempt, saying what the attempts before it met.
    assert sorted(p.name for p in tmp_path.glob("*.exchange.json")) == ["0001.exchange.json"]
    meta = exchange(tmp_path)
    assert meta["retries"] == [note.to_json() for note in live.retries]
    assert meta["gave_up"] == live.gave_up == "no retries left, RetryPolicy.max_retries being 2"
    assert said(replayed_error(tmp_path)) == said(live)


def test_a_call_not_retried_replays_why_not(tmp_path: Path) -> None:
    for server in serving(queue(Answer(BOOM, 503))):
        live = live_error(server.base, tmp_path, "sync", retry=rt.RetryPolicy(max_retries=0))
    assert str(live) == "boom (not retried: no retries left, RetryPolicy.max_retries being 0)"
    assert said(replayed_error(tmp_path)) == said(live)


def test_an_answer_after_retries_replays_the_retries_it_lists(tmp_path: Path) -> None:
    for server in serving(queue(Answer(BOOM, 500), Answer(ANSWER))):
        client = model(server.base, tmp_path, retry=rt.RetryPolicy(**QUICK))
        live = client.complete(rt.Request(USER))
        client.close()
    assert [entry["status"] for entry in live.extras["retries"]] == [500]
    replayed = rt.ReplayModel.from_recordings(tmp_path).complete(rt.Request(USER))
    assert replayed.extras["retries"] == live.extras["retries"]
    assert replayed.message == live.message


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_stream_after_retries_replays_its_retry_events_without_waiting(mode: str, tmp_path: Path) -> None:
    """The server asks to wait a second: the live stream waits it, the replay says it and does not."""
    limited = Answer(LIMITED, 429, headers={"Retry-After": "1"})
    for server in serving(queue(limited, Answer("".join(STREAM).encode(), content_type=SSE))):
        live = live_stream(server.base, tmp_path, mode, retry=rt.RetryPolicy(**QUICK))
    retry = live[0]
    assert retry[0] == "StreamError" and retry[1] == "slow down (HTTP 429): attempt 1 failed, trying again in 1 s"
    assert live[-1][:3] == ("MessageEnd", True, "complete")
    started = time.monotonic()
    replayed = replayed_stream(tmp_path)
    assert time.monotonic() - started < 0.5
    assert replayed == live
    retried = next(iter(rt.ReplayModel.from_recordings(tmp_path).stream(rt.Request(USER))))
    assert isinstance(retried, rt.StreamError) and retried.raw.wait == 1.0


def test_a_stream_failing_after_retries_replays_its_retry_events_and_error(tmp_path: Path) -> None:
    for server in serving(queue(Answer(BOOM, 500), Answer(BOOM, 500), Answer(BOOM, 500))):
        live = live_stream(server.base, tmp_path, "sync", retry=rt.RetryPolicy(**QUICK))
    assert [e[0] if isinstance(e, tuple) else type(e).__name__ for e in live] == [
        "StreamError",
        "StreamError",
        "StreamError",
        "Finish",
        "MessageEnd",
    ]
    assert replayed_stream(tmp_path) == live


def test_a_recording_without_retries_replays_as_before(tmp_path: Path) -> None:
    """A folder recorded before `retries` and `gave_up` were written: the last attempt's ProviderError, as always."""
    for server in serving(queue(Answer(BOOM, 500), Answer(BOOM, 500), Answer(BOOM, 500))):
        live = live_error(server.base, tmp_path, "sync", retry=rt.RetryPolicy(**QUICK))
    meta = exchange(tmp_path)
    del meta["retries"], meta["gave_up"]
    (tmp_path / "0001.exchange.json").write_text(json.dumps(meta), encoding="utf-8")
    replayed = replayed_error(tmp_path)
    assert type(replayed) is rt.ProviderError and seen(replayed) == seen(live)


# ---- failures before any answer ----


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_refused_connection_is_recorded_and_replays_the_same_error(mode: str, tmp_path: Path) -> None:
    base = f"http://127.0.0.1:{free_port()}"
    live = live_error(base, tmp_path, mode, retry=rt.RetryPolicy(max_retries=1, backoff=0.01))
    assert live.type == "connection_error" and live.message.startswith("connection error: ConnectError")
    assert isinstance(live, RetriedError) and live.attempts == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["0001.exchange.json", "0001.request.json"]
    meta = exchange(tmp_path)
    assert (meta["status"], meta["reason"], meta["response"], meta["whole"]) == (None, "", None, False)
    assert meta["failure"] == {
        "wire": "openai-chat",
        **{k: getattr(live, k) for k in ("message", "type", "code")},
        "status": None,
    }
    assert meta["url"] == f"{base}/chat/completions"
    assert meta["request_headers"]["authorization"] == "***"
    assert json.loads((tmp_path / "0001.request.json").read_bytes())["messages"] == USER
    assert KEY not in "".join(p.read_text() for p in tmp_path.iterdir())
    assert said(replayed_error(tmp_path)) == said(live)


def test_a_refused_stream_replays_the_same_events(tmp_path: Path) -> None:
    base = f"http://127.0.0.1:{free_port()}"
    live = live_stream(base, tmp_path, "sync", retry=rt.RetryPolicy(max_retries=0))
    assert live[0][0] == "StreamError" and live[-1][:3] == ("MessageEnd", False, "failed")
    assert exchange(tmp_path)["stream"] is True
    assert replayed_stream(tmp_path) == live


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_timeout_before_the_headers_is_recorded_and_replays(mode: str, tmp_path: Path) -> None:
    def stalled(_: Received) -> Answer:
        time.sleep(2.5)
        return Answer(ANSWER)

    for server in serving(stalled):
        live = live_error(server.base, tmp_path, mode, timeout=1.0, retry=rt.RetryPolicy(max_retries=0))
    assert live.type == "timeout", live.message
    meta = exchange(tmp_path)
    assert meta["status"] is None and meta["failure"]["type"] == "timeout"
    assert said(replayed_error(tmp_path)) == said(live)
    # The request file is a request conformance reads; no response file was written.
    assert not list(tmp_path.glob("0001.response.*"))
