"""Media in a tool result on every wire: each part is carried in the result, moved into a user message, or named in a
text that takes its place, with a note; nothing a server sends stops the run.

The rule is wires/placement.py's; the encoders call it, and HTTPModel.request_notes reports it (with what the round
trip of a conversation holding media finds, clients/sent_notes.py) as run `note` events, once per distinct note.
Runs go over real HTTP on 127.0.0.1, the answers encoded for each wire by its own codec.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from support.local_http import Answer, LocalServer, queue

from toolgen.runtime import HTTPModel, Registry, arun, encode_request_noted, run
from toolgen.runtime.tools.outcomes import ContentParts
from toolgen.runtime.wires.canonical import Request, Response
from toolgen.runtime.wires.codecs import codec, encode_response
from toolgen.runtime.wires.placement import place, placement_notes
from toolgen.runtime.wires.table import ROWS, WIRES

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(24)).decode()
WAV = base64.b64encode(b"RIFF\x24\x00\x01\x00WAVEfmt " + bytes(70_000)).decode()
PDF = base64.b64encode(b"%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n").decode()
PARTS: list[dict[str, Any]] = [
    {"type": "text", "text": "the snapshot:"},
    {"type": "image", "data": PNG, "media_type": "image/png"},
    {"type": "audio", "data": WAV, "format": "wav"},
    {"type": "file", "data": PDF, "media_type": "application/pdf", "filename": "report.pdf"},
]
KINDS = ("image", "audio", "file")
CALL = {"id": "call_1", "type": "function", "function": {"name": "snapshot", "arguments": "{}"}}
TOOL = {"name": "snapshot", "description": "A snapshot.", "inputSchema": {"type": "object", "properties": {}}}
CONVERSATION: list[dict[str, Any]] = [
    {"role": "user", "content": "Take a snapshot."},
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "call_1", "content": PARTS},
]
# The text that takes the place of a part no role of the wire holds.
NAMED = {
    "audio": "[audio audio/wav, 68 KB: {wire} takes no audio in a tool result or a user message; left out]",
    "file": "[file application/pdf report.pdf, 48 bytes: {wire} takes no file in a tool result or a user message; "
    "left out]",
}

# Where each wire puts each part: in the tool result, in a user message after the results, or named in a text.
WHERE = {
    "openai-chat": {"image": "user", "audio": "user", "file": "user"},
    # The dialects' own rules for parts are not placement's: they keep every part in the tool message.
    "openai-chat-camel": {"image": "tool", "audio": "tool", "file": "tool"},
    "mistral": {"image": "tool", "audio": "tool", "file": "tool"},
    "openai-responses": {"image": "tool", "audio": "named", "file": "tool"},
    "anthropic": {"image": "tool", "audio": "named", "file": "tool"},
    "bedrock-converse": {"image": "tool", "audio": "named", "file": "tool"},
    "cohere": {"image": "user", "audio": "named", "file": "named"},
    "gemini": {"image": "user", "audio": "user", "file": "user"},
    "ollama": {"image": "tool", "audio": "named", "file": "named"},
    "google-interactions": {"image": "tool", "audio": "tool", "file": "tool"},
}


# ---- where the parts stand in each wire's body: (kinds in the tool result, kinds in a user message after it,
# texts of the tool result) ----

Found = tuple[list[str], list[str], list[str]]


def _chat(body: dict[str, Any]) -> Found:
    kinds = {"image_url": "image", "input_audio": "audio", "file": "file"}
    messages = body["messages"]
    i = next(i for i, m in enumerate(messages) if m["role"] == "tool")
    tool = messages[i]["content"]
    after = messages[i + 1]["content"] if i + 1 < len(messages) else []
    return (
        [kinds[b["type"]] for b in tool if b["type"] in kinds],
        [kinds[b["type"]] for b in after if b["type"] in kinds],
        [b["text"] for b in tool if b["type"] == "text"],
    )


def _responses(body: dict[str, Any]) -> Found:
    kinds = {"input_image": "image", "input_audio": "audio", "input_file": "file"}
    (output,) = [item["output"] for item in body["input"] if item.get("type") == "function_call_output"]
    return (
        [kinds[b["type"]] for b in output if b["type"] in kinds],
        [],
        [b["text"] for b in output if b["type"] == "input_text"],
    )


def _anthropic(body: dict[str, Any]) -> Found:
    kinds = {"image": "image", "document": "file"}
    (result,) = body["messages"][-1]["content"]
    assert result["type"] == "tool_result"
    blocks = result["content"]
    return (
        [kinds[b["type"]] for b in blocks if b["type"] in kinds],
        [],
        [b["text"] for b in blocks if b["type"] == "text"],
    )


def _bedrock(body: dict[str, Any]) -> Found:
    (result,) = body["messages"][-1]["content"]
    blocks = result["toolResult"]["content"]
    return (
        ["image" if "image" in b else "file" for b in blocks if "image" in b or "document" in b],
        [],
        [b["text"] for b in blocks if "text" in b],
    )


def _cohere(body: dict[str, Any]) -> Found:
    tool, after = body["messages"][2], body["messages"][3]
    assert (tool["role"], after["role"]) == ("tool", "user")
    kinds = {"image_url": "image"}
    return (
        [kinds[b["type"]] for b in tool["content"] if b["type"] in kinds],
        [kinds[b["type"]] for b in after["content"] if b["type"] in kinds],
        [b["text"] for b in tool["content"] if b["type"] == "text"],
    )


def _mime_kind(mime: str) -> str:
    return "image" if mime.startswith("image/") else "audio" if mime.startswith("audio/") else "file"


def _gemini(body: dict[str, Any]) -> Found:
    # The moved parts follow the function response in the same user turn, as a Gemini body holds them.
    response, *rest = body["contents"][-1]["parts"]
    output = response["functionResponse"]["response"]["output"]
    assert rest[0] == {"text": "The result of tool call call_1 (snapshot) also holds:"}
    return [], [_mime_kind(p["inlineData"]["mimeType"]) for p in rest if "inlineData" in p], [output]


def _ollama(body: dict[str, Any]) -> Found:
    tool = body["messages"][-1]
    assert tool["role"] == "tool"
    return ["image"] * len(tool.get("images", [])), [], [tool["content"]]


def _interactions(body: dict[str, Any]) -> Found:
    (result,) = body["input"][-1]["content"]
    kinds = {"image": "image", "audio": "audio", "document": "file"}
    parts = result["result"]
    return (
        [kinds[p["type"]] for p in parts if p["type"] in kinds],
        [],
        [p["text"] for p in parts if p["type"] == "text"],
    )


FOUND: dict[str, Callable[[dict[str, Any]], Found]] = {
    "openai-chat": _chat,
    "openai-chat-camel": _chat,
    "mistral": _chat,
    "openai-responses": _responses,
    "anthropic": _anthropic,
    "bedrock-converse": _bedrock,
    "cohere": _cohere,
    "gemini": _gemini,
    "ollama": _ollama,
    "google-interactions": _interactions,
}


def test_every_wire_of_the_table_is_covered() -> None:
    assert sorted(WHERE) == sorted(FOUND) == sorted(WIRES)


def _expected_notes(wire: str) -> dict[str, str]:
    """The note about each part `wire` moves or names, by its pointer."""
    notes = {}
    for j, kind in enumerate(KINDS, start=1):
        where = WHERE[wire][kind]
        if where == "user" and wire not in ("mistral", "openai-chat-camel"):
            notes[f"/messages/2/content/{j}"] = (
                f"/messages/2/content/{j}: {wire} takes no {kind} in a tool result; moved to a user message after "
                "the tool results, behind a text naming its call"
            )
        elif where == "named":
            named = NAMED[kind].format(wire=wire)[1:].split(":", 1)[0]
            notes[f"/messages/2/content/{j}"] = (
                f"/messages/2/content/{j}: {wire} takes no {kind} in a tool result or a user message; replaced in "
                f"the result by a text naming it ({named})"
            )
    return notes


@pytest.mark.parametrize("wire", WIRES)
def test_each_part_is_carried_moved_or_named_with_a_note(wire: str) -> None:
    encoded = encode_request_noted(Request(CONVERSATION, [TOOL], "m"), wire)
    in_tool, in_user, texts = FOUND[wire](encoded.body)
    assert in_tool == [k for k in KINDS if WHERE[wire][k] == "tool"], encoded.body
    assert in_user == [k for k in KINDS if WHERE[wire][k] == "user"]
    named = [NAMED[k].format(wire=wire) for k in KINDS if WHERE[wire][k] == "named"]
    # The result's own text first, then each named part in its place; joined into one on the wires whose
    # result is one text.
    assert "\n".join(texts) == "\n".join(["the snapshot:", *named])
    expected = _expected_notes(wire)
    about_parts = {note.split(":", 1)[0]: note for note in encoded.notes if note.split(":", 1)[0] in expected}
    assert about_parts == expected
    # A part that stays where it stands has no note of its own (a field of it may: a file's name, below).
    assert not [
        n
        for n in encoded.notes
        if n.split(":", 1)[0].startswith("/messages/2/content/")
        and n.split(":", 1)[0] not in expected
        and "/filename" not in n
    ], encoded.notes
    # What the run reports is what the encoder did: the same placement.
    assert set(placement_notes(CONVERSATION, wire)) == set(expected.values())


@pytest.mark.parametrize("wire", ["anthropic", "gemini", "google-interactions"])
def test_a_files_name_the_wire_has_no_field_for_is_noted(wire: str) -> None:
    encoded = encode_request_noted(Request(CONVERSATION, [TOOL], "m"), wire)
    assert f"/messages/2/content/3/filename: {wire} has no place for it; dropped" in encoded.notes


def test_a_note_about_a_moved_part_points_where_the_part_was() -> None:
    """On Gemini a PDF after two texts is the second part of the user message that carries it; its note names the
    third part of the tool result, where it stood."""
    content = [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}, PARTS[3]]
    messages = [*CONVERSATION[:2], {**CONVERSATION[2], "content": content}]
    encoded = encode_request_noted(Request(messages, [TOOL], "m"), "gemini")
    response, label, document = encoded.body["contents"][-1]["parts"]
    assert response["functionResponse"]["response"] == {"output": "a\nb"}
    assert document["inlineData"]["mimeType"] == "application/pdf"
    assert "/messages/2/content/2/filename: gemini has no place for it; dropped" in encoded.notes
    assert [n.split(":")[0] for n in encoded.notes if n.startswith("/messages")] == [
        "/messages/2/content/2",
        "/messages/2/content/2/filename",
    ]


def test_an_ollama_tool_image_is_recorded_where_the_encoder_puts_it() -> None:
    """Ollama's tool message carries images in `images`: the notes say nothing is dropped, and the body read back
    holds the image in the result, typed by its bytes."""
    messages = [*CONVERSATION[:2], {**CONVERSATION[2], "content": PARTS[:2]}]
    encoded = encode_request_noted(Request(messages, [TOOL], "m"), "ollama")
    assert encoded.body["messages"][-1]["images"] == [PNG]
    assert [n for n in encoded.notes if n.startswith("/messages")] == []
    back = codec("ollama").decode_request(encoded.body).messages[-1]
    assert back["content"] == PARTS[:2]


@pytest.mark.parametrize(
    ("wire", "part", "why"),
    [
        (
            "bedrock-converse",
            {"type": "image", "url": "https://example.com/a.png"},
            "bedrock-converse takes an image given by `data`, which this one lacks",
        ),
        (
            "bedrock-converse",
            {"type": "file", "data": "UEsDBA==", "media_type": "application/zip"},
            "bedrock-converse takes pdf, txt, md, html or csv documents only",
        ),
        ("openai-chat", {"type": "audio", "data": WAV, "format": "flac"}, "openai-chat takes wav or mp3 audio only"),
        (
            "openai-chat",
            {"type": "file", "url": "https://example.com/a.pdf"},
            "openai-chat takes a file given by `data` or `file_id`, which this one lacks",
        ),
        ("gemini", {"type": "audio", "url": "https://example.com/a.wav"}, "gemini takes an audio given by `data`"),
        ("ollama", {"type": "image", "url": "https://example.com/a.png"}, "ollama takes an image given by `data`"),
    ],
)
def test_a_part_the_wire_cannot_send_as_it_is_is_named_not_refused(wire: str, part: dict[str, Any], why: str) -> None:
    messages = [*CONVERSATION[:2], {**CONVERSATION[2], "content": [part]}]
    encoded = encode_request_noted(Request(messages, [TOOL], "m"), wire)
    (note,) = [n for n in encoded.notes if n.startswith("/messages/2/content/0:")]
    assert note.startswith(f"/messages/2/content/0: {why}") and "replaced in the result by a text naming it" in note
    assert why in json.dumps(encoded.body)


def test_what_a_user_sets_is_still_refused_by_name() -> None:
    """Audio in the user's own message is what the user set, not what a server sent: refused before sending."""
    messages = [{"role": "user", "content": [{"type": "audio", "data": WAV, "format": "wav"}]}]
    with pytest.raises(ValueError, match="Anthropic takes no audio"):
        codec("anthropic").encode_request(Request(messages, [], "m"))
    assert place(messages, "anthropic").messages == messages


