"""A stream request answered with one whole response body: every wire's whole body, however it arrives, gives the
events a stream of it would, ending with the message the wire's own decode_response gives.

Bodies are every recorded whole response in ../shared/payloads (when present) and hand-written ones from each
wire's documented format. Each is fed as one chunk, cut into random pieces, pretty-printed over many lines (LF and
CRLF) and cut, framed as one SSE event, and handed over decoded; with and without a JSON content type; sync and
async. Error bodies end `failed` with the provider's error; a body the decoder cannot read, a cut one, or one with
more after it never ends `complete`. Real streams (recorded ones, mislabelled as JSON too) are read as before.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any

import pytest
from support.projects import SHARED

from toolgen.runtime.streams import whole
from toolgen.runtime.streams.aggregator import Aggregator, astream_events, stream_events
from toolgen.runtime.streams.events import (
    Event,
    Finish,
    MessageEnd,
    MessageStart,
    ReasoningDelta,
    StreamError,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)
from toolgen.runtime.streams.framing import AutoDecoder, Frame, JSONDocumentDecoder, iter_frames
from toolgen.runtime.wires.canonical import ProviderError, Response, parts_of
from toolgen.runtime.wires.codecs import conversion, decode, encode_error
from toolgen.runtime.wires.table import ROWS

PAYLOADS = SHARED / "payloads"
JSON = "application/json; charset=utf-8"
STREAMED = sorted(row.name for row in ROWS if row.stream is not None)


def _q(value: Any) -> str:
    return json.dumps(value)


# Hand-written whole bodies, one or more a wire, from each provider's documented response format.
HAND: dict[str, tuple[str, dict[str, Any]]] = {
    "openai-chat-two-calls": (
        "openai-chat",
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "gpt-4o-mini",
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": "Checking both.",
                        "tool_calls": [
                            {
                                "id": "call_a",
                                "type": "function",
                                "function": {"name": "get_weather", "arguments": _q({"location": "Paris"})},
                            },
                            {
                                "id": "call_b",
                                "type": "function",
                                "function": {"name": "get_weather", "arguments": _q({"location": "Oslo", "n": "é"})},
                            },
                        ],
                    },
                    "finish_reason": "tool_calls",
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30},
        },
    ),
    "openai-chat-text": (
        "openai-chat",
        {
            "id": "chatcmpl-2",
            "object": "chat.completion",
            "model": "m",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": "It is sunny."}, "finish_reason": "stop"}
            ],
        },
    ),
    "mistral-call": (
        "mistral",
        {
            "id": "m1",
            "object": "chat.completion",
            "created": 1,
            "model": "mistral-small-latest",
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [
                            {
                                "id": "abc123XYZ",
                                "function": {"name": "get_weather", "arguments": _q({"location": "Paris"})},
                                "index": 0,
                            }
                        ],
                    },
                    "finish_reason": "tool_calls",
                }
            ],
            "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12},
        },
    ),
    "responses-call": (
        "openai-responses",
        {
            "id": "resp_1",
            "object": "response",
            "created_at": 1,
            "status": "completed",
            "model": "gpt-4.1",
            "output": [
                {
                    "type": "message",
                    "id": "msg_1",
                    "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "Checking.", "annotations": []}],
                },
                {
                    "type": "function_call",
                    "id": "fc_1",
                    "call_id": "call_a",
                    "name": "get_weather",
                    "arguments": _q({"location": "Paris"}),
                    "status": "completed",
                },
            ],
            "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
        },
    ),
    "anthropic-thinking-two-calls": (
        "anthropic",
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4",
            "content": [
                {"type": "thinking", "thinking": "Two cities.", "signature": "c2ln"},
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"location": "Paris"}},
                {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {"location": "Oslo"}},
            ],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 20},
        },
    ),
    "gemini-call": (
        "gemini",
        {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [
                            {"text": "Checking."},
                            {"functionCall": {"name": "get_weather", "args": {"location": "Paris"}}},
                        ],
                    },
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
            "modelVersion": "gemini-2.5-flash",
            "responseId": "r1",
        },
    ),
    "interactions-call": (
        "google-interactions",
        {
            "id": "v1_x",
            "object": "interaction",
            "model": "gemini-2.5-flash",
            "status": "requires_action",
            "steps": [
                {"type": "function_call", "id": "fc1", "name": "get_weather", "arguments": {"location": "Paris"}}
            ],
            "usage": {"total_input_tokens": 5, "total_output_tokens": 3, "total_tokens": 8},
        },
    ),
    "bedrock-call": (
        "bedrock-converse",
        {
            "output": {
                "message": {
                    "role": "assistant",
                    "content": [
                        {"text": "Checking."},
                        {"toolUse": {"toolUseId": "tooluse_1", "name": "get_weather", "input": {"location": "Paris"}}},
                    ],
                }
            },
            "stopReason": "tool_use",
            "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
            "metrics": {"latencyMs": 100},
        },
    ),
    "ollama-call": (
        "ollama",
        {
            "model": "llama3.2",
            "created_at": "2025-01-01T00:00:00Z",
            "message": {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"function": {"name": "get_weather", "arguments": {"location": "Paris"}}}],
            },
            "done_reason": "stop",
            "done": True,
            "prompt_eval_count": 10,
            "eval_count": 5,
        },
    ),
    "cohere-call": (
        "cohere",
        {
            "id": "c1",
            "finish_reason": "TOOL_CALL",
            "message": {
                "role": "assistant",
                "tool_plan": "I will check.",
                "tool_calls": [
                    {
                        "id": "get_weather_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": _q({"location": "Paris"})},
                    }
                ],
            },
            "usage": {"billed_units": {"input_tokens": 5, "output_tokens": 3}, "tokens": {"input_tokens": 10}},
        },
    ),
}


def _recorded() -> list[Any]:
    if not PAYLOADS.is_dir():
        return [pytest.param(None, None, marks=pytest.mark.skip(reason=f"../shared/payloads not present ({PAYLOADS})"))]
    return [
        pytest.param(path.parts[-3], path, id=f"{path.parts[-3]}/{path.stem}")
        for path in sorted(PAYLOADS.glob("*/response/*.json"))
        if path.parts[-3] in STREAMED
    ]


RECORDED = _recorded()


def _body(wire: str | None, source: Path | dict[str, Any] | None) -> tuple[str, Any]:
    assert wire is not None and source is not None
    return wire, json.loads(source.read_bytes()) if isinstance(source, Path) else source


def _pieces(data: bytes, rng: random.Random) -> list[bytes]:
    cuts = sorted({rng.randrange(1, len(data)) for _ in range(rng.randrange(1, 24))})
    bounds = [0, *cuts, len(data)]
    return [data[a:b] for a, b in zip(bounds, bounds[1:], strict=False) if b > a]


def _ways(body: Any, seed: str) -> list[tuple[str, list[Any]]]:
    """The same whole body, as a server (or an SDK) may hand it over."""
    rng = random.Random(seed)
    compact = json.dumps(body, ensure_ascii=False).encode()
    pretty = json.dumps(body, indent=2, ensure_ascii=False).encode()
    crlf = pretty.replace(b"\n", b"\r\n") + b"\r\n"
    return [
        ("one chunk", [compact]),
        ("one chunk and LF", [compact + b"\n"]),
        ("pieces", _pieces(compact, rng)),
        ("pretty", [pretty]),
        ("pretty pieces", _pieces(pretty, rng)),
        ("pretty CRLF pieces", _pieces(crlf, rng)),
        # Byte by byte where that stays quick: the recorded bodies run to tens of kilobytes.
        ("pretty byte by byte", [pretty[i : i + 1] for i in range(len(pretty))] if len(pretty) <= 4000 else [pretty]),
        ("BOM and blank lines", _pieces(b"\xef\xbb\xbf\n\n" + pretty + b"\n\n", rng)),
        ("one SSE event", [b"data: " + compact + b"\n\n"]),
        ("SSE event and [DONE]", [b"data: " + compact + b"\n\ndata: [DONE]\n\n"]),
        ("decoded", [body]),
    ]


def _expected(wire: str, body: Any) -> Response | ProviderError:
    result: Response | ProviderError = conversion(wire, "decode_response")(body)
    return result


def _check(events: list[Event], expected: Response | ProviderError) -> None:
    """The events of a whole body: the canonical sequence, each call whole, the decoder's message at the end."""
    assert isinstance(events[0], (MessageStart, StreamError)), events[:2]
    ends = [event for event in events if isinstance(event, MessageEnd)]
    assert len(ends) == 1 and events[-1] is ends[0]
    end = ends[0]
    finishes = [event for event in events if isinstance(event, Finish)]
    assert len(finishes) == 1 and events[-2] is finishes[0]
    if isinstance(expected, ProviderError):
        assert end.status == "failed" and not end.complete
        assert isinstance(end.response, ProviderError)
        assert end.response.to_json() == expected.to_json()
        return
    assert not [event for event in events if isinstance(event, StreamError)], events
    assert end.status == "complete" and end.complete
    assert end.response == expected
    message = expected.message
    parts = parts_of(message.get("content"))
    texts = "".join(p["text"] for p in parts if p.get("type") == "text" and isinstance(p.get("text"), str))
    thoughts = "".join(p["text"] for p in parts if p.get("type") == "reasoning" and isinstance(p.get("text"), str))
    # Said once: nothing doubled, nothing lost.
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == texts
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == thoughts
    calls = message.get("tool_calls") or []
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    call_ends = {e.index: e for e in events if isinstance(e, ToolCallEnd)}
    assert [e.index for e in starts] == list(range(len(calls))) == sorted(call_ends)
    for index, call in enumerate(calls):
        arguments = call["function"]["arguments"]
        sent = "".join(e.arguments for e in events if isinstance(e, ToolCallDelta) and e.index == index)
        assert sent == arguments
        end_event = call_ends[index]
        assert (end_event.id, end_event.name) == (call["id"], call["function"]["name"])
        assert end_event.arguments == (arguments if arguments.strip() else "{}")
        assert end_event.error is None or "not a JSON object" in end_event.error
    usage = [e for e in events if isinstance(e, Usage)]
    assert [u.usage for u in usage] == ([expected.usage] if expected.usage else [])


