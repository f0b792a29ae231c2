"""Per-call provider data in OpenAI-compatible stream deltas survives aggregation and the next request."""

from __future__ import annotations

import json
from typing import Any

from toolgen.runtime.streams.aggregator import aggregate, stream_events
from toolgen.runtime.streams.events import MessageStart
from toolgen.runtime.wires.canonical import Request, Response
from toolgen.runtime.wires.codecs import decode, encode_request


def sse(chunks: list[dict[str, Any]]) -> bytes:
    body = b"".join(b"data: " + json.dumps(chunk).encode() + b"\n\n" for chunk in chunks)
    return body + b"data: [DONE]\n\n"


def chunk(delta: dict[str, Any], finish: str | None = None, **head: Any) -> dict[str, Any]:
    base = {"id": "chatcmpl-7", "object": "chat.completion.chunk", "created": 1733000000, "model": "gpt-4o"}
    return {**base, **head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


AZURE_PREAMBLE = {
    "choices": [],
    "created": 0,
    "id": "",
    "model": "",
    "object": "",
    "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {"hate": {"filtered": False}}}],
}


def next_request_message(response: Response) -> dict[str, Any]:
    conversation = [
        {"role": "user", "content": "weather in Paris?"},
        response.message,
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    ]
    body = encode_request(Request(conversation, model="gpt-4o"), "openai-chat")
    message: dict[str, Any] = body["messages"][1]
    return message


def test_azure_preamble_does_not_blank_the_id_model_created_or_fingerprint() -> None:
    stream = sse(
        [
            AZURE_PREAMBLE,
            chunk({"role": "assistant", "content": ""}, system_fingerprint="fp_azure"),
            chunk({"content": "Hi"}),
            chunk({}, "stop"),
        ]
    )
    start = next(event for event in stream_events([stream]) if isinstance(event, MessageStart))
    assert (start.id, start.model) == ("chatcmpl-7", "gpt-4o")
    response = aggregate([stream])
    assert (response.id, response.model) == ("chatcmpl-7", "gpt-4o")
    fields = response.extras["openai-chat"]["fields"]
    assert fields["created"] == 1733000000
    assert fields["system_fingerprint"] == "fp_azure"
    # The preamble's own data is kept, not thrown away with its placeholders.
    assert fields["prompt_filter_results"] == AZURE_PREAMBLE["prompt_filter_results"]


def test_a_streamed_calls_own_data_reaches_the_next_request_as_a_whole_responses_does() -> None:
    google = {"google": {"thought_signature": "c2lnbmF0dXJl"}}
    stream = sse(
        [
            chunk({"role": "assistant"}),
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": '{"city"'},
                            "extra_content": google,
                        }
                    ]
                }
            ),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": ':"Paris"}'}}]}),
            chunk({}, "tool_calls"),
        ]
    )
    streamed = aggregate([stream])
    whole = decode(
        {
            "id": "chatcmpl-7",
            "object": "chat.completion",
            "created": 1733000000,
            "model": "gpt-4o",
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
                                "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                                "extra_content": google,
                            }
                        ],
                    },
                    "finish_reason": "tool_calls",
                }
            ],
        },
        "openai-chat",
        "response",
    )
    assert isinstance(whole, Response)
    assert streamed.message == whole.message
    sent = next_request_message(streamed)
    assert sent["tool_calls"][0]["extra_content"] == google
    assert sent["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"city":"Paris"}'}


def test_continuation_deltas_repeating_empty_ids_change_no_call_data() -> None:
    stream = sse(
        [
            chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "f"}}]}),
            chunk({"tool_calls": [{"index": 0, "id": "", "type": "function", "function": {"arguments": "{}"}}]}),
            chunk({}, "tool_calls"),
        ]
    )
    call = aggregate([stream]).message["tool_calls"][0]
    assert call == {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}


def test_indexed_reasoning_details_are_merged_by_index() -> None:
    stream = sse(
        [
            chunk(
                {
                    "role": "assistant",
                    "reasoning_details": [
                        {"type": "reasoning.text", "text": "Let me ", "index": 0, "format": "anthropic-claude-v1"}
                    ],
                }
            ),
            chunk({"reasoning_details": [{"type": "reasoning.text", "text": "check.", "index": 0}]}),
            chunk({"reasoning_details": [{"type": "reasoning.text", "signature": "ErcBCkgI", "index": 0}]}),
            chunk({"reasoning_details": [{"type": "reasoning.encrypted", "data": "opaque", "index": 1}]}),
            chunk(
                {
                    "tool_calls": [
                        {"index": 0, "id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                    ]
                }
            ),
            chunk({}, "tool_calls"),
        ]
    )
    response = aggregate([stream])
    whole_entries = [
        {
            "type": "reasoning.text",
            "text": "Let me check.",
            "index": 0,
            "format": "anthropic-claude-v1",
            "signature": "ErcBCkgI",
        },
        {"type": "reasoning.encrypted", "data": "opaque", "index": 1},
    ]
    assert next_request_message(response)["reasoning_details"] == whole_entries


def test_streamed_audio_output_is_joined_into_one_audio_object() -> None:
    stream = sse(
        [
            chunk({"role": "assistant", "audio": {"id": "audio_1", "transcript": "Hel"}}),
            chunk({"audio": {"transcript": "lo", "data": "UklG"}}),
            chunk({"audio": {"data": "RgAA", "expires_at": 1733003600}}),
            chunk({}, "stop"),
        ]
    )
    fields = aggregate([stream]).message["extras"]["openai-chat"]["fields"]
    assert fields["audio"] == {"id": "audio_1", "transcript": "Hello", "data": "UklGRgAA", "expires_at": 1733003600}


def test_a_cohere_calls_own_data_survives_the_stream_and_the_next_request() -> None:
    lines = [
        {"id": "m1", "type": "message-start", "delta": {"message": {"role": "assistant"}}},
        {
            "type": "tool-call-start",
            "index": 0,
            "delta": {
                "message": {
                    "tool_calls": {
                        "id": "get_weather_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": ""},
                        "vendor_trace": {"span": "abc"},
                    }
                }
            },
        },
        {
            "type": "tool-call-delta",
            "index": 0,
            "delta": {"message": {"tool_calls": {"function": {"arguments": "{}"}}}},
        },
        {"type": "tool-call-end", "index": 0},
        {"type": "message-end", "delta": {"finish_reason": "TOOL_CALL"}},
    ]
    response = aggregate(["\n".join(json.dumps(line) for line in lines).encode()], "cohere")
    conversation = [
        {"role": "user", "content": "weather?"},
        response.message,
        {"role": "tool", "tool_call_id": "get_weather_1", "content": "sunny"},
    ]
    sent = encode_request(Request(conversation, model="command-r"), "cohere")["messages"][1]
    assert sent["tool_calls"][0]["vendor_trace"] == {"span": "abc"}
