"""Nothing dropped in silence on the way to Bedrock Converse: every request field of the official OpenAI and
Anthropic SDKs' request types either lands in the Converse body or is named by a note, and what the Converse
encoder cannot send as it is (an image type, a document name) is refused or noted.

The field lists come from the installed SDKs' own request types, so a field they add is checked too.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from support.projects import Project

from toolgen.runtime.wires.canonical import Request
from toolgen.runtime.wires.losses import convert_request_noted, encode_request_noted
from toolgen.runtime.wires.table import WIRES

TARGET = "bedrock-converse"
# A plausible value per field; a field not named here gets "x", which no setting reads, so it must be noted.
VALUES: dict[str, Any] = {
    "max_tokens": 64, "max_completion_tokens": 64, "max_output_tokens": 64, "temperature": 0.5, "top_p": 0.9,
    "top_k": 5, "stop": ["END"], "stop_sequences": ["END"], "seed": 7, "user": "u-1", "n": 2, "logprobs": True,
    "top_logprobs": 2, "presence_penalty": 0.5, "frequency_penalty": 0.5, "logit_bias": {"50256": -100},
    "parallel_tool_calls": False, "metadata": {"user_id": "u-1"}, "store": True, "service_tier": "flex",
    "reasoning_effort": "high", "verbosity": "low", "response_format": {"type": "json_object"},
    "modalities": ["text"], "reasoning": {"effort": "high"}, "truncation": "auto",
    "include": ["reasoning.encrypted_content"], "text": {"format": {"type": "json_object"}, "verbosity": "low"},
    "instructions": "Be terse.", "thinking": {"type": "enabled", "budget_tokens": 1024},
    "output_config": {"effort": "high"}, "prompt_cache_key": "k", "safety_identifier": "s",
    "audio": {"voice": "alloy", "format": "wav"}, "prediction": {"type": "content", "content": "x"},
    "web_search_options": {}, "background": False, "max_tool_calls": 3, "previous_response_id": "resp_1",
}  # fmt: skip
TOOL_CHOICE = {"openai-chat": "none", "openai-responses": "none", "anthropic": {"type": "none"}}
# Where Converse carries the fields it has a place for, and the value it must hold there.
CARRIED: dict[str, tuple[tuple[str, ...], Any]] = {
    "max_tokens": (("inferenceConfig", "maxTokens"), 64),
    "max_completion_tokens": (("inferenceConfig", "maxTokens"), 64),
    "max_output_tokens": (("inferenceConfig", "maxTokens"), 64),
    "temperature": (("inferenceConfig", "temperature"), 0.5),
    "top_p": (("inferenceConfig", "topP"), 0.9),
    "stop": (("inferenceConfig", "stopSequences"), ["END"]),
    "stop_sequences": (("inferenceConfig", "stopSequences"), ["END"]),
    "instructions": (("system",), [{"text": "Be terse."}]),
}
# What the body stands on, and the streaming switches each client sets for itself: not request settings.
STRUCTURE = {"model", "messages", "input", "system", "tools", "functions", "stream", "stream_options"}


def sdk_fields(wire: str) -> tuple[dict[str, Any], list[str]]:
    """The smallest body of `wire` and the names of every field its official SDK's request type declares."""
    if wire == "anthropic":
        params = pytest.importorskip("anthropic.types.message_create_params")
        base = {"model": "m", "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]}
        declared = params.MessageCreateParamsBase.__annotations__
    elif wire == "openai-chat":
        params = pytest.importorskip("openai.types.chat.completion_create_params")
        base = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        declared = params.CompletionCreateParamsBase.__annotations__
    else:
        params = pytest.importorskip("openai.types.responses.response_create_params")
        base = {"model": "m", "input": "hi"}
        declared = params.ResponseCreateParamsBase.__annotations__
    return base, sorted(set(declared) - STRUCTURE)


def at(body: dict[str, Any], path: tuple[str, ...]) -> Any:
    for key in path:
        body = body.get(key) if isinstance(body, dict) else None  # type: ignore[assignment]
    return body


# Fields read as a portable setting are named by the setting in the notes (Anthropic's metadata.user_id is `user`).
SETTING_OF = {"metadata": "user"}


def named(field: str, notes: tuple[str, ...]) -> bool:
    names = {field, SETTING_OF.get(field)}
    return any(note.split(":", 1)[0].split(".", 1)[0] in names for note in notes)


@pytest.mark.parametrize("wire", ["openai-chat", "openai-responses", "anthropic"])
def test_every_sdk_request_field_is_carried_or_named(wire: str) -> None:
    base, fields = sdk_fields(wire)
    assert len(fields) > 10, fields
    silent = []
    for field in fields:
        value = TOOL_CHOICE[wire] if field == "tool_choice" else VALUES.get(field, "x")
        encoded = convert_request_noted({**base, field: value}, TARGET, wire)
        assert all(TARGET in note for note in encoded.notes), encoded.notes
        if field in CARRIED:
            path, expected = CARRIED[field]
            assert at(encoded.body, path) == expected, (field, encoded.body)
            assert not named(field, encoded.notes), (field, encoded.notes)
        elif not named(field, encoded.notes):
            silent.append((field, encoded.body, encoded.notes))
    assert silent == []


def test_the_fields_the_issue_names_are_noted() -> None:
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "user": "u-1", "n": 2, "seed": 7, "logprobs": True, "top_logprobs": 2, "presence_penalty": 0.5,
        "frequency_penalty": 0.5, "response_format": {"type": "json_object"}, "temperature": 0.3,
    }  # fmt: skip
    encoded = convert_request_noted(body, TARGET, "openai-chat")
    heads = {note.split(":", 1)[0] for note in encoded.notes}
    assert heads == {
        "user", "n", "seed", "logprobs", "top_logprobs", "presence_penalty", "frequency_penalty", "response_format"
    }  # fmt: skip
    assert encoded.body["inferenceConfig"] == {"temperature": 0.3}
    assert "u-1" not in json.dumps(encoded.body)
    # A JSON schema response format is one Converse does carry: no note for it.
    schema = {"type": "json_schema", "json_schema": {"name": "a", "schema": {"type": "object"}}}
    carried = convert_request_noted({**body, "response_format": schema}, TARGET, "openai-chat")
    assert "response_format" not in {note.split(":", 1)[0] for note in carried.notes}
    assert carried.body["outputConfig"]["textFormat"]["structure"]["jsonSchema"]["name"] == "a"


