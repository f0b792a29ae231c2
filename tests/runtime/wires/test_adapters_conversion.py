"""The wire adapters on hand-built conversations: cross-wire conversion, settings, signed reasoning, Gemini's ids."""

from __future__ import annotations

import copy
import json
from typing import Any

import pydantic
import pytest
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from openai.types.chat.completion_create_params import CompletionCreateParams

from toolgen.runtime.wires.anthropic import codec as _wire_anthropic
from toolgen.runtime.wires.canonical import Request, Response
from toolgen.runtime.wires.codecs import codec, convert, decode, detect, encode_request
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
