"""Streaming's canonical events and aggregated message on hand-written streams of each wire, and its import rule."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from test_stream_framing import (
    bedrock_event,
    calls_of,
    errors_of,
    events_of,
    eventstream_message,
    final,
    fixture,
    splits,
    text_of,
)

from toolgen.runtime.streams.aggregator import (
    Aggregator,
    aaggregate,
    aggregate,
    astream_events,
    detect_wire,
)
from toolgen.runtime.streams.events import (
    Event,
    Finish,
    MessageEnd,
    MessageStart,
    ReasoningDelta,
    StreamError,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)
from toolgen.runtime.wires.canonical import ProviderError, Response
from toolgen.runtime.wires.gemini.stream import PartialArgs, parse_json_path

# ---- wire detection ----


@pytest.mark.parametrize(
    ("payload", "wire"),
    [
        ({"object": "chat.completion.chunk", "choices": []}, "openai-chat"),
        ({"type": "response.created", "response": {}}, "openai-responses"),
        ({"type": "message_start", "message": {}}, "anthropic"),
        ({"candidates": []}, "gemini"),
        ({"event_type": "interaction.created"}, "google-interactions"),
        ({"contentBlockDelta": {}}, "bedrock-converse"),
        ({"model": "m", "message": {}, "done": False}, "ollama"),
        ({"type": "message-start", "delta": {}}, "cohere"),
        ({"something": "else"}, None),
    ],
)
def test_detect_wire(payload: dict[str, Any], wire: str | None) -> None:
    assert detect_wire(payload) == wire


def test_undetectable_stream_is_a_stream_error_not_an_exception() -> None:
    events = events_of(b'{"something": "else"}\n')
    assert "cannot tell which provider wire" in errors_of(events)[0].message
    assert isinstance(final(events), Response)


def test_empty_stream() -> None:
    events = events_of(b"")
    assert [type(e) for e in events] == [StreamError, Finish, MessageEnd]
    assert "before any payload" in errors_of(events)[0].message


# ---- OpenAI chat quirks ----


def test_index_reused_by_a_new_call_id_is_a_new_call() -> None:
    events = events_of(fixture("openai-chat-reused-index.sse"))
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert [(s.index, s.id, s.name) for s in starts] == [(0, "call_first", "lookup"), (1, "call_second", "lookup")]
    assert calls_of(final(events)) == [
        ("call_first", "lookup", {"q": "alpha"}),
        ("call_second", "lookup", {"q": "beta"}),
    ]
    assert not errors_of(events)


def test_call_without_arguments_gets_empty_object() -> None:
    events = events_of(fixture("openai-chat-no-args.sse"))
    ends = [e for e in events if isinstance(e, ToolCallEnd)]
    assert [(e.arguments, e.parsed, e.error) for e in ends] == [("{}", {}, None)]
    assert calls_of(final(events)) == [("call_now", "current_time", {})]
    usage = [e for e in events if isinstance(e, Usage)]
    assert usage and usage[0].usage["input_tokens"] == 50


def test_cut_off_mid_call_keeps_the_text_and_leaves_the_call_out() -> None:
    events = events_of(fixture("openai-chat-cut-mid-call.sse"))
    response = final(events)
    assert isinstance(response, Response)
    assert response.message["content"] == "Let me check the weather." == text_of(events)
    # Nothing runnable is left of the call: not in tool_calls, and its end event has no arguments.
    assert "tool_calls" not in response.message
    end = next(e for e in events if isinstance(e, ToolCallEnd))
    assert (end.id, end.arguments, end.parsed) == ("call_cut", None, None)
    assert end.error is not None and end.error.startswith("cut:")
    stream = response.extras["stream"]
    assert stream["complete"] is False and stream["status"] == "cut"
    assert stream["cut_calls"] == [
        {"index": 0, "id": "call_cut", "name": "get_weather", "arguments_received": '{"city": "Par'}
    ]
    assert response.finish == {"reason": "error", "raw": None}
    assert [e.type for e in errors_of(events)] == ["cut", "cut"]
    assert any("stream ended before" in e.message for e in errors_of(events))
    last = events[-1]
    assert isinstance(last, MessageEnd) and not last.complete and last.status == "cut"


def test_arguments_that_are_not_json_keep_their_raw_text() -> None:
    events = events_of(fixture("openai-chat-invalid-args.sse"))
    response = final(events)
    assert isinstance(response, Response)
    assert response.message["tool_calls"][0]["function"]["arguments"] == '{"q": "x",}'
    assert response.finish == {"reason": "tool_calls", "raw": "tool_calls"}
    assert "not valid JSON" in errors_of(events)[0].message


def test_provider_error_mid_stream_keeps_the_text() -> None:
    events = events_of(fixture("openai-chat-error-midstream.sse"))
    error = errors_of(events)[0]
    assert error.provider and error.type == "server_error"
    response = final(events)
    assert isinstance(response, Response)
    assert response.message["content"] == "Partial answer"
    assert response.finish == {"reason": "error", "raw": "server_error"}


def test_provider_error_before_any_content_is_a_provider_error() -> None:
    body = b'data: {"error": {"message": "Rate limited", "type": "rate_limit_error", "code": "rate_limit"}}\n\n'
    response = aggregate(body, "openai-chat")
    assert isinstance(response, ProviderError)
    assert response.code == "rate_limit"


def test_utf8_crlf_comments_and_ids() -> None:
    data = fixture("openai-chat-utf8-crlf.sse")
    expected = "Grüße 🌍 你好，naïve — ünïcödé ✓"
    whole = events_of(data)
    assert text_of(whole) == expected
    for size in (1, 2, 3):
        assert events_of(splits(data, size)) == whole


def test_payload_dicts_and_sdk_objects_are_accepted() -> None:
    class Chunk:
        def __init__(self, data: dict[str, Any]) -> None:
            self.data = data

        def model_dump(self, **_: Any) -> dict[str, Any]:
            return self.data

    lines = [
        json.loads(line[6:])
        for line in fixture("openai-chat-reused-index.sse").decode().splitlines()
        if line.startswith("data: {")
    ]
    from_dicts = aggregate(lines, "openai-chat")
    from_objects = aggregate([Chunk(line) for line in lines])
    assert from_dicts == from_objects == aggregate(fixture("openai-chat-reused-index.sse"))


def test_source_exception_ends_the_stream_with_partial_message() -> None:
    def broken() -> Iterator[bytes]:
        yield b'data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'
        raise ConnectionError("peer reset")

    events = events_of(broken())  # type: ignore[arg-type]
    assert text_of(events) == "Hi"
    assert any("peer reset" in e.message for e in errors_of(events))
    response = final(events)
    assert isinstance(response, Response) and response.message["content"] == "Hi"


def test_async_front_doors() -> None:
    data = fixture("openai-chat-reused-index.sse")

    async def chunks() -> AsyncIterator[bytes]:
        for piece in splits(data, 17):
            yield piece

    async def run() -> tuple[list[Event], Response | ProviderError]:
        events = [event async for event in astream_events(chunks())]
        return events, await aaggregate(chunks(), "openai-chat")

    events, response = asyncio.run(run())
    assert events == events_of(data)
    assert response == aggregate(data)


def test_aggregator_feed_and_close() -> None:
    aggregator = Aggregator("openai-chat")
    events: list[Event] = []
    for piece in splits(fixture("openai-chat-no-args.sse"), 40):
        events += aggregator.feed(piece)
    assert isinstance(events[0], MessageStart)
    events += aggregator.close()
    assert aggregator.close() == []
    assert aggregator.complete
    assert aggregator.result() == final(events)


# ---- Anthropic ----


def test_anthropic_block_indexes_are_shared_with_text_and_thinking() -> None:
    events = events_of(fixture("anthropic-thinking-text-tool.sse"))
    assert not errors_of(events)
    start = next(e for e in events if isinstance(e, ToolCallStart))
    assert (start.index, start.id, start.name) == (0, "toolu_fx1", "get_weather")
    deltas = "".join(e.arguments for e in events if isinstance(e, ToolCallDelta))
    assert deltas == '{"city": "Paris", "unit": "c"}'
    end = next(e for e in events if isinstance(e, ToolCallEnd))
    assert end.arguments == '{"city":"Paris","unit":"c"}' and end.parsed == {"city": "Paris", "unit": "c"}
    assert text_of(events, ReasoningDelta) == "The user wants Paris weather. Call the tool."
    response = final(events)
    assert isinstance(response, Response)
    content = response.message["content"]
    assert content[0]["type"] == "reasoning" and content[0]["signature"] == "EqQBCgIYAhIM1gbcDa9GJwZA"
    assert content[1] == {"type": "text", "text": "Checking the weather in Paris."}
    assert response.finish == {"reason": "tool_calls", "raw": "tool_use"}


def test_anthropic_error_event() -> None:
    events = events_of(fixture("anthropic-error-midstream.sse"))
    error = errors_of(events)[0]
    assert error.provider and error.type == "overloaded_error"
    response = final(events)
    assert isinstance(response, Response) and response.message["content"] == "Here is the first half"
    assert response.finish is not None and response.finish["reason"] == "error"


# ---- Responses ----


def test_responses_built_from_deltas_when_completed_is_missing() -> None:
    events = events_of(fixture("openai-responses-no-completed.jsonl"))
    response = final(events)
    assert isinstance(response, Response)
    assert text_of(events) == "I'll look both up." == response.message["content"]
    assert calls_of(response) == [
        ("call_one", "get_weather", {"city": "Paris"}),
        ("call_two", "get_time", {"tz": "Europe/Paris"}),
    ]
    assert [e.message for e in errors_of(events)] == ["stream ended before response.completed"]


def test_responses_custom_tool_input_is_a_call_with_a_json_string() -> None:
    events = events_of(fixture("openai-responses-custom-tool.jsonl"))
    assert not errors_of(events)
    live = "".join(e.arguments for e in events if isinstance(e, ToolCallDelta))
    assert live == "SELECT name FROM users WHERE id = 'ü1'"
    end = next(e for e in events if isinstance(e, ToolCallEnd))
    assert (end.id, end.name, end.parsed) == ("call_sql1", "run_sql", live)
    assert calls_of(final(events)) == [("call_sql1", "run_sql", live)]


def test_responses_failure_after_text_keeps_the_text() -> None:
    events = events_of(fixture("openai-responses-failed-after-text.jsonl"))
    assert [(e.provider, e.code) for e in errors_of(events)] == [(True, "server_error")]
    response = final(events)
    assert isinstance(response, Response)
    assert response.message["content"] == "Half an answer" == text_of(events)
    assert response.finish == {"reason": "error", "raw": "server_error"}


# ---- Gemini ----


def test_gemini_partial_args_of_every_value_type() -> None:
    events = events_of(fixture("gemini-partial-args-typed.jsonl"))
    assert not errors_of(events)
    book = {
        "guest": {"name": 'Zoë "Z" Müller\n', "vip": True},
        "nights": 3,
        "rooms": [{"beds": 2, "view": "sea"}, {"beds": 1.5}],
        "note": None,
    }
    ends = [e for e in events if isinstance(e, ToolCallEnd)]
    assert [(e.index, e.name, e.parsed) for e in ends] == [
        (0, "book", book),
        (1, "notify", {"channel": "email", "to": ["a@example.com"]}),
    ]
    for end in ends:
        live = "".join(e.arguments for e in events if isinstance(e, ToolCallDelta) and e.index == end.index)
        assert live == end.arguments
    response = final(events)
    assert isinstance(response, Response)
    assert [call["id"] for call in response.message["tool_calls"]] == [end.id for end in ends]
    assert all(end.id for end in ends)


def test_partial_args_out_of_order_stop_live_text_but_not_the_object() -> None:
    args = PartialArgs()
    pieces = [
        args.apply({"jsonPath": "$.a.x", "numberValue": 1}),
        args.apply({"jsonPath": "$.b", "stringValue": "y"}),
        args.apply({"jsonPath": "$.a.z", "boolValue": False}),
    ]
    assert pieces[:2] == ['{"a":{"x":1', '},"b":"y"'] and pieces[2] == ""
    assert not args.live and args.close() == ""
    assert args.build() == {"a": {"x": 1, "z": False}, "b": "y"}


def test_json_path_parsing() -> None:
    assert parse_json_path("$.a.b[2]['c d'][\"e\"]") == ("a", "b", 2, "c d", "e")
    assert parse_json_path("$") == ()
    assert parse_json_path("a.b") is None
    assert parse_json_path("$.a[") is None


# ---- Bedrock, Ollama, Cohere, Interactions ----


def test_bedrock_reasoning_and_tool_blocks_share_indexes() -> None:
    events = events_of(fixture("bedrock-converse-reasoning-tools.jsonl"))
    assert text_of(events, ReasoningDelta) == "Need the weather for Oslo."
    assert text_of(events) == "Looking it up."
    ends = [e for e in events if isinstance(e, ToolCallEnd)]
    assert [(e.index, e.id, e.arguments) for e in ends] == [
        (0, "tooluse_fx1", '{"city":"Oslo"}'),
        (1, "tooluse_fx2", "{}"),
    ]


def test_bedrock_binary_eventstream() -> None:
    lines = [json.loads(line) for line in fixture("bedrock-converse-reasoning-tools.jsonl").splitlines()]
    binary = b"".join(
        bedrock_event(name, {**payload, "p": "abcdef"}) for line in lines for name, payload in line.items()
    )
    from_binary = events_of(splits(binary, 7))
    assert from_binary == events_of(fixture("bedrock-converse-reasoning-tools.jsonl"))


def test_bedrock_exception_message() -> None:
    body = bedrock_event("messageStart", {"role": "assistant"}) + bedrock_event(
        "contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hel"}}
    )
    body += eventstream_message(
        {":exception-type": "throttlingException", ":message-type": "exception"}, b'{"message":"Too many requests"}'
    )
    events = events_of(body)
    error = errors_of(events)[0]
    assert error.provider and error.code == "throttlingException" and error.message == "Too many requests"
    response = final(events)
    assert isinstance(response, Response) and response.message["content"] == "Hel"


def test_bedrock_corrupt_frame_keeps_what_came_before() -> None:
    good = bedrock_event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "kept"}})
    bad = bytearray(bedrock_event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "lost"}}))
    bad[-1] ^= 1
    events = events_of([good, bytes(bad), good])
    assert text_of(events) == "kept"
    assert "CRC" in errors_of(events)[0].message


def test_ollama_tool_calls_without_ids_get_stable_ids_at_the_end() -> None:
    events = events_of(fixture("ollama-tool-calls.ndjson"))
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert [s.id for s in starts] == [None, None]
    ends = [e for e in events if isinstance(e, ToolCallEnd)]
    assert [(e.name, e.arguments) for e in ends] == [("get_weather", '{"city":"Toronto"}'), ("get_time", "{}")]
    assert all(e.id for e in ends)
    assert events.index(ends[0]) > max(events.index(e) for e in events if isinstance(e, ToolCallDelta))


def test_cohere_text_content() -> None:
    events = events_of(fixture("cohere-text.jsonl"))
    assert text_of(events) == "Hello, world!"


def test_interactions_text_steps() -> None:
    events = events_of(fixture("google-interactions-text.jsonl"))
    assert text_of(events) == "Hi there."


def test_stream_modules_import_only_the_standard_library_pydantic_core_and_siblings() -> None:
    import ast
    import sys

    import toolgen.runtime.streams.aggregator as stream_module

    runtime = Path(stream_module.__file__).parent
    for path in sorted(runtime.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        assert ast.get_docstring(tree), path
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    # Siblings, or the wires layer below.
                    assert node.level == 1 or (node.level == 2 and (node.module or "").startswith("wires.")), path
                else:
                    assert node.module and node.module.split(".")[0] in sys.stdlib_module_names | {
                        "__future__",
                        "pydantic_core",
                    }
            elif isinstance(node, ast.Import):
                assert all(alias.name.split(".")[0] in sys.stdlib_module_names for alias in node.names), path
