"""What the adapters must not lose from recorded bodies: thinking signatures, server blocks and reasoning."""

from __future__ import annotations

from test_adapters_handwritten import load

from toolgen.runtime.wires.canonical import Request, Response
from toolgen.runtime.wires.codecs import codec, decode

# ---- what must not be lost ----


def test_anthropic_thinking_signature_and_server_blocks_are_canonical_or_kept() -> None:
    _, _, body = load("anthropic/response/claude-sonnet4-thinking-then-tool-use.json")
    response = decode(body, "anthropic", "response")
    assert isinstance(response, Response)
    reasoning = response.message["content"][0]
    assert reasoning["type"] == "reasoning"
    assert reasoning["signature"] == body["content"][0]["signature"]
    assert reasoning["text"] == body["content"][0]["thinking"]

    _, _, body = load("anthropic/response/claude-sonnet4-server-tool-error.json")
    response = decode(body, "anthropic", "response")
    assert isinstance(response, Response)
    kept = [entry["keep"] for entry in response.message["extras"]["anthropic"]["blocks"] if "keep" in entry]
    assert [block["type"] for block in kept] == ["server_tool_use", "web_fetch_tool_result"]
    assert "tool_calls" not in response.message  # a server tool call is not the client's to answer


def test_gemini_thought_signature_stays_on_its_function_call_part() -> None:
    _, _, body = load("gemini/response/gemini3pro-function-call-thought-signature.json")
    response = decode(body, "gemini", "response")
    assert isinstance(response, Response)
    part = codec("gemini").encode_response(response)["candidates"][0]["content"]["parts"][0]
    assert part["thoughtSignature"] == body["candidates"][0]["content"]["parts"][0]["thoughtSignature"]
    assert "id" not in part["functionCall"]  # the made-up id is not sent to Gemini


def test_responses_encrypted_reasoning_is_canonical() -> None:
    _, _, body = load("openai-responses/request/openai-function-call-output.json")
    request = decode(body, "openai-responses", "request")
    assert isinstance(request, Request)
    reasoning = request.messages[1]["content"][0]
    assert reasoning == {"type": "reasoning", "encrypted": body["input"][1]["encrypted_content"]}


def test_reasoning_content_of_compatible_vendors_is_canonical() -> None:
    for relative, key in (
        ("openai-chat/response/deepseek-reasoner-tool-call.json", "reasoning_content"),
        ("openai-chat/response/xai-grok3mini-tool-call-empty-content.json", "reasoning_content"),
        ("openai-chat/response/ollama-cloud-compat-tool-call-with-reasoning.json", "reasoning"),
    ):
        _, _, body = load(relative)
        response = decode(body, "openai-chat", "response")
        assert isinstance(response, Response)
        assert response.message["content"] == [{"type": "reasoning", "text": body["choices"][0]["message"][key]}]


def test_bedrock_reasoning_text_and_signature_are_canonical() -> None:
    _, _, body = load("bedrock-converse/response/claude-reasoning-content.json")
    response = decode(body, "bedrock-converse", "response")
    assert isinstance(response, Response)
    text = body["output"]["message"]["content"][0]["reasoningContent"]["reasoningText"]
    assert response.message["content"][0] == {"type": "reasoning", "text": text["text"], "signature": text["signature"]}
