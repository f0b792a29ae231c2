"""What a broken stream still keeps: a call whose arguments hold a number JSON cannot carry fails alone, the rest of
the message arriving whole; an answer marked broken keeps the finish the server sent as its raw value."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolgen.runtime import stream_events
from toolgen.runtime.streams.events import MessageEnd, StreamError, ToolCallEnd

START = {
    "type": "message_start",
    "message": {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 50, "output_tokens": 1},
    },
}


def _anthropic(arguments: str) -> bytes:
    events: list[dict[str, Any]] = [
        START,
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        },
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Let me think"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqQBCgIYAhIM"}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "toolu_A", "name": "get_current_weather", "input": {}},
        },
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": arguments}},
        {"type": "content_block_stop", "index": 1},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": 89},
        },
        {"type": "message_stop"},
    ]
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


@pytest.mark.parametrize("number", ["1e400", "-1e400", "Infinity", "NaN"])
def test_a_number_beyond_json_fails_its_call_and_keeps_the_rest(number: str) -> None:
    sent = '{"location": "Paris", "n": ' + number + "}"
    events = list(stream_events(_anthropic(sent), "anthropic"))
    end = events[-1]
    assert isinstance(end, MessageEnd)
    (call,) = [e for e in events if isinstance(e, ToolCallEnd)]
    # The call cannot run: its text as sent, no parsed arguments, and an error saying why.
    assert call.arguments == sent and call.parsed is None
    assert call.error is not None and "JSON cannot carry" in call.error
    assert any(isinstance(e, StreamError) and "JSON cannot carry" in e.message for e in events)
    assert end.status == "corrupt" and not end.complete
    response = end.response
    assert response.message["tool_calls"][0]["function"]["arguments"] == sent
    # Everything else the stream said arrives.
    assert response.message["content"] == [{"type": "reasoning", "text": "Let me think", "signature": "EqQBCgIYAhIM"}]
    assert response.usage == {"input_tokens": 50, "output_tokens": 89}
    assert response.finish == {"reason": "tool_calls", "raw": "tool_use"}
    assert len(response.extras["stream"]["errors"]) == 1


def test_the_largest_float_is_an_ordinary_number() -> None:
    events = list(stream_events(_anthropic('{"location": "Paris", "n": 1.7976931348623157e308}'), "anthropic"))
    end = events[-1]
    assert isinstance(end, MessageEnd) and end.status == "complete"
    (call,) = [e for e in events if isinstance(e, ToolCallEnd)]
    assert call.error is None and call.parsed == {"location": "Paris", "n": 1.7976931348623157e308}


def _chat(*choices: dict[str, Any]) -> bytes:
    head = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000, "model": "gpt-4o"}
    chunks = [{**head, "choices": [choice]} for choice in choices]
    return b"".join(f"data: {json.dumps(chunk)}\n\n".encode() for chunk in chunks) + b"data: [DONE]\n\n"


def test_a_broken_stream_keeps_the_finish_the_server_sent_as_raw() -> None:
    # Content after the choice's finish: the answer is broken, yet the server's own finish is kept, not lost.
    body = _chat(
        {"index": 0, "delta": {"role": "assistant", "content": "Hi"}, "finish_reason": None},
        {"index": 0, "delta": {}, "finish_reason": "length"},
        {"index": 0, "delta": {"content": " more"}, "finish_reason": None},
    )
    end = list(stream_events(body, "openai-chat"))[-1]
    assert isinstance(end, MessageEnd) and end.status == "incomplete"
    assert end.response.finish == {"reason": "error", "raw": "length"}


def _responses(final_arguments: str, *deltas: str) -> bytes:
    head = {"id": "resp_1", "object": "response", "created_at": 1, "status": "in_progress", "model": "gpt-4.1"}

    def item(arguments: str, status: str) -> dict[str, Any]:
        return {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "get_current_weather",
            "arguments": arguments,
            "status": status,
        }

    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {**head, "output": [], "usage": None}},
        {"type": "response.output_item.added", "output_index": 0, "item": item("", "in_progress")},
        *(
            {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0, "delta": d}
            for d in deltas
        ),
        {
            "type": "response.function_call_arguments.done",
            "item_id": "fc_1",
            "output_index": 0,
            "arguments": final_arguments,
        },
        {"type": "response.output_item.done", "output_index": 0, "item": item(final_arguments, "completed")},
        {
            "type": "response.completed",
            "response": {
                **head,
                "status": "completed",
                "output": [item(final_arguments, "completed")],
                "usage": {"input_tokens": 3, "output_tokens": 4, "total_tokens": 7},
            },
        },
    ]
    numbered = [{**event, "sequence_number": n} for n, event in enumerate(events)]
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in numbered)


def test_responses_deltas_that_disagree_with_their_done_event_make_the_stream_incomplete() -> None:
    events = list(stream_events(_responses('{"location":"Lyon"}', '{"location":', '"Paris"}'), "openai-responses"))
    end = events[-1]
    assert isinstance(end, MessageEnd) and end.status == "incomplete"
    (call,) = [e for e in events if isinstance(e, ToolCallEnd)]
    assert call.arguments == '{"location":"Lyon"}'
    assert any("disagree" in e.message for e in events if isinstance(e, StreamError))


@pytest.mark.parametrize(
    ("final", "deltas"),
    [
        ('{"location":"Paris"}', ('{"location":', '"Paris"}')),
        ('{"location": "Paris"}', ('{"location":"Paris"}',)),  # the same value, spaced otherwise
        ('{"location":"Paris"}', ('{"location":',)),  # the done event sends the rest
    ],
)
def test_responses_deltas_that_agree_with_their_done_event_stay_complete(final: str, deltas: tuple[str, ...]) -> None:
    end = list(stream_events(_responses(final, *deltas), "openai-responses"))[-1]
    assert isinstance(end, MessageEnd) and end.status == "complete", end.response.extras
    assert json.loads(end.response.message["tool_calls"][0]["function"]["arguments"]) == {"location": "Paris"}


def test_a_gemini_call_holding_a_number_beyond_json_fails_alone() -> None:
    chunk = (
        '{"candidates":[{"content":{"parts":[{"text":"hello"},{"functionCall":{"name":"get_current_weather",'
        '"args":{"location":"Paris","n":1e400}},"thoughtSignature":"SIG1"}],"role":"model"},"finishReason":"STOP",'
        '"index":0}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":4,"totalTokenCount":7},'
        '"modelVersion":"gemini-2.5-flash","responseId":"r"}'
    )
    events = list(stream_events(f"data: {chunk}\r\n\r\n".encode(), "gemini"))
    end = events[-1]
    assert isinstance(end, MessageEnd) and end.status == "corrupt"
    (call,) = [e for e in events if isinstance(e, ToolCallEnd)]
    assert call.parsed is None and call.error is not None and "JSON cannot carry" in call.error
    response = end.response
    assert response.message["content"] == "hello"
    assert response.usage == {"input_tokens": 3, "output_tokens": 4, "total_tokens": 7}
    assert response.finish == {"reason": "tool_calls", "raw": "STOP"}
    # The call's thought signature is kept for the next request.
    assert response.message["extras"]["gemini"]["blocks"][1]["call"]["rest"] == {"thoughtSignature": "SIG1"}
    assert len(response.extras["stream"]["errors"]) == 1