def test_a_result_left_with_nothing_it_holds_says_where_its_content_went() -> None:
    messages = [*CONVERSATION[:2], {**CONVERSATION[2], "content": [PARTS[1]]}]
    body = codec("cohere").encode_request(Request(messages, [TOOL], "m"))
    assert body["messages"][2] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "(this result's content is in the next user message)",
    }
    assert body["messages"][3]["content"][1]["image_url"]["url"] == f"data:image/png;base64,{PNG}"


# ---- runs over HTTP ----

ROUTED = [row.name for row in ROWS if row.route is not None]


def _answers(wire: str) -> list[Answer]:
    """Two tool calls, then the answer, each as `wire` spells a whole response."""
    calls = [
        Response(
            {"role": "assistant", "content": None, "tool_calls": [{**CALL, "id": call_id}]},
            {"reason": "tool_calls", "raw": None},
            model="m",
            id=f"r{n}",
        )
        for n, call_id in enumerate(["call_1", "call_2"])
    ]
    done = Response({"role": "assistant", "content": "Seen."}, {"reason": "stop", "raw": None}, model="m", id="r3")
    return [Answer(json.dumps(encode_response(r, wire)).encode()) for r in (*calls, done)]


@pytest.fixture
def tools() -> Registry:
    registry = Registry({})
    registry.add("snapshot", {"type": "object"}, lambda args, ctx: ContentParts(PARTS))
    return registry


