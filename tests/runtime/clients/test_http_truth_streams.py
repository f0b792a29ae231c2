"""A stream HTTPModel ends `cut` or `corrupt` is a broken stream to the loop, whatever finish its answer names: it is
asked again as StreamRetry says, or the step fails, and none of its calls runs. Driven over real HTTP on
127.0.0.1 with each provider's documented stream, one payload mangled (a byte that is not UTF-8, a JSON line cut
short) or the end event missing; also StreamRetry matching a provider error's code, and the command line saying
on stderr that a stream broke off and was asked again."""

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

USER = [{"role": "user", "content": "What's the weather in Paris-sur-Seine?"}]
SSE = "text/event-stream"
MODES = ["sync", "async"]


@pytest.fixture(scope="module")
def sdk(source_package: ModuleType) -> SimpleNamespace:
    name = source_package.__name__
    return SimpleNamespace(package=source_package, runtime=importlib.import_module(f"{name}._runtime"))


class Served:
    """A local server answering each POST with the next queued Answer (a 500 once none is left)."""

    def __init__(self) -> None:
        self.answers: list[Answer] = []

    def __call__(self, received: Any) -> Answer:
        return self.answers.pop(0) if self.answers else Answer(b'{"message": "none left"}', 500)


@pytest.fixture
def served() -> Served:
    return Served()


@pytest.fixture
def server(served: Served) -> Iterator[LocalServer]:
    yield from serving(served)


def sse(*payloads: Any, events: list[str] | None = None) -> bytes:
    """Server-sent events, one `data:` line each (JSON unless already text), named when `events` says."""
    out = []
    for number, payload in enumerate(payloads):
        data = payload if isinstance(payload, str) else json.dumps(payload)
        name = f"event: {events[number]}\n" if events else ""
        out.append(f"{name}data: {data}\n\n")
    return "".join(out).encode()


# ---- OpenAI chat: a tool call whose arguments come in three fragments, as documented ----


def chat_chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-2",
        "object": "chat.completion.chunk",
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def call_stream(fragments: list[str]) -> list[bytes]:
    """One payload per list item: the call's start, each fragment, the finish, [DONE]."""
    start = {
        "role": "assistant",
        "tool_calls": [
            {
                "index": 0,
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_current_weather", "arguments": ""},
            }
        ],
    }
    payloads: list[Any] = [chat_chunk(start)]
    payloads += [chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": f}}]}) for f in fragments]
    payloads += [chat_chunk({}, "tool_calls"), "[DONE]"]
    return [sse(p) for p in payloads]


FRAGMENTS = ['{"location": "Par', "is-sur-", 'Seine"}']
WHOLE_ANSWER = json.dumps(
    {
        "id": "chatcmpl-3",
        "object": "chat.completion",
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "It is mild."}, "finish_reason": "stop"}],
    }
).encode()


def mangled(kind: str) -> bytes:
    pieces = call_stream(FRAGMENTS)
    if kind == "a byte that is not UTF-8":
        pieces[2] = pieces[2].replace(b"sur-", b"sur\xff")
    else:  # a gateway's JSON line cut short
        pieces[2] = (
            b'data: {"id": "chatcmpl-2", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"argum\n\n'
        )
    return b"".join(pieces)


def weather_tools(sdk: SimpleNamespace, ran: list[str]) -> Any:
    tools = sdk.package.Tools()

    @tools.get_current_weather.handler
    def weather(args: Any, ctx: Any) -> Any:
        ran.append(args.location)
        return sdk.package.GetCurrentWeatherResult(location=args.location, temperature=18.0, unit="celsius")

    return tools


def drive(sdk: SimpleNamespace, mode: str, model: Any, tools: Any, **options: Any) -> tuple[Any, list[Any]]:
    events: list[Any] = []
    if mode == "sync":
        result = sdk.runtime.run(USER, model, tools, on_event=events.append, **options)
    else:
        result = asyncio.run(sdk.runtime.arun(USER, model, tools, on_event=events.append, **options))
    return result, events


