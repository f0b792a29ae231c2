"""The wire adapters: results paired with calls, finish reasons and usage normalized, and a few wires' details."""

from __future__ import annotations

import json
from typing import Any

from test_adapters_conversion import WEATHER

from toolgen.runtime.wires.canonical import Request, Response
from toolgen.runtime.wires.codecs import codec, convert, decode, detect
from toolgen.runtime.wires.pairing import check_pairing

# ---- pairing ----


def call(call_id: str, name: str = "f") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}


def test_pairing_finds_unknown_results_missing_results_and_duplicates() -> None:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "tool", "tool_call_id": "early", "content": "before its call"},
        {"role": "assistant", "content": None, "tool_calls": [call("a"), call("b"), call("early"), call("a")]},
        {"role": "tool", "tool_call_id": "a", "content": "1"},
        {"role": "tool", "tool_call_id": "a", "content": "1 again"},
        {"role": "tool", "tool_call_id": "zzz", "content": "?"},
        {"role": "user", "content": "next"},
    ]
    problems = [(p.pointer, p.code) for p in check_pairing(messages)]
    assert problems == [
        ("/1/tool_call_id", "unknown_call"),
        ("/2/tool_calls/3/id", "duplicate_call_id"),
        ("/4/tool_call_id", "duplicate_result"),
        ("/5/tool_call_id", "unknown_call"),
        ("/2/tool_calls/1", "missing_result"),
        ("/2/tool_calls/2", "missing_result"),
    ]
    assert all(p.message for p in check_pairing(messages))


def test_pending_calls_at_the_end_are_allowed_on_request() -> None:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call("a"), call("b")]},
        {"role": "tool", "tool_call_id": "a", "content": "1"},
    ]
    assert [p.code for p in check_pairing(messages)] == ["missing_result"]
    assert check_pairing(messages, allow_pending=True) == []
    answered_late = [*messages, {"role": "user", "content": "and b?"}]
    assert [p.code for p in check_pairing(answered_late, allow_pending=True)] == ["missing_result"]


# ---- finish reasons and usage ----


def test_finish_reasons_are_normalized_with_the_raw_value_kept() -> None:
    calls = {"functionCall": {"name": "f", "args": {}}}
    gemini = decode(
        {"candidates": [{"content": {"role": "model", "parts": [calls]}, "finishReason": "STOP"}]}, "gemini", "response"
    )
    assert isinstance(gemini, Response) and gemini.finish == {"reason": "tool_calls", "raw": "STOP"}
    safety = decode({"candidates": [{"finishReason": "SAFETY"}]}, "gemini", "response")
    assert isinstance(safety, Response) and safety.finish == {"reason": "content_filter", "raw": "SAFETY"}
    assert codec("gemini").encode_response(safety) == {"candidates": [{"finishReason": "SAFETY"}]}
    anthropic = decode({"type": "message", "content": [], "stop_reason": "refusal"}, "anthropic", "response")
    assert isinstance(anthropic, Response) and anthropic.finish == {"reason": "content_filter", "raw": "refusal"}
    converted = convert(
        {"type": "message", "content": [], "stop_reason": "max_tokens"}, "openai-chat", "anthropic", "response"
    )
    assert converted["choices"][0]["finish_reason"] == "length"
    assert convert(converted, "gemini", "openai-chat", "response")["candidates"][0]["finishReason"] == "MAX_TOKENS"


def test_usage_counts_every_input_token_and_reasoning_as_output() -> None:
    anthropic = decode(
        {
            "type": "message",
            "content": [],
            "usage": {
                "input_tokens": 10,
                "cache_read_input_tokens": 100,
                "cache_creation_input_tokens": 5,
                "output_tokens": 7,
            },
        },
        "anthropic",
        "response",
    )
    assert isinstance(anthropic, Response)
    assert anthropic.usage == {
        "input_tokens": 115,
        "output_tokens": 7,
        "cache_read_tokens": 100,
        "cache_write_tokens": 5,
    }
    body = convert(
        convert(
            {
                "type": "message",
                "content": [],
                "usage": {
                    "input_tokens": 10,
                    "cache_read_input_tokens": 100,
                    "cache_creation_input_tokens": 5,
                    "output_tokens": 7,
                },
            },
            "openai-chat",
            "anthropic",
            "response",
        ),
        "anthropic",
        "openai-chat",
        "response",
    )
    assert body["usage"]["input_tokens"] == 10 and body["usage"]["cache_read_input_tokens"] == 100
    gemini = decode(
        {
            "candidates": [{"content": {"role": "model", "parts": [{"text": "Hi"}]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 3, "thoughtsTokenCount": 4},
        },
        "gemini",
        "response",
    )
    assert isinstance(gemini, Response) and gemini.usage == {
        "input_tokens": 5,
        "output_tokens": 7,
        "reasoning_tokens": 4,
    }


# ---- a few wire details ----


def test_legacy_function_call_pairs_with_the_function_role_result() -> None:
    body = {
        "model": "gpt-3.5-turbo",
        "messages": [
            {"role": "user", "content": "Weather?"},
            {
                "role": "assistant",
                "content": None,
                "function_call": {"name": "get_weather", "arguments": '{"city":"Oslo"}'},
            },
            {"role": "function", "name": "get_weather", "content": "cold"},
        ],
        "functions": [WEATHER["function"]],
    }
    request = decode(body)
    assert isinstance(request, Request)
    assert request.messages[2]["tool_call_id"] == request.messages[1]["tool_calls"][0]["id"]
    assert check_pairing(request.messages) == []
    assert codec("openai-chat").encode_request(request) == body
    assert convert(body, "anthropic")["messages"][1]["content"][0]["name"] == "get_weather"


def test_responses_custom_tool_input_is_a_json_string_value() -> None:
    body = {
        "input": [{"type": "custom_tool_call", "call_id": "c1", "name": "sql", "input": "SELECT 1"}],
        "model": "gpt-5",
    }
    request = decode(body)
    assert isinstance(request, Request)
    (made,) = request.messages[0]["tool_calls"]
    assert json.loads(made["function"]["arguments"]) == "SELECT 1"
    assert codec("openai-responses").encode_request(request) == body


def test_mistral_thinking_chunks_and_untyped_calls() -> None:
    body = {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": [{"type": "text", "text": "hmm"}]},
                        {"type": "text", "text": "ok"},
                    ],
                    "tool_calls": [{"id": "abcdefghi", "function": {"name": "f", "arguments": "{}"}}],
                },
                "finish_reason": "tool_calls",
            }
        ]
    }
    assert detect(body) == ("mistral", "response")
    response = decode(body)
    assert isinstance(response, Response)
    assert response.message["content"] == [{"type": "reasoning", "text": "hmm"}, {"type": "text", "text": "ok"}]
    assert codec("mistral").encode_response(response) == body
