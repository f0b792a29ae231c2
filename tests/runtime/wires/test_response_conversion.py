"""Response and error bodies converted between wires name every field the target drops, and --strict exits 1.

For every recorded response and every other wire, the canonical content the target reads back is compared with
what was sent, by this test's own flattening: every leaf that differs must be named by a note. Hand-written
bodies pin the wording of the notes for reasoning, signatures, body fields, usage counts and error fields.
"""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from support.projects import SHARED, Project, shared_dir

from toolgen.payloads import codec as payloads
from toolgen.runtime.wires.canonical import Response
from toolgen.runtime.wires.codecs import codec
from toolgen.runtime.wires.response_losses import encode_response_noted, response_losses
from toolgen.runtime.wires.table import WIRES

DEEPSEEK = {
    "id": "r1",
    "object": "chat.completion",
    "created": 1764665845,
    "model": "deepseek-reasoner",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "It is sunny.",
                "reasoning_content": "The user asks about the weather.",
            },
            "logprobs": None,
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15, "prompt_cache_miss_tokens": 7},
    "system_fingerprint": "fp_1",
}
GROQ_ERROR = {
    "error": {
        "code": "tool_use_failed",
        "failed_generation": '{"name": "f", "arguments": {}}',
        "message": "Tool call validation failed",
        "type": "invalid_request_error",
    }
}


def _recorded_responses() -> list[Path]:
    base = SHARED / "payloads"
    return sorted(path for path in base.glob("*/response/*") if path.is_file()) if base.is_dir() else []


def _leaves(value: Any, pointer: str) -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key != "extras":
                out.update(_leaves(item, f"{pointer}/{key}"))
        return out
    if isinstance(value, list):
        out = {}
        for i, item in enumerate(value):
            out.update(_leaves(item, f"{pointer}/{i}"))
        return out
    return {pointer: value}


def _parts(content: Any) -> Any:
    return [{"type": "text", "text": content}] if isinstance(content, str) else content or []


def _canonical(response: Response) -> dict[str, Any]:
    message = dict(response.message)
    message["content"] = _parts(message.get("content"))
    for call in message.get("tool_calls") or []:
        arguments = call.get("function", {}).get("arguments")
        with contextlib.suppress(TypeError, ValueError):
            call["function"] = {**call["function"], "arguments": json.loads(arguments)}
    return {"message": message, "usage": response.usage or {}, "model": response.model, "id": response.id}


@pytest.mark.parametrize("path", _recorded_responses() or [None], ids=lambda p: p.name if p else "no-shared")
def test_every_dropped_leaf_is_named(path: Path | None) -> None:
    if path is None:
        shared_dir("payloads")
        pytest.skip("../shared/payloads holds no response bodies")
    payload = payloads.read_payload(path.read_bytes(), path.suffix)
    decoded = payloads.decode_payload(payload)
    if "error" in decoded:
        return  # error bodies: see the error tests below
    response = payloads.from_canonical(decoded)
    assert isinstance(response, Response)
    for wire in WIRES:
        if wire == decoded["wire"]:
            continue
        try:
            converted = payloads.convert_noted(payload, wire)
        except payloads.PayloadError:
            continue  # refused by name (exit 3), not dropped
        again = codec(wire).decode_response(converted.body)
        assert isinstance(again, Response)
        wanted = _canonical(response)
        gone = {
            int(note.split(":", 1)[0].rsplit("/", 1)[1])
            for note in converted.notes
            if re.match(r"/message/content/\d+: .*dropped$", note)
        }
        # A part named as dropped moves the ones after it up: compare what is left.
        wanted["message"]["content"] = [p for i, p in enumerate(wanted["message"]["content"]) if i not in gone]
        sent, back = _leaves(wanted, ""), _leaves(_canonical(again), "")
        for pointer, value in sent.items():
            if value in (None, "") or back.get(pointer) == value:
                continue
            named = [note for note in converted.notes if pointer.startswith(note.split(":", 1)[0])]
            assert named, f"{path.name} -> {wire}: {pointer} ({value!r}) changed without a note: {converted.notes}"


def test_reasoning_body_fields_and_usage_are_named() -> None:
    payload = payloads.read_payload(json.dumps(DEEPSEEK).encode(), ".json")
    notes = payloads.convert_noted(payload, "anthropic", "openai-chat").notes
    assert "system_fingerprint: anthropic has no place for this openai-chat field; dropped" in notes
    assert "created: anthropic has no place for this openai-chat field; dropped" in notes
    assert "usage.prompt_cache_miss_tokens: anthropic has no place for this openai-chat usage count; dropped" in notes
    assert (
        "/message/content/0: anthropic carries only reasoning it issued itself (a signature does not cross "
        "providers); dropped" in notes
    )
    # `object` is how every chat completion is spelled, not something this one said.
    assert not any(note.startswith("object:") for note in notes)


def test_a_signature_the_target_cannot_hold_is_named() -> None:
    signed = Response(
        {
            "role": "assistant",
            "content": [{"type": "reasoning", "text": "think", "signature": "sig"}],
            "extras": {"anthropic": {"signed": True}},
        },
        {"reason": "stop", "raw": "end_turn"},
        {"input_tokens": 1, "output_tokens": 1},
        "m",
        "id1",
        {},
    )
    encoded = encode_response_noted(signed, "mistral")
    assert "/message/content/0/signature: mistral has no place for it; dropped" in encoded.notes
    assert response_losses(signed, "anthropic", codec("anthropic").encode_response(signed)) == ()


def test_error_fields_dropped_across_wires_are_named_and_kept_on_the_same_wire() -> None:
    payload = payloads.read_payload(json.dumps(GROQ_ERROR).encode(), ".json")
    converted = payloads.convert_noted(payload, "anthropic")
    assert "/error/failed_generation: anthropic has no place for this openai-chat error field; dropped" in (
        converted.notes
    )
    decoded = json.loads(json.dumps(payloads.decode_payload(payload)))
    same = payloads.encode_noted(decoded, "openai-chat")
    assert same.body == GROQ_ERROR and same.notes == ()


@pytest.mark.parametrize(
    ("body", "to_wire"),
    [(DEEPSEEK, "gemini"), (GROQ_ERROR, "anthropic")],
    ids=["response", "error"],
)
def test_strict_exits_1_on_a_response_loss(make_project: Any, body: dict[str, Any], to_wire: str) -> None:
    project: Project = make_project()
    project.write("body.json", json.dumps(body))
    loose = project.cli("convert", "body.json", "--to", to_wire)
    assert loose.returncode == 0, loose.stderr
    assert "toolgen: note: " in loose.stderr and "not carried as they were" in loose.stderr
    strict = project.cli("convert", "body.json", "--to", to_wire, "--strict")
    assert strict.returncode == 1, strict.stderr
    assert json.loads(strict.stdout) == json.loads(loose.stdout)


def test_strict_exits_0_when_nothing_is_lost(make_project: Any) -> None:
    project: Project = make_project()
    body = {"error": {"message": "The provided model identifier is invalid.", "type": "invalid_request_error"}}
    project.write("body.json", json.dumps(body))
    result = project.cli("convert", "body.json", "--to", "anthropic", "--strict")
    assert result.returncode == 0, result.stderr
