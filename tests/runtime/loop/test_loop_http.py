"""The agent loop over real HTTP on 127.0.0.1: a local server replays recorded provider bodies and streams.

The loop's HTTP client and the official `openai` SDK read the same recorded stream from the same server and must
agree on the tool calls; every wire's recorded stream and body gives, over HTTP, the calls the adapters read
offline; retries, timeouts and provider error bodies come out as typed ProviderErrors.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from support.projects import REPO_ROOT, SOURCE_PACKAGE, shared_dir

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "loop"
USER = [{"role": "user", "content": "What's the weather in Paris?"}]
SSE = "text/event-stream"


@dataclass
class Reply:
    """One queued response: status, body, and how to send it (in pieces, after a delay)."""

    body: bytes
    status: int = 200
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    chunk: int = 0
    delay: float = 0.0


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: Any


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    replies: deque[Reply]
    seen: list[Seen]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:  # noqa: N802 - the name http.server calls
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        headers = {key.lower(): value for key, value in self.headers.items()}
        self.server.seen.append(Seen(self.path, headers, json.loads(raw) if raw else None))
        replies = self.server.replies
        reply = replies.popleft() if replies else Reply(b'{"error": {"message": "no reply queued"}}', 500)
        time.sleep(reply.delay)
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            for key, value in reply.headers.items():
                self.send_header(key, value)
            if not reply.chunk:
                self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            step = reply.chunk or len(reply.body) or 1
            for start in range(0, len(reply.body), step):
                self.wfile.write(reply.body[start : start + step])
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up first (a timeout test)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class ReplayServer:
    """A local HTTP server answering each POST with the next queued Reply and recording the request."""

    def __init__(self) -> None:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.replies = deque()
        self._server.seen = []
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()

    @property
    def base(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def seen(self) -> list[Seen]:
        return self._server.seen

    def queue(self, *replies: Reply) -> None:
        self._server.replies.extend(replies)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    replay = ReplayServer()
    try:
        yield replay
    finally:
        replay.close()


@pytest.fixture(scope="module")
def sdk(source_package: ModuleType) -> SimpleNamespace:
    """The package built from the repo's own project: its runtime's declared surface, and the HTTP client's module."""
    name = source_package.__name__
    return SimpleNamespace(
        package=source_package,
        runtime=importlib.import_module(f"{name}._runtime"),
        http=importlib.import_module(f"{name}._runtime.clients.http"),
    )


@pytest.fixture(scope="module")
def payloads() -> Path:
    return shared_dir("payloads")


def sse_of(data: bytes) -> bytes:
    """A recorded JSON Lines stream (one SSE data payload per line) framed as the SSE body it came in."""
    return b"".join(b"data: " + line + b"\n\n" for line in data.splitlines() if line.strip())


def stream_reply(path: Path) -> Reply:
    data = path.read_bytes()
    if path.suffix == ".jsonl":
        return Reply(sse_of(data), content_type=SSE, chunk=61)
    if path.suffix == ".ndjson":
        return Reply(data, content_type="application/x-ndjson", chunk=61)
    return Reply(data, content_type=SSE, chunk=61)


def tools_for(sdk: SimpleNamespace, *names: str) -> Any:
    """The SDK's tools, weather bound, plus run-time tools for the names a recording calls."""
    tools = sdk.package.Tools()
    tools.get_current_weather.handler(
        lambda args, ctx: {"location": args.location, "temperature": 18.0, "unit": args.unit or "celsius"}
    )
    for name in names:
        tools.add(name, {"type": "object"}, lambda args, ctx, name=name: {"tool": name, "ok": True})
    return tools


def http_model(sdk: SimpleNamespace, server: ReplayServer, wire: str = "openai-chat", **options: Any) -> Any:
    prefix = {"openai-chat": "/v1", "mistral": "/v1", "openai-responses": "/v1", "gemini": "/v1beta"}.get(wire, "")
    options.setdefault("retry", sdk.runtime.RetryPolicy(max_retries=2, backoff=0.01, max_backoff=0.05))
    return sdk.runtime.HTTPModel(server.base + prefix, "m", wire=wire, api_key="sk-test", **options)


