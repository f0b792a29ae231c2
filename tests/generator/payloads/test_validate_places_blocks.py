"""`toolgen validate` refuses malformed content blocks of every documented kind at their pointer, and no real body."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.projects import Project, shared_dir
from test_validate_places_bodies import NAME, findings, invoke

import toolgen

# ---- malformed content blocks of every documented kind ----

# (kind, a valid body around {BLOCK}, [(malformed block, pointer of the problem within the block)])
_ANTHROPIC = {"model": "c", "max_tokens": 5, "messages": [{"role": "user", "content": ["BLOCK"]}]}
_ANTHROPIC_ASSISTANT = {"model": "c", "max_tokens": 5, "messages": [{"role": "assistant", "content": ["BLOCK"]}]}
_CHAT_USER = {"model": "m", "messages": [{"role": "user", "content": ["BLOCK"]}]}
_RESPONSES_INPUT = {"model": "m", "input": [{"role": "user", "content": ["BLOCK"]}]}
_RESPONSES_ITEM = {"model": "m", "input": ["BLOCK"]}
_GEMINI = {"contents": [{"role": "user", "parts": ["BLOCK"]}]}
_BEDROCK = {"messages": [{"role": "user", "content": ["BLOCK"]}]}
_COHERE = {"model": "m", "messages": [{"role": "user", "content": ["BLOCK"]}]}
_INTERACTIONS = {"model": "m", "input": [{"type": "user_input", "content": ["BLOCK"]}]}
BLOCKS: list[tuple[str, dict[str, Any], Any, str]] = [
    ("anthropic.request", _ANTHROPIC, {"type": "image", "source": {"type": "base64"}}, "/source/data"),
    (
        "anthropic.request",
        _ANTHROPIC,
        {"type": "image", "source": {"type": "base64", "data": "AA=="}},
        "/source/media_type",
    ),
    ("anthropic.request", _ANTHROPIC, {"type": "image", "source": {"type": "path", "url": "x"}}, "/source/type"),
    ("anthropic.request", _ANTHROPIC, {"type": "text"}, "/text"),
    (
        "anthropic.request",
        _ANTHROPIC,
        {"type": "document", "source": {"type": "text", "media_type": "text/plain"}},
        "/source/data",
    ),
    (
        "anthropic.request",
        _ANTHROPIC,
        {"type": "tool_result", "tool_use_id": "toolu_7", "content": [{"type": "image", "source": {}}]},
        "/content/0/source/type",
    ),
    (
        "anthropic.request",
        _ANTHROPIC,
        {"type": "tool_result", "tool_use_id": "toolu_8", "is_error": "yes"},
        "/is_error",
    ),
    ("anthropic.request", _ANTHROPIC, {"type": "search_result", "source": "s", "title": "t"}, "/content"),
    (
        "anthropic.request",
        _ANTHROPIC_ASSISTANT,
        {"type": "tool_use", "id": "toolu_1", "name": NAME, "input": "x"},
        "/input",
    ),
    ("anthropic.request", _ANTHROPIC_ASSISTANT, {"type": "thinking", "thinking": "hm"}, "/signature"),
    ("anthropic.request", _ANTHROPIC_ASSISTANT, {"type": "redacted_thinking"}, "/data"),
    ("anthropic.request", _ANTHROPIC_ASSISTANT, {"type": "server_tool_use", "id": "s", "name": "web_search"}, "/input"),
    (
        "anthropic.response",
        {"id": "m", "type": "message", "role": "assistant", "content": ["BLOCK"]},
        {"type": "tool_use", "name": NAME, "input": {}},
        "/id",
    ),
    ("openai-chat.request", _CHAT_USER, {"type": "image_url", "image_url": {"detail": "low"}}, "/image_url/url"),
    (
        "openai-chat.request",
        _CHAT_USER,
        {"type": "image_url", "image_url": {"url": "u", "detail": "max"}},
        "/image_url/detail",
    ),
    (
        "openai-chat.request",
        _CHAT_USER,
        {"type": "input_audio", "input_audio": {"data": "AA=="}},
        "/input_audio/format",
    ),
    ("openai-chat.request", _CHAT_USER, {"type": "file", "file": {"filename": "a.pdf"}}, "/file"),
    ("openai-chat.request", _CHAT_USER, {"type": "text", "text": 5}, "/text"),
    ("openai-chat-camel.request", _CHAT_USER, {"type": "image_url", "imageUrl": {}}, "/imageUrl/url"),
    ("mistral.request", _CHAT_USER, {"type": "document_url"}, "/document_url"),
    ("openai-responses.request", _RESPONSES_INPUT, {"type": "input_image", "detail": "low"}, ""),
    ("openai-responses.request", _RESPONSES_INPUT, {"type": "input_file", "filename": "a.pdf"}, ""),
    ("openai-responses.request", _RESPONSES_INPUT, {"type": "input_text"}, "/text"),
    ("openai-responses.request", _RESPONSES_ITEM, {"type": "function_call_output", "call_id": "c1"}, "/output"),
    (
        "openai-responses.request",
        _RESPONSES_ITEM,
        {"type": "reasoning", "summary": [{"type": "summary_text"}]},
        "/summary/0/text",
    ),
    ("gemini.request", _GEMINI, {"inlineData": {"data": "AA=="}}, "/inlineData/mimeType"),
    ("gemini.request", _GEMINI, {"inline_data": {"mime_type": "image/png"}}, "/inline_data/data"),
    ("gemini.request", _GEMINI, {"fileData": {"mimeType": "image/png"}}, "/fileData/fileUri"),
    ("gemini.request", _GEMINI, {"functionResponse": {"name": NAME}}, "/functionResponse/response"),
    ("gemini.request", _GEMINI, {"executableCode": {"language": "PYTHON"}}, "/executableCode/code"),
    ("bedrock-converse.request", _BEDROCK, {"image": {"format": "png", "source": {}}}, "/image/source"),
    ("bedrock-converse.request", _BEDROCK, {"image": {"format": "bmp", "source": {"bytes": "AA=="}}}, "/image/format"),
    (
        "bedrock-converse.request",
        _BEDROCK,
        {"document": {"format": "pdf", "source": {"bytes": "AA=="}}},
        "/document/name",
    ),
    ("bedrock-converse.request", _BEDROCK, {"toolResult": {"content": [{"text": "x"}]}}, "/toolResult/toolUseId"),
    (
        "bedrock-converse.request",
        _BEDROCK,
        {"toolResult": {"toolUseId": "tooluse_7", "content": [{}]}},
        "/toolResult/content/0",
    ),
    (
        "bedrock-converse.request",
        _BEDROCK,
        {"reasoningContent": {"reasoningText": {"signature": "s"}}},
        "/reasoningContent/reasoningText/text",
    ),
    ("cohere.request", _COHERE, {"type": "image_url", "image_url": {}}, "/image_url/url"),
    ("cohere.request", _COHERE, {"type": "document", "document": {}}, "/document/data"),
    ("google-interactions.request", _INTERACTIONS, {"type": "image", "mime_type": "image/png"}, ""),
    (
        "google-interactions.request",
        _INTERACTIONS,
        {"type": "function_result", "name": NAME, "result": "x"},
        "/call_id",
    ),
    # Response bodies: the blocks a model sends back.
    (
        "gemini.response",
        {"candidates": [{"content": {"role": "model", "parts": ["BLOCK"]}, "finishReason": "STOP"}]},
        {"inlineData": {"data": "AA=="}},
        "/inlineData/mimeType",
    ),
    (
        "gemini.response",
        {"candidates": [{"content": {"role": "model", "parts": ["BLOCK"]}, "finishReason": "STOP"}]},
        {"functionCall": {"args": {}}},
        "/functionCall/name",
    ),
    (
        "bedrock-converse.response",
        {"output": {"message": {"role": "assistant", "content": ["BLOCK"]}}, "stopReason": "end_turn"},
        {"reasoningContent": {}},
        "/reasoningContent",
    ),
    (
        "bedrock-converse.response",
        {"output": {"message": {"role": "assistant", "content": ["BLOCK"]}}, "stopReason": "tool_use"},
        {"toolUse": {"toolUseId": "tooluse_1", "input": {}}},
        "/toolUse/name",
    ),
    (
        "openai-responses.response",
        {"id": "r", "object": "response", "status": "completed", "output": ["BLOCK"]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text"}]},
        "/content/0/text",
    ),
    (
        "openai-responses.response",
        {"id": "r", "object": "response", "status": "completed", "output": ["BLOCK"]},
        {"type": "function_call", "call_id": "call_1", "name": NAME, "arguments": {}},
        "/arguments",
    ),
    (
        "openai-chat.response",
        {
            "id": "x",
            "object": "chat.completion",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "tool_calls": ["BLOCK"]}, "finish_reason": "tool_calls"}
            ],
        },
        {"id": "call_1", "type": "function", "function": {"name": NAME, "arguments": 5}},
        "/function/arguments",
    ),
    (
        "cohere.response",
        {"id": "x", "finish_reason": "COMPLETE", "message": {"role": "assistant", "content": ["BLOCK"]}},
        {"type": "thinking"},
        "/thinking",
    ),
    (
        "ollama.response",
        {
            "model": "l",
            "message": {"role": "assistant", "content": "", "tool_calls": ["BLOCK"]},
            "done": True,
            "done_reason": "stop",
        },
        {"function": {"name": NAME, "arguments": "{}"}},
        "/function/arguments",
    ),
    (
        "google-interactions.response",
        {"id": "i", "status": "requires_action", "steps": ["BLOCK"]},
        {"type": "function_call", "id": "f1", "name": NAME},
        "/arguments",
    ),
]


def _with_block(body: Any, block: Any) -> Any:
    return json.loads(json.dumps(body).replace('"BLOCK"', json.dumps(block)))


def _block_pointer(body: Any) -> str:
    """The pointer of the block's place ("BLOCK") in a body."""

    def walk(value: Any, pointer: str) -> str | None:
        if value == "BLOCK":
            return pointer
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for key, item in items:
            found = walk(item, f"{pointer}/{key}")
            if found is not None:
                return found
        return None

    found = walk(body, "")
    assert found is not None
    return found