FUNCTION = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
UNREAD = [
    # OpenAI's allowed_tools choice: no setting takes it, so no other wire gets it.
    {"tool_choice": {"type": "allowed_tools", "allowed_tools": {"mode": "required", "tools": [FUNCTION]}}},
    # Two spellings of one limit: the deprecated one loses.
    {"max_tokens": 7, "max_completion_tokens": 5},
    # Values the request type refuses, read by no setting.
    {"user": 123},
    {"seed": 1.5},
    {"temperature": "hot"},
]


@pytest.mark.parametrize("fields", UNREAD, ids=lambda fields: "+".join(fields))
@pytest.mark.parametrize("target", [wire for wire in WIRES if wire not in ("openai-chat", "openai")])
def test_a_settable_field_no_setting_took_is_named(fields: dict[str, Any], target: str) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": [FUNCTION], **fields}
    encoded = convert_request_noted(body, target, "openai-chat")
    lost = "max_tokens" if "max_completion_tokens" in fields else next(iter(fields))
    assert f"{lost}: no setting took this openai-chat value, so {target} does not get it; dropped" in encoded.notes
    # Same wire: nothing is lost, the field goes back as it came.
    same = convert_request_noted(body, "openai-chat", "openai-chat")
    assert same.notes == () and all(same.body[key] == value for key, value in fields.items())


def image(media_type: str) -> Request:
    return Request([{"role": "user", "content": [{"type": "image", "data": "iVBORw0KGgo=", "media_type": media_type}]}])