def calls_of(message: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in message.get("tool_calls") or []]


def openai_sdk_calls(server: ReplayServer, reply: Reply) -> list[tuple[str, str, str]]:
    """The tool calls the official openai SDK reads from the same stream, from the same server."""
    import openai

    server.queue(reply)
    client = openai.OpenAI(base_url=server.base + "/v1", api_key="sk-test", max_retries=0)
    calls: dict[int, dict[str, str]] = {}
    with client.chat.completions.create(model="m", messages=USER, stream=True) as stream:  # type: ignore[arg-type]
        for chunk in stream:
            for choice in chunk.choices:
                for delta in choice.delta.tool_calls or []:
                    entry = calls.setdefault(delta.index, {"id": "", "name": "", "arguments": ""})
                    entry["id"] = delta.id or entry["id"]
                    if delta.function is not None:
                        entry["name"] = delta.function.name or entry["name"]
                        entry["arguments"] += delta.function.arguments or ""
    client.close()
    return [(c["id"], c["name"], c["arguments"]) for _, c in sorted(calls.items())]


def drive(sdk: SimpleNamespace, mode: str, model: Any, tools: Any, **options: Any) -> Any:
    if mode == "sync":
        return sdk.runtime.run(USER, model, tools, **options)
    return asyncio.run(sdk.runtime.arun(USER, model, tools, **options))


# ---- end to end, and the openai SDK on the same stream ----


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_the_loop_runs_a_recorded_openai_stream_end_to_end_over_http(
    sdk: SimpleNamespace, server: ReplayServer, payloads: Path, mode: str
) -> None:
    recorded = payloads / "openai-chat" / "stream" / "openai-gpt4o-parallel-tool-calls.sse"
    server.queue(stream_reply(recorded), stream_reply(FIXTURES / "openai-chat-answer.sse"))
    model = http_model(sdk, server)
    tools = tools_for(sdk, "get_country", "get_product_name")
    result = drive(sdk, mode, model, tools, stream=True, settings={"max_tokens": 64, "temperature": 0})
    model.close()
    assert result.stop_reason == "finished", result.error
    assert result.text == "It is sunny in Paris\n(18 °C) and Oslo\u2028too."
    first, second = server.seen
    assert first.path == "/v1/chat/completions" and first.headers["authorization"] == "Bearer sk-test"
    assert first.body["stream"] is True and first.body["stream_options"] == {"include_usage": True}
    assert first.body["model"] == "m" and first.body["messages"] == USER
    assert (first.body["max_completion_tokens"], first.body["temperature"]) == (64, 0)
    assert {t["function"]["name"] for t in first.body["tools"]} >= {"get_current_weather", "get_country"}
    sent = second.body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "tool"]
    call_ids = [c["id"] for c in sent[1]["tool_calls"]]
    assert (
        [m["tool_call_id"] for m in sent[2:]]
        == call_ids
        == ["call_3rqTYrA6H21AYUaRGP4F66oq", "call_Xw9XMKBJU48kAAd78WgIswDx"]
    )
    assert json.loads(sent[2]["content"]) == {"tool": "get_country", "ok": True}
    loop_calls = calls_of(result.messages[1])
    assert openai_sdk_calls(server, stream_reply(recorded)) == loop_calls
    assert result.metrics.usage["total_tokens"] > 0 and result.metrics.tools["get_country"].success_rate == 1.0


def test_the_openai_sdk_and_the_loop_agree_on_fragmented_parallel_calls(
    sdk: SimpleNamespace, server: ReplayServer
) -> None:
    fixture = FIXTURES / "openai-chat-weather-parallel.sse"
    server.queue(stream_reply(fixture), stream_reply(FIXTURES / "openai-chat-answer.sse"))
    result = sdk.runtime.run(USER, http_model(sdk, server), tools_for(sdk), stream=True)
    assert result.stop_reason == "finished"
    expected = [
        ("call_paris", "get_current_weather", '{"location": "Paris, FR"}'),
        ("call_oslo", "get_current_weather", '{"location": "Oslo", "unit": "fahrenheit"}'),
    ]
    assert calls_of(result.messages[1]) == expected == openai_sdk_calls(server, stream_reply(fixture))
    assert [json.loads(r.content)["unit"] for r in result.calls] == ["celsius", "fahrenheit"]


