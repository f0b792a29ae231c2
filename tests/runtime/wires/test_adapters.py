"""The wire adapters on hand-built conversations: cross-wire conversion, ids, errors, diagnostics, pairing, speed."""

from __future__ import annotations

import copy
import json
from typing import Any

import pydantic
import pytest
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openai.types.chat.completion_create_params import CompletionCreateParams

from toolgen.runtime.wires.anthropic import codec as _wire_anthropic
from toolgen.runtime.wires.canonical import ProviderError, Request, Response
from toolgen.runtime.wires.codecs import codec, convert, decode, detect, encode_error, encode_request
from toolgen.runtime.wires.gemini import codec as _wire_gemini
from toolgen.runtime.wires.helpers import args_text
from toolgen.runtime.wires.openai_chat import codec as _wire_openai_chat
from toolgen.runtime.wires.pairing import check_pairing
from toolgen.runtime.wires.table import WIRES

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
            "required": ["city"],
        },
    },
}
TIME = {
    "type": "function",
    "function": {"name": "get_time", "description": "Local time.", "parameters": {"type": "object", "properties": {}}},
}
PARALLEL = {
    "model": "gpt-4o",
    "messages": [
        {"role": "system", "content": "You are a travel assistant."},
        {"role": "user", "content": "Weather and local time in Paris and Tokyo?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_pw",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Paris","unit":"c"}'},
                },
                {
                    "id": "call_tw",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Tokyo","unit":"c"}'},
                },
                {"id": "call_tt", "type": "function", "function": {"name": "get_time", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "call_pw", "content": "18C, cloudy"},
        {"role": "tool", "tool_call_id": "call_tw", "content": "24C, clear"},
        {"role": "tool", "tool_call_id": "call_tt", "content": "21:40"},
        {"role": "assistant", "content": "Paris: 18C and cloudy. Tokyo: 24C and clear, 21:40 local time."},
        {"role": "user", "content": "Thanks!"},
    ],
    "tools": [WEATHER, TIME],
}


def strip(value: Any) -> Any:
    """A canonical value without provider extras."""
    if isinstance(value, dict):
        return {key: strip(item) for key, item in value.items() if key != "extras"}
    if isinstance(value, list):
        return [strip(item) for item in value]
    return value


# ---- cross-wire conversion ----

# What a trip through each wire changes in this conversation, by design; nothing else may change.
BY_DESIGN = {
    # Anthropic requires max_tokens: a request that had none gets DEFAULT_MAX_TOKENS, which then comes back.
    "anthropic": lambda body: {**body, "max_completion_tokens": _wire_anthropic.DEFAULT_MAX_TOKENS},
    # Gemini's REST body has no model: it is in the URL.
    "gemini": lambda body: {key: value for key, value in body.items() if key != "model"},
    # The Responses API treats a function without `strict` as strict, so export says `strict: false` outright.
    "openai-responses": lambda body: {
        **body,
        "tools": [{**t, "function": {**t["function"], "strict": False}} for t in body["tools"]],
    },
}


@pytest.mark.parametrize("wire", WIRES)
def test_parallel_tool_call_conversation_survives_a_trip_through_every_wire(wire: str) -> None:
    there = convert(PARALLEL, wire, "openai-chat", "request")
    back = convert(there, "openai-chat", wire, "request")
    assert back == BY_DESIGN.get(wire, lambda body: body)(PARALLEL)


@pytest.mark.parametrize("wire", ["anthropic", "gemini"])
def test_parallel_calls_through_anthropic_and_gemini_are_equal_field_by_field(wire: str) -> None:
    original = decode(PARALLEL, "openai-chat", "request")
    through = decode(convert(PARALLEL, wire, "openai-chat", "request"), wire, "request")
    assert isinstance(original, Request) and isinstance(through, Request)
    assert len(through.messages) == len(original.messages)
    for before, after in zip(original.messages, through.messages, strict=True):
        after = strip(after)
        if wire == "gemini" and after["role"] == "tool":
            # Gemini answers a call by name, so its results name their tool; the call's name, no other.
            calls = {c["id"]: c["function"]["name"] for m in original.messages for c in m.get("tool_calls", ())}
            assert after.pop("name") == calls[after["tool_call_id"]]
        for key in ("role", "content", "tool_calls", "tool_call_id", "name", "is_error"):
            assert after.get(key) == before.get(key), (key, before, after)
    assert through.tools == original.tools


def test_anthropic_groups_parallel_results_into_one_user_message() -> None:
    body = convert(PARALLEL, "anthropic", "openai-chat", "request")
    assert body["system"] == "You are a travel assistant."
    results = body["messages"][2]
    assert results["role"] == "user"
    assert [block["tool_use_id"] for block in results["content"]] == ["call_pw", "call_tw", "call_tt"]
    assert body["messages"][1]["content"][0] == {
        "type": "tool_use",
        "id": "call_pw",
        "name": "get_weather",
        "input": {"city": "Paris", "unit": "c"},
    }


# Kept alive for the whole module: the lazy iterators a validation returns need their adapter's schema.
ANTHROPIC_REQUEST: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(MessageCreateParamsNonStreaming)
OPENAI_REQUEST: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(CompletionCreateParams)


def materialize(value: Any) -> Any:
    """Walk a TypedDict validation result: pydantic checks `Iterable` fields only as they are iterated."""
    if isinstance(value, dict):
        return {key: materialize(item) for key, item in value.items()}
    if isinstance(value, list | tuple) or type(value).__name__ == "ValidatorIterator":
        return [materialize(item) for item in value]
    return value


def test_official_sdk_request_types_accept_the_encoded_requests() -> None:
    anthropic_body = convert(PARALLEL, "anthropic", "openai-chat", "request")
    materialize(ANTHROPIC_REQUEST.validate_python(anthropic_body))
    for wire in WIRES:
        openai_body = convert(convert(PARALLEL, wire, "openai-chat", "request"), "openai-chat", wire, "request")
        openai_body.setdefault("model", "gpt-4o")
        materialize(OPENAI_REQUEST.validate_python(openai_body))


def test_the_sdk_type_check_is_not_vacuous() -> None:
    broken = convert(PARALLEL, "anthropic", "openai-chat", "request")
    broken["messages"][2]["content"][0].pop("tool_use_id")
    with pytest.raises(pydantic.ValidationError):
        materialize(ANTHROPIC_REQUEST.validate_python(broken))


def test_camel_case_spelling_decodes_like_the_snake_case_one() -> None:
    camel = json.loads(
        json.dumps(PARALLEL).replace('"tool_calls"', '"toolCalls"').replace('"tool_call_id"', '"toolCallId"')
    )
    assert detect(camel) == ("openai-chat-camel", "request")
    snake, spelled = decode(PARALLEL, "openai-chat", "request"), decode(camel)
    assert isinstance(snake, Request) and isinstance(spelled, Request)
    assert strip(snake.messages) == strip(spelled.messages)
    assert encode_request(spelled, "openai-chat") == PARALLEL


def test_bodies_without_vendor_traits_are_openai_chat_and_decode_the_same_as_any_lookalike() -> None:
    # Mistral, Ollama's /api/chat and Cohere v2 share this shape when nothing vendor-specific is in the body.
    plain = {"model": "m", "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]}
    assert detect(plain) == ("openai-chat", "request")
    as_openai = decode(plain, "openai-chat", "request")
    assert isinstance(as_openai, Request)
    for wire in ("mistral", "ollama", "cohere"):
        lookalike = decode(plain, wire, "request")
        assert isinstance(lookalike, Request)
        assert strip(lookalike.messages) == strip(as_openai.messages)


def test_a_conversation_built_by_hand_encodes_without_extras() -> None:
    request = decode(PARALLEL, "openai-chat", "request")
    assert isinstance(request, Request)
    assert all("extras" not in message for message in request.messages)
    assert request.extras == {}


SETTINGS = {
    "model": "gpt-4o",
    "messages": [{"role": "user", "content": "Weather in Oslo?"}],
    "tools": [WEATHER],
    "tool_choice": "required",
    "parallel_tool_calls": False,
    "max_completion_tokens": 300,
    "temperature": 0.2,
    "top_p": 0.9,
    "stop": ["END"],
}
PORTABLE = {
    "max_tokens": 300,
    "temperature": 0.2,
    "top_p": 0.9,
    "stop": ["END"],
    "tool_choice": "required",
    "parallel_tool_calls": False,
}


def test_generation_settings_are_written_in_each_wires_spelling() -> None:
    anthropic = convert(SETTINGS, "anthropic")
    # No temperature or top_p: the anthropic SDK took them out of messages.create in 1.0.
    assert "temperature" not in anthropic and "top_p" not in anthropic
    assert {k: anthropic[k] for k in ("max_tokens", "stop_sequences", "tool_choice")} == {
        "max_tokens": 300,
        "stop_sequences": ["END"],
        "tool_choice": {"type": "any", "disable_parallel_tool_use": True},
    }
    gemini = convert(SETTINGS, "gemini")
    assert gemini["generationConfig"] == {
        "maxOutputTokens": 300,
        "temperature": 0.2,
        "topP": 0.9,
        "stopSequences": ["END"],
    }
    assert gemini["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}
    bedrock = convert(SETTINGS, "bedrock-converse")
    assert bedrock["inferenceConfig"] == {"maxTokens": 300, "temperature": 0.2, "topP": 0.9, "stopSequences": ["END"]}
    assert bedrock["toolConfig"]["toolChoice"] == {"any": {}}
    responses = convert(SETTINGS, "openai-responses")
    assert (responses["max_output_tokens"], responses["tool_choice"], responses["parallel_tool_calls"]) == (
        300,
        "required",
        False,
    )
    assert convert(SETTINGS, "ollama")["options"] == {
        "num_predict": 300,
        "temperature": 0.2,
        "top_p": 0.9,
        "stop": ["END"],
    }
    assert convert(SETTINGS, "cohere")["tool_choice"] == "REQUIRED"
    assert convert(SETTINGS, "mistral")["tool_choice"] == "any"
    for wire in ("anthropic", "gemini", "bedrock-converse"):
        request = decode(convert(SETTINGS, wire))
        assert isinstance(request, Request)
        unsent = {"parallel_tool_calls", *(("temperature", "top_p") if wire == "anthropic" else ())}
        assert {k: v for k, v in request.extras["settings"].items() if k != "parallel_tool_calls"} == {
            k: v for k, v in PORTABLE.items() if k not in unsent
        }
    named = convert({**SETTINGS, "tool_choice": {"type": "function", "function": {"name": "get_weather"}}}, "anthropic")
    assert named["tool_choice"] == {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": True}


def test_changed_settings_reach_the_same_wire_and_unchanged_ones_leave_it_alone() -> None:
    request = decode(SETTINGS)
    assert isinstance(request, Request) and request.extras["settings"] == PORTABLE
    assert encode_request(request, "openai-chat") == SETTINGS
    settings = {**request.extras["settings"], "max_tokens": 50, "tool_choice": "none"}
    changed = Request(request.messages, request.tools, request.model, {**request.extras, "settings": settings})
    assert encode_request(changed, "openai-chat") == {**SETTINGS, "max_completion_tokens": 50, "tool_choice": "none"}


# ---- reasoning that only its issuer can verify ----

SIGNED = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 1000,
    "messages": [
        {"role": "user", "content": "Country?"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Ask the tool.", "signature": "EqQBsig"},
                {"type": "tool_use", "id": "toolu_1", "name": "get_country", "input": {}},
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "Mexico"}]},
    ],
}


def test_signed_reasoning_goes_back_to_its_issuer_only() -> None:
    request = decode(SIGNED, "anthropic", "request")
    assert isinstance(request, Request)
    assert request.messages[1]["content"] == [{"type": "reasoning", "text": "Ask the tool.", "signature": "EqQBsig"}]
    assert codec("anthropic").encode_request(request) == SIGNED
    gemini = codec("gemini").encode_request(request)
    assert [list(part) for part in gemini["contents"][1]["parts"]] == [["functionCall"]]
    bedrock = codec("bedrock-converse").encode_request(request)
    assert [list(block) for block in bedrock["messages"][1]["content"]] == [["toolUse"]]
    responses = codec("openai-responses").encode_request(request)
    assert [item.get("type") for item in responses["input"]] == [None, "function_call", "function_call_output"]
    chat = codec("openai-chat").encode_request(request)
    assert chat["messages"][1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "toolu_1", "type": "function", "function": {"name": "get_country", "arguments": "{}"}}],
    }


