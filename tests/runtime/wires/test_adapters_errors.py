"""The wire adapters on error bodies (provider errors as data) and malformed input (a pointer and a sentence)."""

from __future__ import annotations

from typing import Any

import pytest

from toolgen.runtime.wires.canonical import ProviderError, Request, Response
from toolgen.runtime.wires.codecs import codec, convert, decode, detect, encode_error, encode_request
from toolgen.runtime.wires.table import WIRES

# ---- errors are data ----

ERRORS = [
    (
        "openai-chat",
        {"error": {"message": "Bad key", "type": "invalid_request_error", "param": None, "code": "invalid_api_key"}},
        "invalid_api_key",
    ),
    (
        "mistral",
        {"object": "error", "message": "Unauthorized", "type": "invalid_request_error", "param": None, "code": "1000"},
        "1000",
    ),
    ("anthropic", {"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down"}}, "rate_limit_error"),
    ("gemini", {"error": {"code": 429, "message": "Quota", "status": "RESOURCE_EXHAUSTED"}}, "RESOURCE_EXHAUSTED"),
    ("gemini", [{"error": {"code": 400, "message": "Bad", "status": "INVALID_ARGUMENT"}}], "INVALID_ARGUMENT"),
    ("bedrock-converse", {"message": "Access denied"}, None),
    ("ollama", {"error": "model 'x' not found"}, None),
    ("cohere", {"id": "abc", "message": "invalid api token"}, None),
    (
        "openai-responses",
        {"error": {"message": "Nope", "type": "server_error", "code": "server_error"}},
        "server_error",
    ),
]


@pytest.mark.parametrize(("wire", "body", "code"), ERRORS)
def test_error_bodies_decode_to_provider_errors_never_exceptions(wire: str, body: Any, code: str | None) -> None:
    error = decode(body, wire, "response")
    assert isinstance(error, ProviderError)
    assert error.wire == wire and error.code == code and error.message
    assert codec(wire).encode_error(error) == body


def test_error_bodies_are_detected_and_convert_between_wires() -> None:
    error = decode({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    assert isinstance(error, ProviderError) and error.wire == "anthropic"
    assert encode_error(error, "openai-chat") == {
        "error": {"message": "Overloaded", "type": "overloaded_error", "param": None, "code": "overloaded_error"}
    }
    assert convert({"error": "boom"}, "anthropic") == {
        "type": "error",
        "error": {"type": "api_error", "message": "boom"},
    }


# ---- malformed input: a pointer and a sentence ----

MALFORMED = [
    ("openai-chat", "request", [], "/: expected a request body object"),
    ("openai-chat", "request", {"messages": {}}, "/messages: expected `messages`, an array of message objects"),
    ("openai-chat", "request", {"messages": [{"role": "robot"}]}, "/messages/0/role: expected one of system"),
    (
        "openai-chat",
        "request",
        {"messages": [{"role": "assistant", "tool_calls": [{"id": "c", "function": {"arguments": "{}"}}]}]},
        "/messages/0/tool_calls/0/function/name: expected the function name as a string",
    ),
    ("openai-chat", "request", {"messages": [{"role": "tool", "content": "x"}]}, "/messages/0/tool_call_id: expected"),
    ("openai-chat", "response", {"choices": []}, "/choices: expected at least one choice"),
    (
        "openai-chat",
        "response",
        {"choices": [{"delta": {"content": "hi"}}]},
        "/choices/0/message: expected the whole message: this is a stream chunk",
    ),
    (
        "anthropic",
        "request",
        {"messages": [{"role": "system", "content": "x"}]},
        "/messages/0/role: expected user or assistant",
    ),
    (
        "anthropic",
        "request",
        {"messages": [{"role": "assistant", "content": [{"type": "tool_use", "name": "f"}]}]},
        "/messages/0/content/0/id: expected the tool_use id as a string",
    ),
    ("anthropic", "response", {"content": "text"}, "/content: expected `content`, an array of content blocks"),
    ("gemini", "request", {"contents": [{"role": "user", "parts": "hi"}]}, "/contents/0/parts: expected `parts`"),
    (
        "gemini",
        "request",
        {"contents": [{"role": "model", "parts": [{"functionCall": {"args": {}}}]}]},
        "/contents/0/parts/0/functionCall/name: expected the function name as a string",
    ),
    ("bedrock-converse", "response", {"output": {}}, "/output/message: expected the assistant message object"),
    (
        "bedrock-converse",
        "request",
        {"messages": [{"role": "user", "content": [{"toolResult": {"content": []}}]}]},
        "/messages/0/content/0/toolResult/toolUseId: expected the toolUseId",
    ),
    (
        "ollama",
        "request",
        {"messages": [{"role": "user", "content": 3}]},
        "/messages/0/content: expected the content as a string",
    ),
    ("cohere", "request", {"messages": [{"role": "tool", "content": "x"}]}, "/messages/0/tool_call_id: expected"),
    ("openai-responses", "request", {"input": [{"type": "function_call", "name": "f"}]}, "/input/0/call_id: expected"),
    ("openai-responses", "response", {"status": "completed"}, "/output: expected `output`, an array of items"),
    ("google-interactions", "response", {"steps": [{"type": "function_call", "name": "f"}]}, "/steps/0/id: expected"),
]


@pytest.mark.parametrize(("wire", "kind", "body", "message"), MALFORMED)
def test_malformed_bodies_raise_value_error_with_a_pointer(wire: str, kind: str, body: Any, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        decode(body, wire, kind)
    assert str(caught.value).startswith(message)


def test_arguments_that_are_not_an_object_cannot_go_to_object_wires() -> None:
    request = Request(
        [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "[1"}}],
            }
        ]
    )
    with pytest.raises(
        ValueError, match=r"^/messages/0/tool_calls/0/function/arguments: expected the arguments to be JSON text"
    ):
        encode_request(request, "anthropic")
    assert encode_request(request, "openai-chat")["messages"][0]["tool_calls"][0]["function"]["arguments"] == "[1"


@pytest.mark.parametrize("wire", ["anthropic", "bedrock-converse", "gemini", "google-interactions", "ollama"])
def test_bad_arguments_text_is_placed_at_its_own_call(wire: str) -> None:
    calls = [
        {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
        {"id": "b", "type": "function", "function": {"name": "f", "arguments": "{"}},
    ]
    request = Request(
        [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": calls},
            {"role": "tool", "tool_call_id": "a", "content": "x"},
            {"role": "tool", "tool_call_id": "b", "content": "y"},
        ]
    )
    with pytest.raises(ValueError, match=r"^/[a-z]+/1/tool_calls/1/function/arguments: expected the arguments"):
        encode_request(request, wire)


@pytest.mark.parametrize("wire", WIRES)
def test_malformed_canonical_values_raise_value_error_with_a_pointer(wire: str) -> None:
    bad_call = {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function", "function": {}}]}
    with pytest.raises(ValueError, match=r"^/messages/1/tool_calls/0/function: expected `name` and `arguments`"):
        encode_request(Request([{"role": "user", "content": "hi"}, bad_call]), wire)
    with pytest.raises(ValueError, match=r"^/message/content/0: expected a content part object"):
        codec(wire).encode_response(Response({"role": "assistant", "content": [7]}))


def test_detect_rejects_what_is_not_a_body() -> None:
    with pytest.raises(ValueError, match="^/: expected a request body"):
        detect({"hello": "world"})
    with pytest.raises(ValueError, match="^/: expected a request or response body object"):
        detect("text")