def model(sdk: SimpleNamespace, server: LocalServer, wire: str = "openai-chat") -> Any:
    prefix = {"openai-chat": "/v1", "gemini": "/v1beta"}.get(wire, "")
    return sdk.runtime.HTTPModel(server.base + prefix, "m", wire=wire, api_key="sk-test-key-0123456789")


def errors(events: list[Any]) -> list[dict[str, Any]]:
    return [dict(e.data) for e in events if e.type == "error"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", ["a byte that is not UTF-8", "a JSON line cut short"])
def test_a_corrupt_stream_s_tool_call_never_runs_and_the_step_fails_without_a_retry(
    sdk: SimpleNamespace, server: LocalServer, served: Served, kind: str, mode: str
) -> None:
    served.answers += [Answer(mangled(kind), content_type=SSE)]
    ran: list[str] = []
    result, events = drive(sdk, mode, model(sdk, server), weather_tools(sdk, ran), stream=True, stream_retry=None)
    # Before: the call ran with location 'ParSeine', and the run said finished.
    assert ran == [] and list(result.calls) == []
    assert result.stop_reason == "error"
    assert result.error.type == "corrupt" and result.error.message.startswith("stream payload is not JSON")
    assert result.messages == USER  # no assistant message with the call the model never sent
    skipped = [e.data for e in events if e.type == "tool_call_finished"]
    assert skipped == [
        {
            "id": "call_1",
            "name": "get_current_weather",
            "status": "skipped",
            "error_kind": "corrupt",
            "duration_ms": 0.0,
            "content": None,
        }
    ]
    fatal = [e for e in errors(events) if e["fatal"]]
    assert [(e["type"], e["retry"]) for e in fatal] == [("corrupt", None)]


@pytest.mark.parametrize("mode", MODES)
def test_a_corrupt_stream_is_asked_again_by_default_and_the_retry_answers(
    sdk: SimpleNamespace, server: LocalServer, served: Served, mode: str
) -> None:
    served.answers += [Answer(mangled("a byte that is not UTF-8"), content_type=SSE), Answer(WHOLE_ANSWER)]
    ran: list[str] = []
    result, events = drive(sdk, mode, model(sdk, server), weather_tools(sdk, ran), stream=True)
    assert result.stop_reason == "finished" and result.text == "It is mild." and ran == []
    assert len(server.seen) == 2 and json.loads(server.seen[1].body)["messages"] == USER
    assert result.metrics.model_retries == 1 and result.metrics.model_calls == 2
    retried = [e for e in errors(events) if e["retry"] is not None]
    assert [(e["type"], e["fatal"], e["retry"]) for e in retried] == [("corrupt", False, 2)]


def test_the_model_s_own_arguments_that_are_not_json_go_to_the_tool_as_a_whole_answer_s_do(
    sdk: SimpleNamespace, server: LocalServer, served: Served
) -> None:
    """A stream marked corrupt only because the model wrote arguments that do not parse lost nothing: the call is
    refused by its tool (invalid_json), streamed or not, and the model reads why."""
    broken = '{"location": "Paris"'
    whole = {
        "id": "chatcmpl-2",
        "object": "chat.completion",
        "model": "gpt-4o-mini",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "get_current_weather", "arguments": broken},
                        }
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
    }
    outcomes = []
    for stream in (True, False):
        first = (
            Answer(b"".join(call_stream(['{"location": "Par', 'is"'])), content_type=SSE)
            if stream
            else Answer(json.dumps(whole).encode())
        )
        served.answers += [first, Answer(WHOLE_ANSWER)]
        ran: list[str] = []
        result, _ = drive(sdk, "sync", model(sdk, server), weather_tools(sdk, ran), stream=stream)
        outcomes.append((result.stop_reason, ran, [(c.name, c.status, c.error_kind) for c in result.calls]))
    assert outcomes[0] == outcomes[1] == ("finished", [], [("get_current_weather", "error", "invalid_json")])


# ---- every wire: a text payload that is not UTF-8, or the end event missing ----

ANTHROPIC_START = {
    "type": "message_start",
    "message": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-4-5",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 1},
    },
}
ANTHROPIC = [
    ("message_start", ANTHROPIC_START),
    ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    (
        "content_block_delta",
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hello"}},
    ),
    (
        "content_block_delta",
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": " there."}},
    ),
    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
    (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 3},
        },
    ),
    ("message_stop", {"type": "message_stop"}),
]