@pytest.mark.parametrize("kind", sorted({kind for kind, *_ in BLOCKS}))
def test_malformed_content_blocks_of_every_documented_kind_are_refused_at_their_pointer(
    built: Project, kind: str
) -> None:
    cases = [(body, block, inner) for k, body, block, inner in BLOCKS if k == kind]
    text = "\n".join(json.dumps(_with_block(body, block)) for body, block, _ in cases) + "\n"
    name = f"blocks/{kind}.jsonl"
    built.write(name, text)
    code, found = findings(built, name, kind)
    assert code == 1
    wire_found = {(f["line"], f["pointer"]) for f in found if f["rule"] == "wire-invalid"}
    for line, (body, _, inner) in enumerate(cases, 1):
        assert (line, _block_pointer(body) + inner) in wire_found, (line, inner, found)
    for finding in found:
        assert finding["col"] > 1, finding
        if finding["rule"] == "wire-invalid":
            assert f"{finding['pointer'] or '/'}: expected" in finding["message"]


def test_every_recorded_body_has_the_shape_its_wire_documents(built: Project) -> None:
    """No false alarm: the recorded bodies of real providers pass the shape checks (their tools are not ours)."""
    bodies = sorted(p for p in shared_dir("payloads").glob("*/*/*.json") if p.parent.name != "stream")
    assert bodies
    for path in bodies:
        kind = f"{path.parent.parent.name}.{path.parent.name}"
        found = list(toolgen.validate([path], kind=kind, root=built.root))
        assert [d for d in found if d.rule == "wire-invalid"] == [], path


ERRORS = {
    "anthropic": {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}},
    "openai-chat": {"error": {"message": "bad", "type": "invalid_request_error", "code": None}},
    "openai-chat-camel": {"error": {"message": "bad", "type": "invalid_request_error"}},
    "mistral": {"object": "error", "message": "bad", "type": "invalid_request_error", "code": 1000},
    "openai-responses": {"error": {"message": "bad", "type": "invalid_request_error", "code": "x"}},
    "gemini": {"error": {"code": 400, "message": "bad", "status": "INVALID_ARGUMENT"}},
    "google-interactions": {"error": {"code": 400, "message": "bad", "status": "INVALID_ARGUMENT"}},
    "bedrock-converse": {"message": "bad"},
    "cohere": {"id": "x", "message": "bad"},
    "ollama": {"error": "model does not support tools"},
}


@pytest.mark.parametrize("wire", sorted(ERRORS))
def test_an_error_body_has_no_blocks_to_find_wrong(built: Project, wire: str) -> None:
    built.write(f"errors/{wire}.json", json.dumps(ERRORS[wire]))
    result = invoke(built, f"errors/{wire}.json", "--as", f"{wire}.response")
    assert result.exit_code == 0 and result.stdout == "", result.output