# ---- every wire, streamed and whole ----

STREAMS = [
    ("openai-chat", "openai-chat/stream/deepseek-reasoner-tool-call.jsonl", "/v1/chat/completions"),
    ("openai-chat", "openai-chat/stream/anthropic-compat-tool-call-index-starts-at-1.sse", "/v1/chat/completions"),
    ("mistral", "mistral/stream/mistral-small-tool-call.jsonl", "/v1/chat/completions"),
    ("openai-responses", "openai-responses/stream/azure-gpt51-function-call.jsonl", "/v1/responses"),
    ("anthropic", "anthropic/stream/claude-sonnet46-server-tool-then-tool-use.sse", "/v1/messages"),
    ("anthropic", "anthropic/stream/claude-haiku45-tool-use-json.jsonl", "/v1/messages"),
    (
        "gemini",
        "gemini/stream/gemini3pro-function-call-thought-signature.sse",
        "/v1beta/models/m:streamGenerateContent?alt=sse",
    ),
    (
        "gemini",
        "gemini/stream/vertex-gemini3flash-no-args-and-parallel-streamed.jsonl",
        "/v1beta/models/m:streamGenerateContent?alt=sse",
    ),
    ("ollama", "ollama/stream/ollama-gemma3-chat-text.ndjson", "/api/chat"),
    ("cohere", "cohere/stream/cohere-parallel-tool-calls.jsonl", "/v2/chat"),
]


@pytest.mark.parametrize(("wire", "name", "path"), STREAMS, ids=[s[1].split("/")[-1] for s in STREAMS])
def test_recorded_streams_of_every_wire_give_the_same_calls_over_http(
    sdk: SimpleNamespace, server: ReplayServer, payloads: Path, wire: str, name: str, path: str
) -> None:
    recorded = payloads / name
    offline = sdk.runtime.aggregate(recorded.read_bytes(), wire)
    expected = calls_of(offline.message)
    server.queue(stream_reply(recorded))
    tools = tools_for(sdk, *sorted({n for _, n, _ in expected}))
    result = sdk.runtime.run(USER, http_model(sdk, server, wire), tools, stream=True, max_steps=1)
    assert server.seen[0].path == path
    body = server.seen[0].body
    assert body.get("stream") is (None if wire == "gemini" else True)
    if expected:
        assert result.stop_reason == "max_steps", result.error
        assert calls_of(result.messages[1]) == expected
        assert [r.call_id for r in result.calls] == [c[0] for c in expected]
        assert all(r.status == "ok" for r in result.calls)
    else:
        assert result.stop_reason == "finished" and result.text == offline.message["content"]


BODIES = [
    ("openai-chat", "openai-chat/response/groq-llama33-tool-call.json", "/v1/chat/completions"),
    ("mistral", "mistral/response/mistral-small-tool-call.json", "/v1/chat/completions"),
    ("openai-responses", "openai-responses/response/openai-function-call.json", "/v1/responses"),
    ("anthropic", "anthropic/response/claude-haiku45-parallel-tool-use.json", "/v1/messages"),
    ("gemini", "gemini/response/gemini25flash-function-call.json", "/v1beta/models/m:generateContent"),
    ("ollama", "ollama/response/ollama-cloud-gptoss-tool-call.json", "/api/chat"),
    ("cohere", "cohere/response/cohere-parallel-tool-calls.json", "/v2/chat"),
]