def named(events: list[tuple[str, Any]]) -> bytes:
    return sse(*[data for _, data in events], events=[name for name, _ in events])


def gemini_piece(text: str, finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": text}]}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "modelVersion": "gemini-2.5-flash", "responseId": "r1"}


COHERE = [
    (
        "message-start",
        {"id": "c1", "type": "message-start", "delta": {"message": {"role": "assistant", "content": []}}},
    ),
    (
        "content-start",
        {"type": "content-start", "index": 0, "delta": {"message": {"content": {"type": "text", "text": ""}}}},
    ),
    ("content-delta", {"type": "content-delta", "index": 0, "delta": {"message": {"content": {"text": "Hello"}}}}),
    ("content-delta", {"type": "content-delta", "index": 0, "delta": {"message": {"content": {"text": " there."}}}}),
    ("content-end", {"type": "content-end", "index": 0}),
    (
        "message-end",
        {
            "type": "message-end",
            "delta": {"finish_reason": "COMPLETE", "usage": {"tokens": {"input_tokens": 5, "output_tokens": 3}}},
        },
    ),
]


def ollama_line(text: str, done: bool = False) -> bytes:
    line: dict[str, Any] = {
        "model": "qwen3",
        "created_at": "x",
        "message": {"role": "assistant", "content": text},
        "done": done,
    }
    if done:
        line.update(done_reason="stop", prompt_eval_count=5, eval_count=3)
    return json.dumps(line).encode() + b"\n"


STREAMS = {
    "openai-chat": (
        b"".join(
            [
                sse(chat_chunk({"role": "assistant", "content": "Hello"})),
                sse(chat_chunk({"content": " there."})),
                sse(chat_chunk({}, "stop")),
                sse("[DONE]"),
            ]
        ),
        SSE,
    ),
    "anthropic": (named(ANTHROPIC), SSE),
    "gemini": (
        b"".join(
            b"data: " + json.dumps(p).encode() + b"\r\n\r\n"
            for p in (gemini_piece("Hello"), gemini_piece(" there.", "STOP"))
        ),
        SSE,
    ),
    "cohere": (named(COHERE), SSE),
    "ollama": (ollama_line("Hello") + ollama_line(" there.") + ollama_line("", True), "application/x-ndjson"),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("wire", list(STREAMS))
def test_a_text_payload_dropped_as_not_utf8_fails_the_step_on_every_wire(
    sdk: SimpleNamespace, server: LocalServer, served: Served, wire: str, mode: str
) -> None:
    body, kind = STREAMS[wire]
    served.answers += [Answer(body.replace(b"Hello", b"H\xe9llo"), content_type=kind)]
    result, _ = drive(sdk, mode, model(sdk, server, wire), sdk.package.Tools(), stream=True, stream_retry=None)
    # Before: finished, the answer " there." without a word of it saying a piece was lost.
    assert result.stop_reason == "error" and result.error.type == "corrupt", (result.stop_reason, result.text)
    assert "not JSON" in result.error.message
    kept = result.messages[-1]
    assert kept["content"] == " there." and kept["extras"] == {"toolgen": {"incomplete": True, "reason": "corrupt"}}


@pytest.mark.parametrize("mode", MODES)
def test_an_anthropic_stream_without_message_stop_is_cut_and_asked_again(
    sdk: SimpleNamespace, server: LocalServer, served: Served, mode: str
) -> None:
    whole = named(ANTHROPIC)
    cut = named(ANTHROPIC[:-1])
    served.answers += [Answer(cut, content_type=SSE), Answer(whole, content_type=SSE)]
    result, events = drive(sdk, mode, model(sdk, server, "anthropic"), sdk.package.Tools(), stream=True)
    # Before: one request, finished on the cut stream.
    assert len(server.seen) == 2 and result.stop_reason == "finished" and result.text == "Hello there."
    retried = [e for e in errors(events) if e["retry"] is not None]
    assert [(e["type"], e["message"], e["retry"]) for e in retried] == [("cut", "stream ended before message_stop", 2)]
    served.answers += [Answer(cut, content_type=SSE)]
    result, _ = drive(sdk, mode, model(sdk, server, "anthropic"), sdk.package.Tools(), stream=True, stream_retry=None)
    assert result.stop_reason == "error" and (result.error.type, result.error.message) == (
        "cut",
        "stream ended before message_stop",
    )
    assert result.messages[-1]["extras"] == {"toolgen": {"incomplete": True, "reason": "cut"}}


def test_a_scripted_model_s_stream_still_finishes(sdk: SimpleNamespace) -> None:
    scripted = sdk.runtime.ScriptedModel(["Hello there."])
    result, events = drive(sdk, "sync", scripted, sdk.package.Tools(), stream=True)
    assert result.stop_reason == "finished" and result.text == "Hello there." and errors(events) == []


def test_the_chat_span_of_a_corrupt_stream_has_an_error_status(
    sdk: SimpleNamespace, server: LocalServer, served: Served
) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import StatusCode

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    served.answers += [Answer(mangled("a byte that is not UTF-8"), content_type=SSE)]
    drive(
        sdk,
        "sync",
        model(sdk, server),
        weather_tools(sdk, []),
        stream=True,
        stream_retry=None,
        tracer_provider=provider,
    )
    chats = [span for span in exporter.get_finished_spans() if span.name.startswith("chat")]
    assert [(s.status.status_code, s.attributes.get("error.type")) for s in chats] == [(StatusCode.ERROR, "corrupt")]


# ---- StreamRetry matches a provider error's type or its code ----


def test_stream_retry_matches_an_in_stream_error_s_code_as_well_as_its_type(
    sdk: SimpleNamespace, server: LocalServer, served: Served
) -> None:
    error = {
        "error": {"message": "Rate limit reached for gpt-4o-mini", "type": "tokens", "code": "rate_limit_exceeded"}
    }
    broken = sse(chat_chunk({"role": "assistant", "content": "Hel"}), error)
    text, kind = STREAMS["openai-chat"]
    for names in ({"rate_limit_exceeded"}, {"tokens"}):
        served.answers += [Answer(broken, content_type=SSE), Answer(text, content_type=kind)]
        policy = sdk.runtime.StreamRetry(attempts=2, errors=frozenset(names))
        result, events = drive(sdk, "sync", model(sdk, server), sdk.package.Tools(), stream=True, stream_retry=policy)
        # Before: errors={"rate_limit_exceeded"} stopped the run at the first attempt.
        assert result.stop_reason == "finished" and result.text == "Hello there.", names
        retried = [e for e in errors(events) if e["retry"] is not None]
        assert [(e["type"], e["code"], e["retry"]) for e in retried] == [("tokens", "rate_limit_exceeded", 2)]
    policy = sdk.runtime.StreamRetry(errors=frozenset({"rate_limit_exceeded"}))
    assert policy.retries("tokens", 1, "rate_limit_exceeded") and not policy.retries("tokens", 2, "rate_limit_exceeded")
    assert not policy.retries("tokens", 1, "other") and not policy.retries(None, 1)


# ---- the command line ----


def test_the_command_line_says_on_stderr_that_a_stream_broke_off_and_was_asked_again(source_build: Path) -> None:
    text, _ = STREAMS["openai-chat"]
    cut = text[: text.index(b'"finish_reason": "stop"')].rsplit(b"data:", 1)[0]
    for local in serving(queue(Answer(cut, content_type=SSE), Answer(text, content_type=SSE))):
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "TRUTH_KEY": "sk-cli-0123456789"}
        args = ["--base-url", f"{local.base}/v1", "--model", "m", "--api-key-env", "TRUTH_KEY", "--stream", "hi"]
        done = subprocess.run(
            [sys.executable, "-m", SOURCE_PACKAGE, *args],
            cwd=source_build,
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello there.\nHello there.\n"
    # Before: stderr was empty, the two attempts' text one under the other as if the model said it twice.
    assert done.stderr == (
        "the answer's stream broke off, after the text above (stream ended before a finish_reason or [DONE]):"
        " asking the model again (attempt 2)\n"
    )