def _all_ways(wire: str, body: Any, seed: str) -> None:
    expected = _expected(wire, body)
    for how, chunks in _ways(body, seed):
        for content_type in (None, JSON):
            try:
                _check(list(stream_events(chunks, wire, content_type=content_type)), expected)
            except AssertionError as error:
                raise AssertionError(f"{how}, content type {content_type}: {error}") from error


@pytest.mark.parametrize(("wire", "path"), RECORDED)
def test_recorded_whole_bodies_give_the_events_of_their_message(wire: str | None, path: Path | None) -> None:
    wire, body = _body(wire, path)
    _all_ways(wire, body, str(path))


@pytest.mark.parametrize("name", sorted(HAND))
def test_documented_whole_bodies_give_the_events_of_their_message(name: str) -> None:
    wire, body = HAND[name]
    expected = _expected(wire, body)
    assert isinstance(expected, Response) and (name.endswith("text") or expected.message.get("tool_calls"))
    _all_ways(wire, body, name)


def test_every_streamed_wire_has_a_hand_written_body_and_shapes() -> None:
    assert {wire for wire, _ in HAND.values()} == set(STREAMED)
    assert {row.package for row in ROWS if row.stream is not None} <= set(whole.SHAPES)


async def _aiter(chunks: Iterable[Any]) -> AsyncIterator[Any]:
    for chunk in chunks:
        await asyncio.sleep(0)
        yield chunk