def test_image_jpg_is_sent_as_jpeg_with_a_note_and_other_image_types_are_refused() -> None:
    encoded = encode_request_noted(image("image/jpg"), TARGET)
    assert encoded.body["messages"][0]["content"] == [
        {"image": {"format": "jpeg", "source": {"bytes": "iVBORw0KGgo="}}}
    ]
    assert encoded.notes == (
        "/messages/0/content/0/media_type: bedrock-converse cannot carry it as it is "
        "(sent 'image/jpg', it reads back 'image/jpeg')",
    )
    upper = encode_request_noted(image("image/PNG"), TARGET)
    assert upper.body["messages"][0]["content"][0]["image"]["format"] == "png" and len(upper.notes) == 1
    for media_type in ("image/png", "image/jpeg", "image/gif", "image/webp"):
        assert encode_request_noted(image(media_type), TARGET).notes == ()
    for media_type in ("image/svg+xml", "image/bmp", "image/heic"):
        refusal = f"/messages/0: expected a png, jpeg, gif or webp image: Bedrock Converse takes no {media_type}"
        with pytest.raises(ValueError, match=re.escape(refusal)):
            encode_request_noted(image(media_type), TARGET)


@pytest.mark.parametrize(
    ("filename", "sent"),
    [
        ("report", "report"),
        ("Q3 report (final) [v2]", "Q3 report (final) [v2]"),
        ("report.pdf", "report-pdf"),
        ("Résumé  final\t(v2).pdf", "Resume final (v2)-pdf"),
        ("../../etc/passwd", "-etc-passwd"),
        ("日本語", "document"),
        ("x" * 250, "x" * 200),
        (None, "document"),
    ],
)
def test_document_names_are_sent_in_the_characters_converse_takes_and_a_change_is_noted(
    filename: str | None, sent: str
) -> None:
    part: dict[str, Any] = {"type": "file", "data": "JVBERi0=", "media_type": "application/pdf"}
    if filename is not None:
        part["filename"] = filename
    encoded = encode_request_noted(Request([{"role": "user", "content": [part]}]), TARGET)
    (block,) = encoded.body["messages"][0]["content"]
    assert block["document"]["name"] == sent
    if filename is None or filename == sent:
        assert encoded.notes == ()
    else:
        (note,) = encoded.notes
        assert note.startswith("/messages/0/content/0/filename: bedrock-converse cannot carry it as it is"), note
        assert f"it reads back {sent[:40]!r}"[:-1] in note


def test_a_stop_string_is_sent_as_the_list_converse_takes() -> None:
    request = Request([{"role": "user", "content": "hi"}], extras={"settings": {"stop": "END", "user": "u-1"}})
    encoded = encode_request_noted(request, TARGET)
    assert encoded.body["inferenceConfig"] == {"stopSequences": ["END"]}
    assert "user: bedrock-converse has no equivalent setting; dropped" in encoded.notes


def test_convert_to_bedrock_prints_every_dropped_field_and_strict_exits_1(make_project: Any, tmp_path: Path) -> None:
    project: Project = make_project()
    path = tmp_path / "request.json"
    body = {
        "model": "gpt-4o",
        "messages": [{"role": "user", "content": "hi"}],
        "user": "u-1", "n": 2, "seed": 7, "logprobs": True, "presence_penalty": 0.5, "frequency_penalty": 0.5,
        "max_completion_tokens": 10,
    }  # fmt: skip
    path.write_text(json.dumps(body), encoding="utf-8")
    plain = project.cli("convert", str(path), "--to", TARGET)
    assert plain.returncode == 0, plain.stderr
    assert json.loads(plain.stdout)["inferenceConfig"] == {"maxTokens": 10}
    for field in ("user", "n", "seed", "logprobs", "presence_penalty", "frequency_penalty"):
        assert f"toolgen: note: {field}: bedrock-converse " in plain.stderr, (field, plain.stderr)
    assert "6 field(s) not carried as they were to bedrock-converse" in plain.stderr
    strict = project.cli("convert", str(path), "--to", TARGET, "--strict")
    assert strict.returncode == 1
