"""Nothing lost silently: every field a target wire cannot carry is named, on every pair of wires.

The coverage check below flattens canonical values to leaf pointers by itself and asks, for every leaf the
target's round trip does not give back as it was, that some note names that place; the expectations for the
OpenAI request were read off each provider's request format by hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.projects import Project

from toolgen.runtime.wires.canonical import Request
from toolgen.runtime.wires.codecs import codec, encode_request
from toolgen.runtime.wires.losses import convert_request_noted, encode_request_noted
from toolgen.runtime.wires.table import WIRES

CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}
TOOL = {
    "name": "get_weather",
    "description": "",
    "inputSchema": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
    "strict": True,
}
SETTINGS = {
    "max_tokens": 100,
    "temperature": 0.5,
    "top_p": 0.9,
    "stop": ["END"],
    "tool_choice": "auto",
    "parallel_tool_calls": False,
    "response_format": {"type": "json_schema", "name": "answer", "schema": {"type": "object"}, "strict": True},
    "seed": 7,
    "user": "u-1",
}


def every_field(*, media: bool) -> Request:
    """A canonical request using every canonical field; `media` adds the parts some wires refuse outright."""
    parts: list[dict[str, Any]] = [
        {"type": "text", "text": "Look"},
        {"type": "image", "data": "iVBORw0KGgo=", "media_type": "image/png"},
    ]
    if media:
        parts += [
            {"type": "image", "url": "https://example.com/cat.png", "media_type": "image/png", "detail": "high"},
            {"type": "audio", "data": "UklGRg==", "format": "wav"},
            {"type": "file", "data": "JVBERi0=", "media_type": "application/pdf", "filename": "a.pdf"},
        ]
    messages = [
        {"role": "system", "content": "Be terse."},
        {"role": "user", "name": "ada", "content": parts},
        {"role": "assistant", "content": "Calling.", "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call_1", "name": "get_weather", "content": "sunny"},
    ]
    return Request(messages, [TOOL], "some-model", {"settings": dict(SETTINGS)})


def leaves(value: Any, pointer: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        found: dict[str, Any] = {}
        for key, item in value.items():
            if key != "extras":
                found.update(leaves(item, f"{pointer}/{key}"))
        return found
    if isinstance(value, list) and value:
        found = {}
        for i, item in enumerate(value):
            found.update(leaves(item, f"{pointer}/{i}"))
        return found
    return {pointer: value}


def canonical_view(request: Request) -> dict[str, Any]:
    messages = []
    for message in request.messages:
        content = message.get("content")
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        plain = []
        for part in parts:
            part = dict(part)
            url = part.get("url")
            if isinstance(url, str) and url.startswith("data:"):
                head, _, part["data"] = part.pop("url").partition(",")
                part["media_type"] = head[5:].split(";")[0]
            plain.append(part)
        messages.append({**message, "content": plain})
    tools = [
        {key: tool[key] for key in ("name", "description", "inputSchema", "strict") if key in tool}
        for tool in request.tools
    ]
    return {"messages": messages, "tools": tools, "settings": request.extras.get("settings", {})}


def uncovered(before: Request, wire: str, notes: tuple[str, ...], body: dict[str, Any]) -> list[str]:
    """Leaves of `before` the target does not give back as they were, that no note names."""
    after = codec(wire).decode_request(body)
    was, now = leaves(canonical_view(before)), leaves(canonical_view(after))
    named = [note.split(":", 1)[0] for note in notes]
    missing = []
    for pointer, value in was.items():
        if now.get(pointer, object()) == value:
            continue
        path = pointer.removeprefix("/settings/")
        if not any(path == name or path.startswith(f"{name}/") or pointer.startswith(f"{name}/") for name in named):
            missing.append(pointer)
    return missing


@pytest.mark.parametrize("source", WIRES)
@pytest.mark.parametrize("target", WIRES)
def test_every_pair_names_every_loss_of_a_request_using_every_field(source: str, target: str) -> None:
    for media in (False, True):
        try:
            decoded = codec(source).decode_request(encode_request(every_field(media=media), source))
        except ValueError as refusal:
            assert media and str(refusal).startswith("/"), refusal  # only the media parts may be refused
            continue
        try:
            encoded = encode_request_noted(decoded, target)
        except ValueError as refusal:
            assert media and str(refusal).startswith("/"), refusal
            continue
        assert uncovered(decoded, target, encoded.notes, encoded.body) == [], (media, encoded.notes)
        assert all(target in note for note in encoded.notes), encoded.notes


def test_the_same_wire_loses_nothing() -> None:
    for wire in WIRES:
        decoded = codec(wire).decode_request(encode_request(every_field(media=False), wire))
        again = encode_request_noted(decoded, wire)
        assert again.notes == (), (wire, again.notes)


OPENAI_REQUEST = {
    "model": "gpt-4o",
    "messages": [
        {"role": "system", "content": "You are terse."},
        {
            "role": "user",
            "name": "ada",
            "content": [
                {"type": "text", "text": "What is in this picture, and the weather in Paris?"},
                {"type": "image_url", "image_url": {"url": "https://example.com/cat.png", "detail": "high"}},
            ],
        },
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny, 21 C"},
    ],
    "tools": [
        {
            "type": "function",
            "function": {"name": "get_weather", "description": "", "strict": True, "parameters": TOOL["inputSchema"]},
        }
    ],
    "tool_choice": "auto",
    "parallel_tool_calls": False,
    "max_completion_tokens": 256,
    "temperature": 0.2,
    "top_p": 0.9,
    "stop": ["END"],
    "seed": 7,
    "user": "user-42",
    "response_format": {
        "type": "json_schema",
        "json_schema": {"name": "answer", "strict": True, "schema": {"type": "object"}},
    },
    "logprobs": True,
    "stream": True,
}

# What each wire cannot carry of OPENAI_REQUEST, by the place each note names (read off the provider formats).
DROPPED = {
    # temperature and top_p: the anthropic SDK took them out of messages.create in 1.0.
    "anthropic": {
        "logprobs", "seed", "response_format", "temperature", "top_p", "/messages/1/content/1/detail",
        "/messages/1/name", "/tools/0/description", "/tools/0/strict",
    },
    "gemini": {
        "logprobs", "parallel_tool_calls", "user", "response_format", "/messages/1/content/1/detail",
        "/messages/1/name", "/tools/0/description", "/tools/0/strict",
    },
    "google-interactions": {
        "logprobs", "parallel_tool_calls", "user", "response_format", "/messages/1/content/1/detail",
        "/messages/1/name", "/tools/0/description", "/tools/0/strict",
    },
    "openai-responses": {"logprobs", "stop", "seed", "/messages/1/name", "/tools/0/description"},
    "mistral": {"logprobs", "user", "/tools/0/description", "/tools/0/strict"},
    "cohere": {
        "logprobs", "tool_choice", "parallel_tool_calls", "user", "response_format", "/messages/1/name",
        "/tools/0/description", "/tools/0/strict",
    },
}  # fmt: skip


@pytest.mark.parametrize("target", sorted(DROPPED))
def test_an_openai_request_names_what_each_wire_drops_and_maps_the_rest(target: str) -> None:
    encoded = convert_request_noted(OPENAI_REQUEST, target, "openai-chat")
    assert {note.split(":", 1)[0] for note in encoded.notes} == DROPPED[target], encoded.notes
    assert all(target in note for note in encoded.notes)


def test_fields_with_an_equivalent_are_mapped_to_each_wires_own_field() -> None:
    anthropic = convert_request_noted(OPENAI_REQUEST, "anthropic").body
    assert anthropic["metadata"] == {"user_id": "user-42"}
    assert anthropic["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
    assert anthropic["output_config"] == {"format": {"type": "json_schema", "schema": {"type": "object"}}}
    gemini = convert_request_noted(OPENAI_REQUEST, "gemini").body
    assert gemini["generationConfig"]["seed"] == 7
    assert gemini["generationConfig"]["responseMimeType"] == "application/json"
    assert gemini["generationConfig"]["responseJsonSchema"] == {"type": "object"}
    # An image URL gets the MIME type Gemini refuses a fileData without.
    assert gemini["contents"][0]["parts"][1] == {
        "fileData": {"mimeType": "image/png", "fileUri": "https://example.com/cat.png"}
    }
    responses = convert_request_noted(OPENAI_REQUEST, "openai-responses").body
    assert responses["text"] == {
        "format": {"type": "json_schema", "name": "answer", "schema": {"type": "object"}, "strict": True}
    }
    assert responses["user"] == "user-42" and responses["parallel_tool_calls"] is False
    mistral = convert_request_noted(OPENAI_REQUEST, "mistral").body
    assert mistral["random_seed"] == 7 and mistral["response_format"] == OPENAI_REQUEST["response_format"]
    interactions = convert_request_noted(OPENAI_REQUEST, "google-interactions").body
    assert interactions["generation_config"]["seed"] == 7
    assert (interactions["response_mime_type"], interactions["response_format"]) == (
        "application/json",
        {"type": "object"},
    )
    ollama = convert_request_noted(OPENAI_REQUEST, "ollama").body
    assert ollama["format"] == {"type": "object"} and ollama["options"]["seed"] == 7
    bedrock = convert_request_noted({**OPENAI_REQUEST, "messages": OPENAI_REQUEST["messages"][2:]}, "bedrock-converse")
    spec = bedrock.body["outputConfig"]["textFormat"]["structure"]["jsonSchema"]
    assert json.loads(spec["schema"]) == {"type": "object"} and spec["name"] == "answer"


def test_an_image_url_without_a_type_is_refused_before_sending() -> None:
    body = json.loads(json.dumps(OPENAI_REQUEST))
    body["messages"][1]["content"][1]["image_url"]["url"] = "https://example.com/render?id=7"
    with pytest.raises(ValueError, match="MIME type for this URL: Gemini refuses a fileData without one"):
        convert_request_noted(body, "gemini")
    with pytest.raises(ValueError, match="Bedrock Converse takes its bytes, not a URL"):
        convert_request_noted(OPENAI_REQUEST, "bedrock-converse")


def test_convert_prints_the_notes_and_strict_makes_a_loss_exit_1(make_project: Any, tmp_path: Path) -> None:
    project: Project = make_project()
    path = tmp_path / "request.json"
    path.write_text(json.dumps(OPENAI_REQUEST), encoding="utf-8")
    plain = project.cli("convert", str(path), "--to", "anthropic")
    assert plain.returncode == 0, plain.stderr
    assert json.loads(plain.stdout)["metadata"] == {"user_id": "user-42"}
    assert "toolgen: note: seed: anthropic has no equivalent setting; dropped" in plain.stderr
    assert "toolgen: note: logprobs: anthropic has no place for this openai-chat field; dropped" in plain.stderr
    assert "9 field(s) not carried as they were to anthropic" in plain.stderr
    strict = project.cli("convert", str(path), "--to", "anthropic", "--strict")
    assert strict.returncode == 1 and json.loads(strict.stdout)["model"] == "gpt-4o"
    same = project.cli("convert", str(path), "--to", "openai-chat", "--strict")
    assert same.returncode == 0 and "note:" not in same.stderr
    refused = project.cli("convert", str(path), "--to", "bedrock-converse")
    assert refused.returncode == 3 and "Bedrock Converse takes its bytes, not a URL" in refused.stdout + refused.stderr