@pytest.mark.parametrize("name", sorted(HAND))
def test_async_streams_of_whole_bodies_give_the_same_events(name: str) -> None:
    wire, body = HAND[name]

    async def collect(chunks: list[Any]) -> list[Event]:
        return [event async for event in astream_events(_aiter(chunks), wire, content_type=JSON)]

    for _, chunks in _ways(body, name):
        events = asyncio.run(collect(chunks))
        _check(events, _expected(wire, body))
        assert events == list(stream_events(chunks, wire, content_type=JSON))


@pytest.mark.parametrize("name", sorted(HAND))
def test_feeding_an_aggregator_chunk_by_chunk_gives_the_same(name: str) -> None:
    wire, body = HAND[name]
    pretty = json.dumps(body, indent=2).encode()
    aggregator = Aggregator(wire)
    events = [event for piece in _pieces(pretty, random.Random(name)) for event in aggregator.feed(piece)]
    events += aggregator.close()
    _check(events, _expected(wire, body))
    assert aggregator.complete and aggregator.wire == wire and aggregator.result() == _expected(wire, body)


@pytest.mark.parametrize("name", sorted(HAND))
def test_whole_bodies_without_a_wire_are_read_as_the_wire_detected(name: str) -> None:
    _, body = HAND[name]
    events = list(stream_events(json.dumps(body, indent=2).encode()))
    end = events[-1]
    assert isinstance(end, MessageEnd) and end.status == "complete", events
    assert end.response == decode(body)


