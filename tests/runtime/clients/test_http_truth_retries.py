"""HTTPModel's own retries and redirects, over real HTTP on 127.0.0.1: each retry is an `error` event the run
records (retry set, not fatal), counted in metrics.model_retries and on the chat span; a call that fails for good
says how many attempts were made and why no other; a 3xx is an error naming where it points, never a success."""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from support.local_http import Answer, LocalServer, queue, serving
from support.projects import SOURCE_PACKAGE

USER = [{"role": "user", "content": "Say hello"}]
KEY = "sk-test-key-0123456789abcdef"
MODES = ["sync", "async"]
ANSWER = json.dumps(
    {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello there."}, "finish_reason": "stop"}],
    }
).encode()
STREAM = (
    b"".join(
        b"data: " + json.dumps(chunk).encode() + b"\n\n"
        for chunk in (
            {
                "id": "c1",
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": {"content": "Hello there."}}],
            },
            {
                "id": "c1",
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            },
        )
    )
    + b"data: [DONE]\n\n"
)
# OpenAI's documented error body.
LIMITED = json.dumps({"error": {"message": "slow down", "type": "requests", "code": "rate_limit_exceeded"}}).encode()
BOOM = json.dumps({"error": {"message": "boom", "type": "server_error", "code": None}}).encode()
QUICK = {"max_retries": 2, "backoff": 0.01, "max_backoff": 0.02}


class Served:
    """Answers each POST with the next queued Answer (a 500 once none is left)."""

    def __init__(self) -> None:
        self.answers: list[Answer] = []

    def __call__(self, received: Any) -> Answer:
        return self.answers.pop(0) if self.answers else Answer(b'{"message": "none left"}', 500)


@pytest.fixture(scope="module")
def sdk(source_package: ModuleType) -> SimpleNamespace:
    name = source_package.__name__
    return SimpleNamespace(package=source_package, runtime=importlib.import_module(f"{name}._runtime"))


@pytest.fixture
def served() -> Served:
    return Served()


@pytest.fixture
def server(served: Served) -> Iterator[LocalServer]:
    yield from serving(served)


def model(sdk: SimpleNamespace, server: LocalServer, **options: Any) -> Any:
    options.setdefault("retry", sdk.runtime.RetryPolicy(**QUICK))
    return sdk.runtime.HTTPModel(server.base + "/v1", "m", api_key=KEY, **options)


def drive(sdk: SimpleNamespace, mode: str, client: Any, **options: Any) -> tuple[Any, list[Any]]:
    events: list[Any] = []
    tools = sdk.package.Tools()
    if mode == "sync":
        result = sdk.runtime.run(USER, client, tools, on_event=events.append, **options)
    else:
        result = asyncio.run(sdk.runtime.arun(USER, client, tools, on_event=events.append, **options))
    return result, events


def answer(stream: bool) -> Answer:
    return Answer(STREAM, content_type="text/event-stream") if stream else Answer(ANSWER)


def errors(events: list[Any]) -> list[dict[str, Any]]:
    return [dict(e.data) for e in events if e.type == "error"]


# ---- retries ----


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("mode", MODES)
def test_a_429_then_the_answer_leaves_an_event_and_a_count(
    sdk: SimpleNamespace, server: LocalServer, served: Served, mode: str, stream: bool
) -> None:
    served.answers += [Answer(LIMITED, 429, headers={"Retry-After": "0"}), answer(stream)]
    result, events = drive(sdk, mode, model(sdk, server), stream=stream)
    assert result.stop_reason == "finished" and result.text == "Hello there." and len(server.seen) == 2
    # Before: no event at all, and model_retries 0.
    assert errors(events) == [
        {
            "message": "slow down (HTTP 429): attempt 1 failed, trying again in 0 s",
            "type": "requests",
            "code": "rate_limit_exceeded",
            "status": 429,
            "fatal": False,
            "retry": 2,
        }
    ]
    kinds = [e.type for e in events]
    assert kinds.index("model_call_started") < kinds.index("error") < kinds.index("model_call_finished")
    assert result.metrics.model_retries == 1 and result.metrics.model_calls == 1


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("mode", MODES)
def test_retries_spent_say_how_many_attempts_were_made_and_why_no_other(
    sdk: SimpleNamespace, server: LocalServer, served: Served, mode: str, stream: bool
) -> None:
    served.answers += [Answer(BOOM, 500)] * 3
    result, events = drive(sdk, mode, model(sdk, server), stream=stream)
    assert result.stop_reason == "error" and len(server.seen) == 3
    error = result.error
    assert (error.type, error.status, error.message) == ("server_error", 500, "boom")  # the provider's, untouched
    said = "boom (after 3 attempts: no retries left, RetryPolicy.max_retries being 2)"
    # Before: str(error) was "boom", and nothing said the call had been made three times.
    assert str(error) == said and error.attempts == 3
    assert [e["retry"] for e in errors(events) if e["retry"] is not None] == [2, 3]
    assert [e["message"] for e in errors(events) if e["fatal"]] == [said]
    assert result.metrics.model_retries == 2


@pytest.mark.parametrize("stream", [False, True])
def test_a_retry_after_past_max_wait_gives_up_at_once_saying_so(
    sdk: SimpleNamespace, server: LocalServer, served: Served, stream: bool
) -> None:
    served.answers += [Answer(LIMITED, 429, headers={"Retry-After": "120"}), answer(stream)]
    result, events = drive(sdk, "sync", model(sdk, server), stream=stream)
    assert result.stop_reason == "error" and len(server.seen) == 1
    assert str(result.error) == (
        "slow down (not retried: the server asked to wait 120 s in Retry-After, more than RetryPolicy.max_wait, 60 s)"
    )
    assert [e["message"] for e in errors(events) if e["fatal"]] == [str(result.error)]