@contextmanager
def _serving(wire: str) -> Iterator[LocalServer]:
    server = LocalServer(queue(*_answers(wire)))
    try:
        yield server
    finally:
        server.close()


@pytest.mark.parametrize("wire", ROUTED)
def test_a_run_goes_on_and_reports_each_note_once(wire: str, tools: Registry) -> None:
    events: list[Any] = []
    with _serving(wire) as server:
        model = HTTPModel(server.base, "m", wire=wire, api_key="k")
        try:
            result = run([{"role": "user", "content": "Take a snapshot."}], model, tools, on_event=events.append)
        finally:
            model.close()
        seen = [json.loads(received.body) for received in server.seen]
    assert result.stop_reason == "finished" and result.text == "Seen.", result.error
    assert len(seen) == 3
    notes = [e.data["message"] for e in events if e.type == "note"]
    # Each result's parts are noted once, at the call whose request first held them, though the second and third
    # requests both send the first result.
    expected = [
        *_expected_notes(wire).values(),
        *(note.replace("/messages/2/", "/messages/4/") for note in _expected_notes(wire).values()),
    ]
    # A file's name some wires have no field for (or spell otherwise): found by the round trip, noted once per file.
    file_names = [n for n in notes if n.split(":", 1)[0].endswith("/content/3/filename")]
    assert len(file_names) in (0, 2), file_names
    assert sorted(n for n in notes if n not in file_names) == sorted(expected), notes
    assert len(notes) == len(set(notes))
    assert all(e.data["wire"] == wire and e.data["setting"] is None for e in events if e.type == "note")
    starts = [i for i, e in enumerate(events) if e.type == "model_call_started"]
    noted_at = [max(s for s in starts if s < i) for i, e in enumerate(events) if e.type == "note"]
    assert set(noted_at) <= set(starts[1:]), "notes follow the call whose request held the parts"
    # The second request holds what the first result became on this wire.
    in_tool, in_user, _ = FOUND[wire](seen[1])
    assert in_tool == [k for k in KINDS if WHERE[wire][k] == "tool"]
    assert in_user == [k for k in KINDS if WHERE[wire][k] == "user"]


@pytest.mark.parametrize("wire", ["gemini", "anthropic"])
def test_an_async_run_reports_the_same_notes(wire: str, tools: Registry) -> None:
    events: list[Any] = []
    with _serving(wire) as server:
        model = HTTPModel(server.base, "m", wire=wire, api_key="k")
        try:
            result = asyncio.run(
                arun([{"role": "user", "content": "Take a snapshot."}], model, tools, on_event=events.append)
            )
        finally:
            model.close()
    assert result.stop_reason == "finished", result.error
    notes = [e.data["message"] for e in events if e.type == "note"]
    for note in _expected_notes(wire).values():
        assert notes.count(note) == 1, notes
    if wire == "gemini":
        # Beyond what placement moves: the round trip of a conversation holding media finds the lost file name.
        assert "/messages/2/content/3/filename: gemini has no place for it; dropped" in notes