@pytest.mark.parametrize("wire", STREAMED)
def test_error_bodies_of_every_wire_end_failed_with_the_providers_error(wire: str) -> None:
    body = encode_error(ProviderError(wire, "model not found", type="not_found_error", code="404", status=404), wire)
    expected = _expected(wire, body)
    assert isinstance(expected, ProviderError)
    for how, chunks in _ways(body, wire):
        events = list(stream_events(chunks, wire, content_type=JSON))
        assert [e for e in events if isinstance(e, StreamError) and e.provider], how
        _check(events, expected)


# Bodies shaped as a whole response of their wire that its decoder cannot read.
UNREADABLE = [
    ("openai-chat", {"object": "chat.completion", "choices": [{"index": 0, "message": 5}]}),
    (
        "mistral",
        {"object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "tool_calls": [5]}}]},
    ),
    ("openai-responses", {"object": "response", "output": 5}),
    ("anthropic", {"type": "message", "role": "assistant", "content": 5}),
    ("bedrock-converse", {"output": 5, "stopReason": "end_turn"}),
    ("cohere", {"id": "c", "message": 5, "finish_reason": "COMPLETE"}),
    ("google-interactions", {"object": "interaction", "steps": 5}),
    ("ollama", {"done": True, "message": 5}),
]


@pytest.mark.parametrize(("wire", "body"), UNREADABLE, ids=[w for w, _ in UNREADABLE])
def test_a_whole_body_the_decoder_cannot_read_is_never_complete(wire: str, body: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        conversion(wire, "decode_response")(body)
    for content_type in (None, JSON):
        events = list(stream_events(json.dumps(body, indent=1).encode(), wire, content_type=content_type))
        end = events[-1]
        assert isinstance(end, MessageEnd) and end.status != "complete" and not end.complete
        assert any(isinstance(e, StreamError) and "could not be read" in e.message for e in events)


@pytest.mark.parametrize("name", sorted(HAND))
def test_a_cut_whole_body_or_one_with_more_after_it_is_never_complete(name: str) -> None:
    wire, body = HAND[name]
    for data in (json.dumps(body).encode(), json.dumps(body, indent=2).encode()):
        for cut in sorted({1, len(data) // 3, len(data) // 2, len(data) - 1}):
            end = list(stream_events([data[:cut]], wire, content_type=JSON))[-1]
            assert isinstance(end, MessageEnd) and not end.complete and end.status != "complete", cut
        # Gemini's body is its stream of one chunk, read by the stream state: another object is another chunk to it
        # (the same one again, a repeat), as in any Gemini stream.
        more = [] if wire == "gemini" else [b"\n" + data, b'\n{"more": true}']
        for extra in (b"\nnot json", b" [1, 2]", *more):
            events = list(stream_events(_pieces(data + extra, random.Random(name)), wire))
            end = events[-1]
            assert isinstance(end, MessageEnd) and not end.complete and end.status != "complete", extra
            assert any(isinstance(e, StreamError) for e in events)


def test_a_body_that_is_no_response_of_the_wire_is_never_complete() -> None:
    for wire in STREAMED:
        for content_type in (None, JSON):
            end = list(stream_events(b'{\n  "hello": "world"\n}\n', wire, content_type=content_type))[-1]
            assert isinstance(end, MessageEnd) and not end.complete, (wire, content_type)


# ---- real streams are read as before ----


def _recorded_streams() -> list[Any]:
    if not PAYLOADS.is_dir():
        return [pytest.param(None, None, marks=pytest.mark.skip(reason=f"../shared/payloads not present ({PAYLOADS})"))]
    return [
        pytest.param(path.parts[-3], path, id=f"{path.parts[-3]}/{path.name}")
        for path in sorted(PAYLOADS.glob("*/stream/*"))
    ]


@pytest.mark.parametrize(("wire", "path"), _recorded_streams())
def test_recorded_streams_read_the_same_whatever_their_content_type(wire: str | None, path: Path | None) -> None:
    assert wire is not None and path is not None
    data = path.read_bytes()
    plain = list(stream_events(data, wire))
    # A stream labelled JSON (a proxy's mistake, or Gemini's alt=json array, which is JSON) is still a stream.
    for content_type in (JSON, "text/event-stream", "application/x-ndjson"):
        pieces = _pieces(data, random.Random(path.name))
        assert _same_but_errors(plain, list(stream_events(pieces, wire, content_type=content_type))), content_type


def _same_but_errors(one: list[Event], other: list[Event]) -> bool:
    """Equal, a ProviderError (compared by identity) standing in as its JSON."""

    def value(event: Event) -> Any:
        if isinstance(event, MessageEnd) and isinstance(event.response, ProviderError):
            return ("end", event.response.to_json(), event.status)
        return event

    return [value(e) for e in one] == [value(e) for e in other]


def test_the_whole_body_check_runs_once_a_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[Any] = []
    real = whole.is_whole

    def counted(*args: Any, **kwargs: Any) -> bool:
        asked.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(whole, "is_whole", counted)
    chunk = {"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "ha "}}]}
    body = b"".join(b"data: " + json.dumps(chunk).encode() + b"\n\n" for _ in range(200)) + b"data: [DONE]\n\n"
    events = list(stream_events(_pieces(body, random.Random(1)), "openai-chat", content_type="text/event-stream"))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "ha " * 200
    assert asked == [chunk]


# ---- framing a body that is one JSON document ----


def test_a_pretty_printed_body_is_framed_as_one_document_and_json_lines_stay_lines() -> None:
    body = {"a": {"b": [1, 2, {"c": '}{\\"]['}]}, "d": "é"}
    pretty = json.dumps(body, indent=2, ensure_ascii=False).encode()
    for size in (1, 2, 7, len(pretty)):
        decoder = AutoDecoder()
        frames = list(iter_frames([pretty[i : i + size] for i in range(0, len(pretty), size)], decoder))
        assert decoder.framing == "json" and [json.loads(f.data) for f in frames] == [body]
    lines = b'{"a": 1}\n{"b": 2}\n'
    for size in (1, 3, len(lines)):
        decoder = AutoDecoder()
        frames = list(iter_frames([lines[i : i + size] for i in range(0, len(lines), size)], decoder))
        assert decoder.framing == "jsonl" and frames == [Frame(None, b'{"a": 1}'), Frame(None, b'{"b": 2}')]
    decoder = AutoDecoder()
    assert list(iter_frames([b'\xef\xbb\xbf {"a":', b" 1}"], decoder)) == [Frame(None, b'{"a": 1}')]


def test_text_between_json_documents_is_handed_on_not_skipped() -> None:
    decoder = JSONDocumentDecoder()
    frames = decoder.feed(b'{"a": 1}\n junk \n{"b":\n 2}\n[{"c": 3}]') + decoder.close()
    assert frames == [
        Frame(None, b'{"a": 1}'),
        Frame(None, b"junk"),
        Frame(None, b'{"b":\n 2}'),
        Frame(None, b'{"c": 3}'),
    ]
    decoder = JSONDocumentDecoder()
    assert decoder.feed(b'{"a": {"b": ') == [] and decoder.close() == [Frame(None, b'{"a": {"b": ')]