def test_a_retry_after_past_the_time_left_gives_up_at_once_saying_so(
    sdk: SimpleNamespace, server: LocalServer, served: Served
) -> None:
    served.answers += [Answer(LIMITED, 429, headers={"Retry-After": "30"}), answer(False)]
    with pytest.raises(sdk.runtime.ProviderError) as failed:
        model(sdk, server, timeout=5).complete(sdk.runtime.Request(USER))
    said = str(failed.value)
    assert said.startswith("slow down (not retried: waiting 30 s would pass the call's 5 s timeout, ")
    assert said.endswith(" s away)") and len(server.seen) == 1


def test_a_whole_answer_lists_the_retries_made_before_it(
    sdk: SimpleNamespace, server: LocalServer, served: Served
) -> None:
    served.answers += [Answer(LIMITED, 429, headers={"Retry-After": "0"}), Answer(b"busy", 503, "text/plain")]
    served.answers += [Answer(ANSWER, headers={"Retry-After": "0"})]
    response = model(sdk, server).complete(sdk.runtime.Request(USER))
    retries = response.extras["retries"]
    assert retries[0] == {
        "attempt": 1,
        "wait": 0.0,
        "message": "slow down",
        "type": "requests",
        "code": "rate_limit_exceeded",
        "status": 429,
    }
    assert (retries[1]["attempt"], retries[1]["status"], retries[1]["type"]) == (2, 503, "http_error")
    assert 0 < retries[1]["wait"] <= 0.02


def test_the_chat_span_records_each_retry(sdk: SimpleNamespace, server: LocalServer, served: Served) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    served.answers += [Answer(LIMITED, 429, headers={"Retry-After": "0"}), answer(True)]
    drive(sdk, "sync", model(sdk, server), stream=True, tracer_provider=provider)
    (chat,) = [span for span in exporter.get_finished_spans() if span.name.startswith("chat")]
    assert [(e.name, dict(e.attributes or {})) for e in chat.events] == [
        (
            "toolgen.model_call.retry",
            {
                "error.type": "requests",
                "toolgen.retry.attempt": 2,
                "toolgen.retry.wait": 0.0,
                "http.response.status_code": 429,
            },
        )
    ]
    assert chat.attributes["http.request.resend_count"] == 1


def test_the_command_line_says_each_retry_and_how_it_ended(source_build: Path) -> None:
    limited = Answer(LIMITED, 429, headers={"Retry-After": "0"})
    for local in serving(queue(limited, limited, limited)):
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "TRUTH_KEY": KEY}
        args = ["--base-url", f"{local.base}/v1", "--model", "m", "--api-key-env", "TRUTH_KEY", "hi"]
        done = subprocess.run(
            [sys.executable, "-m", SOURCE_PACKAGE, *args],
            cwd=source_build,
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
    assert done.returncode == 1
    # Before: "stopped: error: slow down" alone.
    assert done.stderr == (
        "retrying (attempt 2): slow down (HTTP 429): attempt 1 failed, trying again in 0 s\n"
        "retrying (attempt 3): slow down (HTTP 429): attempt 2 failed, trying again in 0 s\n"
        "stopped: error: slow down (after 3 attempts: no retries left, RetryPolicy.max_retries being 2)\n"
    )


# ---- redirects ----

REASONS = {301: "Moved Permanently", 302: "Found", 307: "Temporary Redirect", 308: "Permanent Redirect"}


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("status", list(REASONS))
@pytest.mark.parametrize("mode", MODES)
def test_a_redirect_is_an_error_naming_where_it_points_with_secrets_masked(
    sdk: SimpleNamespace, server: LocalServer, served: Served, status: int, stream: bool, mode: str
) -> None:
    location = "https://api.example.com/v2/chat/completions?api_key=abc123&region=eu"
    served.answers += [Answer(b"", status, headers={"Location": location}), answer(stream)]
    result, events = drive(sdk, mode, model(sdk, server), stream=stream)
    assert result.stop_reason == "error" and len(server.seen) == 1  # not retried, not followed
    error = result.error
    # Before: `invalid_response: the response is not JSON: ''` (whole), `cut` (streamed): status and Location lost.
    assert (error.type, error.status) == ("redirect", status)
    assert error.message == (
        f"HTTP {status} {REASONS[status]}: redirected to"
        " https://api.example.com/v2/chat/completions?api_key=***&region=eu,"
        " not followed (set the base URL to where it points)"
    )
    assert [e["message"] for e in errors(events) if e["fatal"]] == [error.message]


def test_a_redirect_echoing_the_key_never_shows_it(sdk: SimpleNamespace, server: LocalServer, served: Served) -> None:
    served.answers += [Answer(b"", 307, headers={"Location": f"https://proxy.example.com/{KEY}/v1/chat/completions"})]
    result, events = drive(sdk, "sync", model(sdk, server), stream=True)
    assert result.error.type == "redirect" and result.error.message.startswith(
        "HTTP 307 Temporary Redirect: redirected"
    )
    assert "***" in result.error.message and KEY not in json.dumps([e.to_json() for e in events])


def test_a_redirect_without_a_location_says_so(sdk: SimpleNamespace, server: LocalServer, served: Served) -> None:
    served.answers += [Answer(b"", 302)]
    with pytest.raises(sdk.runtime.ProviderError) as failed:
        model(sdk, server).complete(sdk.runtime.Request(USER))
    assert failed.value.message == (
        "HTTP 302 Found: a redirect without a Location, not followed (set the base URL to where it points)"
    )