# ---- Gemini: calls without ids ----

GEMINI = {
    "contents": [
        {"role": "user", "parts": [{"text": "Weather in Rome and Milan?"}]},
        {
            "role": "model",
            "parts": [
                {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}, "thoughtSignature": "sigA"},
                {"functionCall": {"name": "get_weather", "args": {"city": "Milan"}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "get_weather", "response": {"output": "25C"}}},
                {"functionResponse": {"name": "get_weather", "response": {"output": "22C"}}},
            ],
        },
    ]
}


def test_gemini_calls_get_stable_ids_that_pair_by_name_and_order_and_are_left_out_again() -> None:
    first, again = decode(GEMINI, "gemini", "request"), decode(copy.deepcopy(GEMINI), "gemini", "request")
    assert isinstance(first, Request) and isinstance(again, Request)
    assert first.messages == again.messages
    rome, milan = first.messages[1]["tool_calls"]
    assert rome["id"] != milan["id"] and rome["id"].startswith("call_")
    assert [m["tool_call_id"] for m in first.messages[2:]] == [rome["id"], milan["id"]]
    assert check_pairing(first.messages) == []
    body = codec("gemini").encode_request(first)
    assert body == GEMINI
    assert all("id" not in part["functionCall"] for part in body["contents"][1]["parts"])