@pytest.mark.parametrize(("wire", "name", "path"), BODIES, ids=[b[1].split("/")[-1] for b in BODIES])
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_recorded_bodies_of_every_wire_give_the_same_calls_over_http(
    sdk: SimpleNamespace, server: ReplayServer, payloads: Path, wire: str, name: str, path: str, mode: str
) -> None:
    body = json.loads((payloads / name).read_text(encoding="utf-8"))
    expected = calls_of(sdk.runtime.decode(body, wire, "response").message)
    assert expected
    server.queue(Reply(json.dumps(body).encode()))
    tools = tools_for(sdk, *sorted({n for _, n, _ in expected}))
    result = drive(sdk, mode, http_model(sdk, server, wire), tools, max_steps=1)
    assert result.stop_reason == "max_steps", result.error
    assert server.seen[0].path == path and calls_of(result.messages[1]) == expected
    assert server.seen[0].body.get("stream") is (False if wire == "ollama" else None)
    auth = {"anthropic": "x-api-key", "gemini": "x-goog-api-key"}.get(wire, "authorization")
    assert server.seen[0].headers[auth].endswith("sk-test")


# ---- retries, timeouts, provider errors ----

ANSWER = json.dumps(
    {"id": "x", "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]}
).encode()


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("stream", [False, True])
def test_429_and_5xx_are_retried_then_the_answer_comes_through(
    sdk: SimpleNamespace, server: ReplayServer, mode: str, stream: bool
) -> None:
    limited = Reply(
        b'{"error": {"message": "slow down", "code": "rate_limit_exceeded"}}', 429, headers={"Retry-After": "0"}
    )
    answer = stream_reply(FIXTURES / "openai-chat-answer.sse") if stream else Reply(ANSWER)
    server.queue(limited, Reply(b"upstream hiccup", 503, content_type="text/plain"), answer)
    result = drive(sdk, mode, http_model(sdk, server), tools_for(sdk), stream=stream)
    assert result.stop_reason == "finished", result.error
    assert len(server.seen) == 3 and result.text


def test_retry_after_is_honoured(sdk: SimpleNamespace, server: ReplayServer) -> None:
    server.queue(Reply(b"{}", 429, headers={"retry-after-ms": "300"}), Reply(ANSWER))
    started = time.perf_counter()
    assert http_model(sdk, server).complete(sdk.runtime.Request(USER)).message["content"] == "ok"
    assert time.perf_counter() - started >= 0.3
    retry_after = sdk.http.retry_after
    assert retry_after({"Retry-After": "2"}) == 2.0
    assert retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:10 GMT"}, now=1445412480.0) == 10.0
    assert retry_after({"Retry-After": "soon"}) is None and retry_after({}) is None
    policy = sdk.runtime.RetryPolicy(max_retries=3, max_wait=5)
    assert policy.delay(0, {"retry-after": "60"}) is None  # longer than max_wait: give up now, say why
    assert policy.delay(3) is None and 0 < policy.delay(0) <= 0.5


def test_retries_give_up_with_the_last_provider_error(sdk: SimpleNamespace, server: ReplayServer) -> None:
    body = (FIXTURES / "anthropic-overloaded.json").read_bytes()
    server.queue(*[Reply(body, 529)] * 3)
    result = sdk.runtime.run(USER, http_model(sdk, server, "anthropic"), tools_for(sdk))
    assert result.stop_reason == "error" and len(server.seen) == 3
    error = result.error
    assert isinstance(error, sdk.runtime.ProviderError)
    assert (error.type, error.status, error.message) == ("overloaded_error", 529, "Overloaded")


@pytest.mark.parametrize("stream", [False, True])
def test_a_provider_error_body_becomes_a_typed_provider_error(
    sdk: SimpleNamespace, server: ReplayServer, payloads: Path, stream: bool
) -> None:
    body = (payloads / "openai-chat" / "response" / "openai-error-unsupported-parameter.json").read_bytes()
    server.queue(Reply(body, 400))
    events: list[Any] = []
    result = sdk.runtime.run(USER, http_model(sdk, server), tools_for(sdk), stream=stream, on_event=events.append)
    assert result.stop_reason == "error" and len(server.seen) == 1  # a 400 is not retried
    error = result.error
    assert isinstance(error, sdk.runtime.ProviderError)
    assert (error.status, error.type, error.code) == (400, "invalid_request_error", "unsupported_parameter")
    assert error.raw == json.loads(body)
    fatal = [e.data for e in events if e.type == "error" and e.data["fatal"]]
    assert fatal[0]["code"] == "unsupported_parameter" and events[-1].data["stop_reason"] == "error"


def test_complete_raises_provider_error_for_error_bodies_and_non_json(
    sdk: SimpleNamespace, server: ReplayServer, payloads: Path
) -> None:
    groq = (payloads / "openai-chat" / "response" / "groq-error-tool-use-failed.json").read_bytes()
    server.queue(
        Reply(groq, 400), Reply(b"<html>Bad gateway</html>", 502, content_type="text/html"), Reply(b"not json")
    )
    model = http_model(sdk, server, retry=sdk.runtime.RetryPolicy(max_retries=0))
    request = sdk.runtime.Request(USER)
    with pytest.raises(sdk.runtime.ProviderError) as tool_use:
        model.complete(request)
    assert tool_use.value.code == "tool_use_failed" and tool_use.value.status == 400
    with pytest.raises(sdk.runtime.ProviderError) as gateway:
        model.complete(request)
    assert gateway.value.type == "http_error" and gateway.value.status == 502 and "Bad gateway" in gateway.value.message
    with pytest.raises(sdk.runtime.ProviderError) as garbage:
        model.complete(request)
    assert garbage.value.type == "invalid_response"


def test_an_error_in_the_middle_of_a_stream_stops_the_run(
    sdk: SimpleNamespace, server: ReplayServer, payloads: Path
) -> None:
    server.queue(stream_reply(payloads / "openai-chat" / "stream" / "groq-gptoss-error-event-midstream.sse"))
    result = sdk.runtime.run(USER, http_model(sdk, server), tools_for(sdk), stream=True)
    assert result.stop_reason == "error" and isinstance(result.error, sdk.runtime.ProviderError)
    assert result.error.code == "tool_use_failed" and "did not match schema" in result.error.message
    assert result.messages == USER  # the broken message is not appended: the conversation stays sendable


def test_timeouts_and_refused_connections_are_provider_errors(sdk: SimpleNamespace, server: ReplayServer) -> None:
    server.queue(Reply(ANSWER, delay=1.0))
    slow = http_model(sdk, server, timeout=0.2, retry=sdk.runtime.RetryPolicy(max_retries=0))
    with pytest.raises(sdk.runtime.ProviderError) as timed_out:
        slow.complete(sdk.runtime.Request(USER))
    assert timed_out.value.type == "timeout"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    closed = sdk.runtime.HTTPModel(
        f"http://127.0.0.1:{port}/v1", "m", retry=sdk.runtime.RetryPolicy(max_retries=1, backoff=0.01)
    )
    result = sdk.runtime.run(USER, closed, tools_for(sdk), stream=True)
    assert result.stop_reason == "error" and result.error.type == "connection_error"


def test_python_m_package_talks_to_an_endpoint_with_base_url(server: ReplayServer, source_build: Path) -> None:
    server.queue(
        stream_reply(FIXTURES / "openai-chat-weather-parallel.sse"), stream_reply(FIXTURES / "openai-chat-answer.sse")
    )
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "LOOP_TEST_KEY": "sk-cli"}
    args = ["--base-url", f"{server.base}/v1", "--model", "m", "--api-key-env", "LOOP_TEST_KEY", "--stream", "weather?"]
    result = subprocess.run(
        [sys.executable, "-m", SOURCE_PACKAGE, *args],
        cwd=source_build,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "It is sunny in Paris\n(18 °C) and Oslo\u2028too.\n"
    assert server.seen[0].headers["authorization"] == "Bearer sk-cli"
    assert [m["role"] for m in server.seen[1].body["messages"]] == ["user", "assistant", "tool", "tool"]
