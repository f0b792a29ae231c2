"""Recorded requests and responses converted to another wire are accepted by that wire's official SDK types."""

from __future__ import annotations

import dataclasses
from typing import Any

import pydantic
import pytest
from anthropic.types import Message as AnthropicMessage
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from openai.types.chat import ChatCompletion
from openai.types.chat.completion_create_params import CompletionCreateParams
from openai.types.responses import Response as OpenAIResponse
from openai.types.responses.response_create_params import ResponseCreateParams
from test_adapters_corpus_recorded import CORPUS
from test_adapters_handwritten import load

from toolgen.runtime.wires.canonical import ProviderError, Request
from toolgen.runtime.wires.codecs import codec, convert, decode

# ---- the official SDKs accept converted bodies ----


def materialize(value: Any) -> Any:
    """Walk a TypedDict validation result: pydantic checks `Iterable` fields only as they are iterated."""
    if isinstance(value, dict):
        return {key: materialize(item) for key, item in value.items()}
    if isinstance(value, list | tuple) or type(value).__name__ == "ValidatorIterator":
        return [materialize(item) for item in value]
    return value


REQUEST_TYPES: dict[str, pydantic.TypeAdapter[Any]] = {
    "anthropic": pydantic.TypeAdapter(MessageCreateParamsNonStreaming),
    "openai-chat": pydantic.TypeAdapter(CompletionCreateParams),
    "openai-responses": pydantic.TypeAdapter(ResponseCreateParams),
}
CUSTOM_TOOL_CALL = "openai-responses/response/openai-custom-tool-call.json"
RESPONSE_TYPES: dict[str, type[pydantic.BaseModel]] = {
    "anthropic": AnthropicMessage,
    "openai-chat": ChatCompletion,
    "openai-responses": OpenAIResponse,
}


@pytest.mark.parametrize("target", sorted(REQUEST_TYPES))
@pytest.mark.parametrize("relative", [r for r in sorted(CORPUS) if "/request/" in r])
def test_corpus_request_converts_to_a_request_the_sdk_accepts(relative: str, target: str) -> None:
    wire, kind, body = load(relative)
    request = decode(body, wire, kind)
    assert isinstance(request, Request)
    if request.model is None:
        # Gemini and Bedrock carry the model in the URL, so the body has none to convert.
        request = dataclasses.replace(request, model="some-model")
    materialize(REQUEST_TYPES[target].validate_python(codec(target).encode_request(request)))


@pytest.mark.parametrize("target", sorted(RESPONSE_TYPES))
@pytest.mark.parametrize("relative", [r for r in sorted(CORPUS) if "/response/" in r])
def test_corpus_response_converts_to_a_response_the_sdk_accepts(relative: str, target: str) -> None:
    wire, kind, body = load(relative)
    response = decode(body, wire, kind)
    if isinstance(response, ProviderError):
        pytest.skip("error bodies convert to error bodies, which the SDKs raise rather than parse")
    if target == wire:
        # Converting to its own wire gives back the recorded body, and the installed SDKs are stricter than some
        # recorded bodies (Responses usage without cache_write_tokens, Groq's service_tier "on_demand").
        pytest.skip("same wire: the recorded body itself")
    if relative == CUSTOM_TOOL_CALL and target == "anthropic":
        # A custom tool's free text has no Anthropic spelling: tool_use input must be an object. Said, not guessed.
        with pytest.raises(
            ValueError, match="/content/tool_calls/0/function/arguments: expected the arguments to be a JSON object"
        ):
            convert(body, target, wire, kind)
        return
    RESPONSE_TYPES[target].model_validate(convert(body, target, wire, kind))