def test_gemini_response_ids_are_stable_per_response() -> None:
    body = {
        "candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]}}],
        "responseId": "r1",
    }
    one, same = decode(body, "gemini", "response"), decode(copy.deepcopy(body), "gemini", "response")
    other = decode({**body, "responseId": "r2"}, "gemini", "response")
    assert isinstance(one, Response) and isinstance(same, Response) and isinstance(other, Response)
    assert one.message["tool_calls"][0]["id"] == same.message["tool_calls"][0]["id"]
    assert one.message["tool_calls"][0]["id"] != other.message["tool_calls"][0]["id"]
    assert one.finish is None  # no finishReason yet: not a finished candidate


def test_real_ids_are_sent_to_gemini() -> None:
    body = convert(PARALLEL, "gemini", "openai-chat", "request")
    calls = [part["functionCall"] for part in body["contents"][1]["parts"]]
    assert [call["id"] for call in calls] == ["call_pw", "call_tw", "call_tt"]
    responses = [part["functionResponse"] for part in body["contents"][2]["parts"]]
    assert [(r["id"], r["name"], r["response"]) for r in responses][0] == (
        "call_pw",
        "get_weather",
        {"output": "18C, cloudy"},
    )


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
            "candidates": [],
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


# ---- canonical conversations survive every wire ----

