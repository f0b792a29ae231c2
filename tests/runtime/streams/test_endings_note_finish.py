"""A finish value a wire's table does not know is kept and read as before, and a note names it and what it was read as.

Every wire with a finish table, whole and streamed: the note sits in `extras["notes"]` of both (a stream's end is
the body its wire's decoder reads), the stream's status is unchanged, and a known value gives no note.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from test_stream_framing import bedrock_event

from toolgen.runtime.streams.aggregator import stream_events
from toolgen.runtime.streams.events import Finish, MessageEnd
from toolgen.runtime.wires.canonical import Response
from toolgen.runtime.wires.codecs import codec
from toolgen.runtime.wires.response_losses import encode_response_noted


def _sse(payloads: list[dict[str, Any]], done: bool = False) -> list[bytes]:
    reads = [b"data: " + json.dumps(payload).encode() + b"\n\n" for payload in payloads]
    return [*reads, b"data: [DONE]\n\n"] if done else reads


def _lines(payloads: list[dict[str, Any]]) -> list[bytes]:
    return [json.dumps(payload).encode() + b"\n" for payload in payloads]


# ---- each wire's whole body and stream, with the finish value given ----


def _chat_whole(value: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi"}, "finish_reason": value}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
    }


def _chat_chunk(delta: dict[str, Any], value: Any = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": value}
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [choice]}


def _chat_stream(value: Any, usage: bool) -> list[bytes]:
    chunks = [_chat_chunk({"role": "assistant", "content": ""}), _chat_chunk({"content": "Hi"}), _chat_chunk({}, value)]
    if usage:
        # stream_options.include_usage: a last chunk with no choices and the usage.
        tail = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": []}
        chunks.append({**tail, "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}})
    return _sse(chunks, done=True)


def _anthropic_whole(value: Any) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "Hi"}],
        "stop_reason": value,
        "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 2},
    }


def anthropic_events(value: Any, delta_usage: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    start = {**_anthropic_whole(None), "content": [], "usage": {"input_tokens": 5, "output_tokens": 1}}
    message_delta: dict[str, Any] = {"type": "message_delta", "delta": {"stop_reason": value, "stop_sequence": None}}
    if delta_usage is not None:
        message_delta["usage"] = delta_usage
    return [
        {"type": "message_start", "message": start},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
        {"type": "content_block_stop", "index": 0},
        message_delta,
        {"type": "message_stop"},
    ]


def anthropic_sse(payloads: list[dict[str, Any]]) -> list[bytes]:
    return [b"event: " + p["type"].encode() + b"\ndata: " + json.dumps(p).encode() + b"\n\n" for p in payloads]


def _anthropic_stream(value: Any) -> list[bytes]:
    return anthropic_sse(anthropic_events(value, {"output_tokens": 2}))


_GEMINI_USAGE = {"promptTokenCount": 3, "candidatesTokenCount": 1, "totalTokenCount": 4}


def _gemini_whole(value: Any) -> dict[str, Any]:
    candidate = {"content": {"role": "model", "parts": [{"text": "Hi"}]}, "finishReason": value, "index": 0}
    return {"candidates": [candidate], "usageMetadata": _GEMINI_USAGE, "modelVersion": "gemini-2.5-flash"}


def _gemini_stream(value: Any) -> list[bytes]:
    first = {"content": {"role": "model", "parts": [{"text": "Hi"}]}, "index": 0}
    last = {"content": {"role": "model", "parts": [{"text": ""}]}, "finishReason": value, "index": 0}
    return _sse(
        [
            {"candidates": [first], "modelVersion": "gemini-2.5-flash"},
            {"candidates": [last], "usageMetadata": _GEMINI_USAGE, "modelVersion": "gemini-2.5-flash"},
        ]
    )


_BEDROCK_USAGE = {"inputTokens": 3, "outputTokens": 1, "totalTokens": 4}


def _bedrock_whole(value: Any) -> dict[str, Any]:
    message = {"role": "assistant", "content": [{"text": "Hi"}]}
    return {"output": {"message": message}, "stopReason": value, "usage": _BEDROCK_USAGE, "metrics": {"latencyMs": 9}}


def bedrock_stream(value: Any, metadata: dict[str, Any] | None) -> list[bytes]:
    """The binary eventstream ConverseStream sends, each payload padded with its `p` field."""
    events = [
        ("messageStart", {"role": "assistant"}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hi"}}),
        ("contentBlockStop", {"contentBlockIndex": 0}),
        ("messageStop", {"stopReason": value}),
    ]
    if metadata is not None:
        events.append(("metadata", metadata))
    return [bedrock_event(name, {**payload, "p": "abcd"}) for name, payload in events]


def _bedrock_stream(value: Any) -> list[bytes]:
    return bedrock_stream(value, {"usage": _BEDROCK_USAGE, "metrics": {"latencyMs": 9}})


_COHERE_USAGE = {
    "billed_units": {"input_tokens": 3, "output_tokens": 1},
    "tokens": {"input_tokens": 9, "output_tokens": 1},
}


def _cohere_whole(value: Any) -> dict[str, Any]:
    message = {"role": "assistant", "content": [{"type": "text", "text": "Hi"}]}
    return {"id": "c-1", "finish_reason": value, "message": message, "usage": _COHERE_USAGE}


def _cohere_stream(value: Any) -> list[bytes]:
    start = {"message": {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": [], "citations": []}}
    return _sse(
        [
            {"id": "c-1", "type": "message-start", "delta": start},
            {"type": "content-start", "index": 0, "delta": {"message": {"content": {"type": "text", "text": ""}}}},
            {"type": "content-delta", "index": 0, "delta": {"message": {"content": {"text": "Hi"}}}},
            {"type": "content-end", "index": 0},
            {"type": "message-end", "delta": {"finish_reason": value, "usage": _COHERE_USAGE}},
        ]
    )


def _ollama_line(content: str, done: bool, value: Any = None) -> dict[str, Any]:
    line: dict[str, Any] = {
        "model": "qwen3:8b",
        "created_at": "2025-01-01T00:00:00Z",
        "message": {"role": "assistant", "content": content},
        "done": done,
    }
    if done:
        line.update({"done_reason": value, "total_duration": 1000, "prompt_eval_count": 3, "eval_count": 1})
    return line


def _ollama_whole(value: Any) -> dict[str, Any]:
    return _ollama_line("Hi", True, value)


def _ollama_stream(value: Any) -> list[bytes]:
    return _lines([_ollama_line("Hi", False), _ollama_line("", True, value)])


_RESPONSES_ITEM = {
    "id": "msg_1",
    "type": "message",
    "status": "completed",
    "role": "assistant",
    "content": [{"type": "output_text", "text": "Hi", "annotations": []}],
}
_RESPONSES_USAGE = {
    "input_tokens": 3,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 1,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 4,
}


def _responses_whole(status: Any, reason: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1700000000,
        "status": status,
        "model": "gpt-5",
        "output": [_RESPONSES_ITEM],
        "usage": _RESPONSES_USAGE,
    }
    if status == "incomplete":
        body["incomplete_details"] = {"reason": reason}
    return body


def _responses_stream(status: Any, reason: Any = None) -> list[bytes]:
    created = {**_responses_whole("in_progress"), "output": [], "usage": None}
    added = {**_RESPONSES_ITEM, "status": "in_progress", "content": []}
    part = {"type": "output_text", "text": "", "annotations": []}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": created},
        {"type": "response.output_item.added", "output_index": 0, "item": added},
        {
            "type": "response.content_part.added",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "part": part,
        },
        {
            "type": "response.output_text.delta",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "delta": "Hi",
        },
        {"type": "response.output_item.done", "output_index": 0, "item": _RESPONSES_ITEM},
        # The event that ends the response; a status not known comes in the completed one's response.
        {
            "type": "response.incomplete" if status == "incomplete" else "response.completed",
            "response": _responses_whole(status, reason),
        },
    ]
    return _sse([{**event, "sequence_number": number} for number, event in enumerate(events)])


def _interactions_whole(status: Any) -> dict[str, Any]:
    return {
        "id": "v1_1",
        "object": "interaction",
        "model": "gemini-2.5-flash",
        "status": status,
        "outputs": [{"type": "text", "text": "Hi"}],
        "usage": {"total_input_tokens": 3, "total_output_tokens": 1, "total_tokens": 4},
    }


def _interactions_stream(status: Any) -> list[bytes]:
    head = {"id": "v1_1", "object": "interaction", "model": "gemini-2.5-flash"}
    usage = {"total_input_tokens": 3, "total_output_tokens": 1, "total_tokens": 4}
    return _sse(
        [
            {"event_type": "interaction.created", "interaction": {**head, "status": "in_progress"}},
            {"event_type": "step.start", "index": 0, "step": {"type": "model_output", "content": []}},
            {"event_type": "step.delta", "index": 0, "delta": {"type": "text", "text": "Hi"}},
            {"event_type": "step.stop", "index": 0},
            {"event_type": "interaction.completed", "interaction": {**head, "status": status, "usage": usage}},
        ]
    )


# wire, whole body, stream, the field named in the note
_WIRES: dict[str, tuple[Callable[[Any], dict[str, Any]], Callable[[Any], list[bytes]], str]] = {
    "openai-chat": (_chat_whole, lambda value: _chat_stream(value, usage=False), "finish_reason"),
    "anthropic": (_anthropic_whole, _anthropic_stream, "stop_reason"),
    "gemini": (_gemini_whole, _gemini_stream, "finishReason"),
    "bedrock-converse": (_bedrock_whole, _bedrock_stream, "stopReason"),
    "cohere": (_cohere_whole, _cohere_stream, "finish_reason"),
    "ollama": (_ollama_whole, _ollama_stream, "done_reason"),
    "openai-responses": (_responses_whole, _responses_stream, "status"),
    "google-interactions": (_interactions_whole, _interactions_stream, "status"),
}

# wire, a value its table does not know, what it is read as (None: no finish)
_UNKNOWN = [
    ("openai-chat", "model_context_window_exceeded", "stop"),
    ("anthropic", "brand_new_reason", "stop"),
    ("gemini", "BRAND_NEW_REASON", "error"),
    ("bedrock-converse", "brand_new_reason", "stop"),
    ("cohere", "BRAND_NEW_REASON", "stop"),
    ("ollama", "brand_new_reason", "stop"),
    ("openai-responses", "brand_new_status", None),
    ("google-interactions", "brand_new_status", None),
]

# Values each table knows: no note.
_KNOWN = [
    ("openai-chat", "stop"),
    ("openai-chat", "length"),
    ("anthropic", "end_turn"),
    ("anthropic", "max_tokens"),
    ("gemini", "STOP"),
    ("gemini", "MAX_TOKENS"),
    ("bedrock-converse", "end_turn"),
    ("bedrock-converse", "max_tokens"),
    ("cohere", "COMPLETE"),
    ("cohere", "MAX_TOKENS"),
    ("ollama", "stop"),
    ("ollama", "length"),
    ("openai-responses", "completed"),
    ("google-interactions", "completed"),
]


def note(wire: str, field: str, raw: Any, read: str | None) -> dict[str, Any]:
    said = f"read as {read!r}" if read else "no finish is read from it"
    return {
        "type": "unknown_finish",
        "message": f"{wire} sent {field} {raw!r}, a value toolgen does not know: {said}",
        "raw": raw,
    }


def whole(wire: str, body: dict[str, Any]) -> Response:
    response = codec(wire).decode_response(body)
    assert isinstance(response, Response)
    return response


def end_of(reads: list[bytes], wire: str) -> tuple[MessageEnd, list[Finish]]:
    events = list(stream_events(reads, wire))
    end = events[-1]
    assert isinstance(end, MessageEnd)
    return end, [event for event in events if isinstance(event, Finish)]


@pytest.mark.parametrize(("wire", "raw", "read"), _UNKNOWN)
def test_an_unknown_finish_value_of_a_whole_body_is_noted(wire: str, raw: str, read: str | None) -> None:
    make, _, field = _WIRES[wire]
    response = whole(wire, make(raw))
    assert response.extras["notes"] == [note(wire, field, raw, read)]
    if read is None:
        assert response.finish is None
    else:
        assert response.finish == {"reason": read, "raw": raw}


@pytest.mark.parametrize(("wire", "raw", "read"), _UNKNOWN)
def test_an_unknown_finish_value_of_a_stream_is_noted_and_the_status_stands(
    wire: str, raw: str, read: str | None
) -> None:
    make_whole, make_stream, field = _WIRES[wire]
    end, finishes = end_of(make_stream(raw), wire)
    assert (end.status, end.complete) == ("complete", True)
    assert isinstance(end.response, Response)
    assert end.response.extras["notes"] == [note(wire, field, raw, read)]
    # Nothing about the stream itself: the note is the body's, where the same body fetched whole has it.
    assert "stream" not in end.response.extras
    assert end.response.extras["notes"] == whole(wire, make_whole(raw)).extras["notes"]
    if read is not None:
        assert [(f.reason, f.raw) for f in finishes] == [(read, raw)]


@pytest.mark.parametrize(("wire", "raw"), _KNOWN)
def test_a_known_finish_value_gives_no_note(wire: str, raw: str) -> None:
    make_whole, make_stream, _ = _WIRES[wire]
    assert "notes" not in whole(wire, make_whole(raw)).extras
    end, _ = end_of(make_stream(raw), wire)
    assert end.status == "complete" and isinstance(end.response, Response)
    assert "notes" not in end.response.extras and "stream" not in end.response.extras


def test_a_chat_stream_with_usage_takes_the_decoder_and_notes_the_same() -> None:
    end, _ = end_of(_chat_stream("model_context_window_exceeded", usage=True), "openai-chat")
    assert end.status == "complete" and isinstance(end.response, Response)
    assert end.response.usage is not None
    assert end.response.extras["notes"] == [
        note("openai-chat", "finish_reason", "model_context_window_exceeded", "stop")
    ]


def test_a_chat_finish_value_that_is_no_string_is_noted() -> None:
    response = whole("openai-chat", _chat_whole(7))
    assert response.finish == {"reason": "stop", "raw": 7}
    assert response.extras["notes"] == [note("openai-chat", "finish_reason", 7, "stop")]


def test_a_chat_finish_value_with_calls_is_read_as_tool_calls_and_noted() -> None:
    body = _chat_whole("odd")
    call = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    body["choices"][0]["message"] = {"role": "assistant", "content": None, "tool_calls": [call]}
    response = whole("openai-chat", body)
    assert response.extras["notes"] == [note("openai-chat", "finish_reason", "odd", "tool_calls")]


def test_a_mistral_body_names_its_own_wire() -> None:
    body = _chat_whole("odd")
    response = codec("mistral").decode_response(body)
    assert isinstance(response, Response)
    assert response.extras["notes"] == [note("mistral", "finish_reason", "odd", "stop")]


def test_gemini_numbers_the_table_does_not_know_are_noted() -> None:
    response = whole("gemini", _gemini_whole(42))
    assert response.finish == {"reason": "content_filter", "raw": "42"}
    assert response.extras["notes"] == [note("gemini", "finishReason", "42", "content_filter")]
    assert "notes" not in whole("gemini", _gemini_whole(1)).extras


def test_a_responses_incomplete_reason_the_table_does_not_know_is_noted() -> None:
    response = whole("openai-responses", _responses_whole("incomplete", "brand_new_reason"))
    assert response.finish == {"reason": "length", "raw": "incomplete"}
    expected = [note("openai-responses", "incomplete_details.reason", "brand_new_reason", "length")]
    assert response.extras["notes"] == expected
    end, _ = end_of(_responses_stream("incomplete", "brand_new_reason"), "openai-responses")
    assert end.status == "complete" and isinstance(end.response, Response)
    assert end.response.extras["notes"] == expected
    for known in ("max_output_tokens", "content_filter"):
        assert "notes" not in whole("openai-responses", _responses_whole("incomplete", known)).extras
        end, _ = end_of(_responses_stream("incomplete", known), "openai-responses")
        assert isinstance(end.response, Response) and "notes" not in end.response.extras


@pytest.mark.parametrize("wire", ["openai-responses", "google-interactions"])
def test_a_status_that_says_no_finish_yet_is_no_unknown_value(wire: str) -> None:
    make, _, _ = _WIRES[wire]
    response = whole(wire, make("in_progress"))
    assert response.finish is None and "notes" not in response.extras


def test_the_same_wire_gives_the_unknown_value_back_and_another_wire_says_it_cannot() -> None:
    response = whole("openai-chat", _chat_whole("model_context_window_exceeded"))
    same = encode_response_noted(response, "openai-chat")
    assert same.body["choices"][0]["finish_reason"] == "model_context_window_exceeded"
    assert not [n for n in same.notes if n.startswith("/finish")]
    other = encode_response_noted(response, "anthropic")
    assert other.body["stop_reason"] == "end_turn"
    assert [n for n in other.notes if n.startswith("/finish")] == [
        "/finish: 'model_context_window_exceeded' is a finish value toolgen does not know (read as 'stop');"
        " anthropic sends its own word for 'stop' instead"
    ]
    known = encode_response_noted(whole("openai-chat", _chat_whole("length")), "anthropic")
    assert not [n for n in known.notes if n.startswith("/finish")]