names = st.sampled_from(["get_weather", "lookup", "send_mail"])
texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=12)
arguments = st.dictionaries(
    st.sampled_from(["city", "n", "ok"]), st.one_of(st.integers(-5, 5), texts, st.booleans()), max_size=3
)


@st.composite
def conversations(draw: st.DrawFn) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    if draw(st.booleans()):
        messages.append({"role": "system", "content": draw(texts)})
    for turn in range(draw(st.integers(1, 3))):
        messages.append({"role": "user", "content": draw(texts)})
        count = draw(st.integers(0, 3))
        calls = [
            {
                "id": f"call_{turn}_{i}",
                "type": "function",
                "function": {"name": draw(names), "arguments": args_text(draw(arguments))},
            }
            for i in range(count)
        ]
        text = draw(st.one_of(st.none(), texts)) if calls else draw(texts)
        assistant: dict[str, Any] = {"role": "assistant", "content": text}
        if calls:
            assistant["tool_calls"] = calls
        messages.append(assistant)
        messages.extend({"role": "tool", "tool_call_id": c["id"], "content": draw(texts)} for c in calls)
    return messages


def comparable(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # Only Gemini and Ollama results carry the tool's name; the rest of the message is what is compared.
    return [
        {key: value for key, value in strip(m).items() if not (m["role"] == "tool" and key == "name")} for m in messages
    ]


@pytest.mark.parametrize("wire", WIRES)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages=conversations())
def test_canonical_conversations_survive_every_wire(wire: str, messages: list[dict[str, Any]]) -> None:
    conversions = codec(wire)
    back = conversions.decode_request(conversions.encode_request(Request(messages, model="m")))
    assert comparable(back.messages) == comparable(messages)


def test_the_wire_modules_import_only_the_standard_library_and_each_other() -> None:
    import ast
    import sys
    from pathlib import Path

    runtime = Path(_wire_openai_chat.__file__).parent
    for path in sorted(runtime.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                assert node.module and node.module.split(".")[0] in sys.stdlib_module_names | {"__future__"}, path
            elif isinstance(node, ast.Import):
                assert all(alias.name.split(".")[0] in sys.stdlib_module_names for alias in node.names), path
    assert _wire_gemini.WIRE == "gemini"
