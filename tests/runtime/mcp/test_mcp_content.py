"""MCP content as content: images, audio and resources between MCP blocks and canonical parts, both ways.

Unit tests of runtime/mcp/content.py (hostile blocks included: each becomes a part or a text note, nothing
raises), then end to end: server-everything's image and resource tools through toolgen's client into a scripted
run, the next request encoded for real wires, and a toolgen server's image tool read by toolgen's client.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import mcp
import mcp_types
import pytest
import yaml
from support.mcp_helpers import DEADLINE
from support.mcp_peers import peer_command
from support.projects import REPO_ROOT

from toolgen.runtime import HTTPModel, Registry, ScriptedModel, assistant_turn, mcp_tools, run, tool_call
from toolgen.runtime.mcp.content import mcp_from_parts, parts_from_mcp, text_from_mcp, tool_result
from toolgen.runtime.mcp.server import call_result, mcp_server
from toolgen.runtime.tools.outcomes import ContentParts
from toolgen.runtime.wires.canonical import Request
from toolgen.runtime.wires.losses import encode_request_noted

PNG_BYTES = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c63f8cfc0f01f0005000201e5279ee50000000049454e44ae426082"
)
PNG = base64.b64encode(PNG_BYTES).decode()
WAV = base64.b64encode(b"RIFF\x24\x00\x00\x00WAVEfmt " + bytes(28)).decode()
PDF = base64.b64encode(b"%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n").decode()
TIFF = base64.b64encode(b"II*\x00" + bytes(16)).decode()
GZIP = base64.b64encode(b"\x1f\x8b\x08\x00" + bytes(16)).decode()
# The image server-everything's get-tiny-image returns begins so.
TINY_IMAGE = "iVBORw0KGgoAAAANSUhEUgAAABQAAAAUCAYAAACNiR0N"


def _part_schema() -> Any:
    """A validator of one canonical content part, from schemas/canonical/content.yaml."""
    document = yaml.safe_load((REPO_ROOT / "schemas/canonical/content.yaml").read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator({**document, "$ref": "#/$defs/ContentPart"})


PART = _part_schema()


def _canonical(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for part in parts:
        PART.validate(part)
    return parts


# ---- from MCP blocks ----


def test_each_block_kind_becomes_its_part() -> None:
    blocks = [
        {"type": "text", "text": "look:"},
        {"type": "image", "data": PNG, "mimeType": "image/png"},
        {"type": "audio", "data": WAV, "mimeType": "audio/wav"},
        {"type": "resource", "resource": {"uri": "file:///notes.txt", "mimeType": "text/plain", "text": "hello"}},
        {
            "type": "resource",
            "resource": {"uri": "file:///docs/report.pdf", "mimeType": "application/pdf", "blob": PDF},
        },
        {"type": "resource", "resource": {"uri": "file:///pic", "mimeType": "image/png", "blob": PNG}},
        {
            "type": "resource",
            "resource": {"uri": "file:///a.json", "mimeType": "application/json", "blob": "eyJhIjogMX0="},
        },
        {
            "type": "resource_link",
            "uri": "file:///big.csv",
            "name": "big.csv",
            "title": "The big table",
            "mimeType": "text/csv",
            "size": 123456,
            "description": "All rows.",
        },
    ]
    assert _canonical(parts_from_mcp(blocks)) == [
        {"type": "text", "text": "look:"},
        {"type": "image", "data": PNG, "media_type": "image/png"},
        {"type": "audio", "data": WAV, "format": "wav"},
        {"type": "text", "text": "[MCP resource file:///notes.txt, text/plain]\nhello"},
        {"type": "text", "text": "[MCP resource file:///docs/report.pdf, application/pdf]"},
        {"type": "file", "data": PDF, "media_type": "application/pdf", "filename": "report.pdf"},
        {"type": "text", "text": "[MCP resource file:///pic, image/png]"},
        {"type": "image", "data": PNG, "media_type": "image/png"},
        {"type": "text", "text": '[MCP resource file:///a.json, application/json]\n{"a": 1}'},
        {
            "type": "text",
            "text": "[MCP resource link: big.csv (The big table) <file:///big.csv>, text/csv, 123,456 bytes] All rows.",
        },
    ]


def test_the_sdks_own_models_convert_as_their_json_does() -> None:
    blocks = [
        mcp_types.TextContent(text="a"),
        mcp_types.ImageContent(data=PNG, mime_type="image/png"),
        mcp_types.EmbeddedResource(
            resource=mcp_types.TextResourceContents(uri="demo://x", mime_type="text/plain", text="b")
        ),
        mcp_types.ResourceLink(uri="demo://y", name="y"),
    ]
    assert parts_from_mcp(blocks) == parts_from_mcp([b.model_dump(mode="json", by_alias=True) for b in blocks])
    assert [p["type"] for p in parts_from_mcp(blocks)] == ["text", "image", "text", "text"]


def test_the_bytes_name_an_images_type_and_base64_is_made_standard() -> None:
    # Declared JPEG, but the bytes are PNG: a provider checks the bytes, so the part says PNG.
    wrapped = "\n".join(PNG[i : i + 20] for i in range(0, len(PNG), 20)).rstrip("=")
    urlsafe = PNG.replace("+", "-").replace("/", "_")
    for data in (wrapped, urlsafe):
        (part,) = parts_from_mcp([{"type": "image", "data": data, "mimeType": "image/jpeg"}])
        assert part == {"type": "image", "data": PNG, "media_type": "image/png"}


HUGE = "image/" + "x" * 1_000_000


@pytest.mark.parametrize(
    ("block", "said"),
    [
        ({"type": "image", "mimeType": "image/png"}, "[an MCP image block: it has no data; left out]"),
        ({"type": "image", "data": None}, "[an MCP image block: it has no data; left out]"),
        ({"type": "image", "data": "   "}, "[an MCP image block: it has no data; left out]"),
        ({"type": "image", "data": 42}, "[an MCP image block: it has data that is not text (42); left out]"),
        ({"type": "image", "data": "not base64!", "mimeType": "image/png"}, "it has data that is not base64"),
        ({"type": "image", "data": "QUJD\x00", "mimeType": "image/png"}, "it has data that is not base64"),
        ({"type": "image", "data": TIFF, "mimeType": "image/tiff"}, "its 20 bytes are image/tiff, not PNG, JPEG"),
        ({"type": "image", "data": TIFF, "mimeType": HUGE}, "are an unnamed type ('image/xxxxxxxxxxxxxxxxxxxxxxx"),
        ({"type": "audio", "data": TIFF, "mimeType": HUGE}, "its 20 bytes are of no audio type it names or shows"),
        ({"type": "audio", "data": "%%%"}, "[an MCP audio block: it has data that is not base64 ('%%%'); left out]"),
        ({"type": "resource"}, "[an MCP resource block: it holds no resource; left out]"),
        ({"type": "resource", "resource": {"uri": "x://a"}}, "[the MCP resource x://a: it has neither text nor a blob"),
        ({"type": "resource", "resource": {"uri": "x://a", "blob": "???"}}, "its blob is data that is not base64"),
        (
            {"type": "resource", "resource": {"uri": "x://z.gz", "mimeType": "application/gzip", "blob": GZIP}},
            "[the MCP resource x://z.gz: its 20 bytes of application/gzip are nothing a model is shown; left out]",
        ),
        (
            {"type": "resource", "resource": {"uri": "x://b", "mimeType": HUGE, "blob": GZIP}},
            "its 20 bytes of bytes of no named type are nothing a model is shown",
        ),
        (
            {"type": "text", "text": ["not", "text"]},
            '[an MCP text block: its text is not text (["not", "text"]); left out]',
        ),
        (
            {"type": "video", "data": "AAAA"},
            "[an MCP content block of type 'video', which this client does not read: {",
        ),
        ({"data": "AAAA"}, '[an MCP content block without a type, which this client does not read: {"data": "AAAA"}]'),
        ({"type": "resource_link"}, "[MCP resource link: (unnamed) <(no URI)>]"),
        (
            {"type": "resource_link", "name": "n", "uri": "u", "size": -1, "mimeType": HUGE},
            "[MCP resource link: n <u>]",
        ),
        ({"type": "resource_link", "name": "n", "uri": "u", "size": True}, "[MCP resource link: n <u>]"),
        (42, "[an MCP content block: it is no JSON object (42); left out]"),
        (None, "[an MCP content block: it is no JSON object (null); left out]"),
    ],
)
def test_hostile_blocks_become_a_clear_note_not_an_exception(block: Any, said: str) -> None:
    parts = _canonical(parts_from_mcp([block]))
    assert [part["type"] for part in parts] == ["text"]
    assert said in parts[0]["text"]
    assert len(parts[0]["text"]) < 3000  # a megabyte of mimeType is not repeated back


def test_a_peers_long_strings_are_cut_and_lone_surrogates_made_sendable() -> None:
    link = {"type": "resource_link", "name": "n" * 10_000, "uri": "u" * 100_000, "description": "d" * 100_000}
    (part,) = parts_from_mcp([link])
    assert len(part["text"]) < 5000 and "characters cut" in part["text"]
    (text,) = parts_from_mcp([{"type": "text", "text": "a\ud800b"}])
    assert text == {"type": "text", "text": "a\ufffdb"}
    # A malformed URI names no file, and a blob of text without a type is read as text.
    blob = {"uri": "http://[broken/x.pdf", "mimeType": "application/pdf", "blob": PDF}
    assert parts_from_mcp([{"type": "resource", "resource": blob}])[1] == {
        "type": "file",
        "data": PDF,
        "media_type": "application/pdf",
    }
    untyped = {"uri": "x://t", "blob": base64.b64encode(b"plain words").decode()}
    assert parts_from_mcp([{"type": "resource", "resource": untyped}]) == [
        {"type": "text", "text": "[MCP resource x://t]\nplain words"}
    ]


def test_what_a_handler_returns_text_structured_data_or_parts() -> None:
    text = [{"type": "text", "text": "a"}, {"type": "resource_link", "uri": "x://l", "name": "l"}]
    assert tool_result(text) == "a\n[MCP resource link: l <x://l>]"
    assert tool_result([]) == ""
    image = [{"type": "text", "text": "see"}, {"type": "image", "data": PNG, "mimeType": "image/png"}]
    assert tool_result(image) == ContentParts(
        [{"type": "text", "text": "see"}, {"type": "image", "data": PNG, "media_type": "image/png"}]
    )
    # Structured content stays the result; text blocks are its serialization, the image follows its JSON.
    data = {"points": 3}
    assert tool_result([{"type": "text", "text": '{"points":3}'}], data) == data
    with_image = tool_result([{"type": "text", "text": '{"points":3}'}, image[1]], data)
    assert with_image == ContentParts(
        [{"type": "text", "text": '{"points": 3}'}, {"type": "image", "data": PNG, "media_type": "image/png"}],
        value=data,
    )
    # A hostile block beside structured content is a note, not lost.
    noted = tool_result([{"type": "video"}], data)
    assert isinstance(noted, ContentParts) and "type 'video'" in noted.parts[1]["text"]
    # An error is read as text: each other part a line saying what it is.
    assert text_from_mcp([*image, {"type": "audio", "data": WAV, "mimeType": "audio/wav"}]) == (
        "see\n[image image/png, 70 bytes]\n[audio wav, 44 bytes]"
    )


def test_a_handler_returning_content_parts_answers_with_them() -> None:
    tools = Registry({})
    parts = [{"type": "text", "text": "the chart:"}, {"type": "image", "data": PNG, "media_type": "image/png"}]
    tools.add("chart", {"type": "object"}, lambda args, ctx: ContentParts(parts))
    outcome = tools.dispatch(tool_call("chart", {}, id="c1"))
    assert not outcome.is_error and outcome.content == parts
    assert outcome.to_message()["content"] == parts
    tools.add("broken", {"type": "object"}, lambda args, ctx: ContentParts([{"type": "text", "text": float("nan")}]))
    refused = tools.dispatch(tool_call("broken", {}, id="c2"))
    assert refused.is_error and refused.error is not None and refused.error.kind == "invalid_result"


# ---- to MCP blocks ----


def test_canonical_parts_go_out_as_mcp_blocks() -> None:
    parts = [
        {"type": "text", "text": "x\ud800"},
        {"type": "image", "data": PNG, "media_type": "image/png", "detail": "low"},
        {"type": "image", "url": f"data:image/png;base64,{PNG}"},
        {"type": "image", "data": PNG},
        {"type": "image", "url": "https://example.com/cat.jpg"},
        {"type": "audio", "data": WAV, "format": "wav"},
        {"type": "audio", "data": WAV, "format": "flac"},
        {"type": "audio", "data": WAV},
        {"type": "file", "data": PDF, "media_type": "application/pdf", "filename": "q1 report.pdf"},
        {"type": "file", "url": "https://example.com/a.pdf", "filename": "a.pdf"},
        {"type": "file", "file_id": "file-123"},
        {"type": "reasoning", "text": "hmm"},
        {"type": "image"},
        "loose",
    ]
    blocks = mcp_from_parts(parts)
    assert blocks == [
        {"type": "text", "text": "x\ufffd"},
        {"type": "image", "data": PNG, "mimeType": "image/png"},
        {"type": "image", "data": PNG, "mimeType": "image/png"},
        {"type": "image", "data": PNG, "mimeType": "image/png"},
        {"type": "resource_link", "uri": "https://example.com/cat.jpg", "name": "image"},
        {"type": "audio", "data": WAV, "mimeType": "audio/wav"},
        {"type": "audio", "data": WAV, "mimeType": "audio/flac"},
        {"type": "audio", "data": WAV, "mimeType": "audio/wav"},
        {
            "type": "resource",
            "resource": {"uri": "toolgen://attachment/8/q1%20report.pdf", "blob": PDF, "mimeType": "application/pdf"},
        },
        {"type": "resource_link", "uri": "https://example.com/a.pdf", "name": "a.pdf"},
        {"type": "text", "text": '{"type": "file", "file_id": "file-123"}'},
        {"type": "text", "text": '{"type": "reasoning", "text": "hmm"}'},
        {"type": "text", "text": '{"type": "image"}'},
        {"type": "text", "text": '"loose"'},
    ]
    # Every block is one the official SDK takes.
    mcp_types.CallToolResult.model_validate({"content": blocks})
    # And back: image, audio and file as they were (the file headed by its resource URI).
    back = parts_from_mcp(blocks[1:2] + blocks[5:6] + blocks[8:9])
    assert back == [
        {"type": "image", "data": PNG, "media_type": "image/png"},
        {"type": "audio", "data": WAV, "format": "wav"},
        {"type": "text", "text": "[MCP resource toolgen://attachment/8/q1%20report.pdf, application/pdf]"},
        {"type": "file", "data": PDF, "media_type": "application/pdf", "filename": "q1 report.pdf"},
    ]


def test_a_served_tools_parts_and_structured_value_reach_an_official_client() -> None:
    tools = Registry({})
    image = {"type": "image", "data": PNG, "media_type": "image/png"}
    tools.add("snap", {"type": "object"}, lambda args, ctx: ContentParts([{"type": "text", "text": "snap:"}, image]))
    schema = {"type": "object", "properties": {"points": {"type": "integer"}}, "required": ["points"]}
    chart = ContentParts([{"type": "text", "text": '{"points": 3}'}, image], value={"points": 3})
    tools.add("chart", {"type": "object"}, lambda args, ctx: chart, output_schema=schema)

    async def session() -> tuple[Any, Any]:
        with anyio.fail_after(DEADLINE):
            async with mcp.Client(mcp_server(tools)) as client:
                return await client.call_tool("snap", {}), await client.call_tool("chart", {})

    snap, charted = anyio.run(session)
    assert [type(b).__name__ for b in snap.content] == ["TextContent", "ImageContent"]
    assert (snap.content[1].data, snap.content[1].mime_type) == (PNG, "image/png")
    assert snap.structured_content is None
    assert charted.structured_content == {"points": 3}
    assert [b.type for b in charted.content] == ["text", "image"]
    # call_result reads the value of ContentParts, never the dataclass itself.
    outcome = tools.dispatch(tool_call("chart", {}, id="c"))
    assert call_result(tools, outcome)["structuredContent"] == {"points": 3}


# ---- end to end ----


def _scripted_run(tools: Registry, name: str, arguments: dict[str, Any]) -> tuple[Any, Request]:
    model = ScriptedModel([assistant_turn(None, tool_call(name, arguments, id="call_1")), assistant_turn("seen")])
    result = run([{"role": "user", "content": f"use {name}"}], model, tools)
    assert (result.stop_reason, len(model.requests)) == ("finished", 2)
    return result, model.requests[1]


def test_the_everything_servers_image_reaches_the_model_as_an_image() -> None:
    tools = Registry({})
    with mcp_tools(tools, peer_command("everything", "stdio"), names=["get-tiny-image"], timeout=DEADLINE):
        result, request = _scripted_run(tools, "get-tiny-image", {})
    tool = request.messages[-1]
    assert tool["role"] == "tool" and tool["tool_call_id"] == "call_1"
    assert [part["type"] for part in tool["content"]] == ["text", "image", "text"]
    image = tool["content"][1]
    assert image["media_type"] == "image/png" and image["data"].startswith(TINY_IMAGE)
    assert len(json.dumps(tool["content"])) < len(image["data"]) + 300  # no base64 JSON text beside it
    assert result.calls[0].status == "ok"

    # OpenAI chat: a tool message holds text; the image follows in a user message, with a note saying so.
    chat = encode_request_noted(request, "openai-chat")
    sent = chat.body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "user"]
    assert all(block["type"] == "text" for block in sent[2]["content"])
    carried = sent[3]["content"]
    assert carried[0]["text"] == "The result of tool call call_1 (get-tiny-image) also holds:"
    assert carried[1]["image_url"]["url"].startswith(f"data:image/png;base64,{TINY_IMAGE}")
    assert any(
        note.startswith("/messages/2/content/1: openai-chat takes no image in a tool result; moved")
        for note in chat.notes
    )

    # Anthropic: the image in the tool_result itself.
    anthropic = encode_request_noted(request, "anthropic")
    (block,) = anthropic.body["messages"][-1]["content"]
    assert block["type"] == "tool_result" and block["tool_use_id"] == "call_1"
    assert [b["type"] for b in block["content"]] == ["text", "image", "text"]
    source = block["content"][1]["source"]
    assert (source["type"], source["media_type"]) == ("base64", "image/png") and source["data"].startswith(TINY_IMAGE)
    assert not [note for note in anthropic.notes if "/content/" in note]

    # Responses: the image in the function call's output.
    responses = encode_request_noted(request, "openai-responses")
    output = responses.body["input"][-1]["output"]
    assert [item["type"] for item in output] == ["input_text", "input_image", "input_text"]

    # Gemini's function response holds text only: the image follows it in the same user turn, behind a text
    # naming its call, and the note says so; the result's two texts are one, a line between them.
    gemini = encode_request_noted(request, "gemini")
    response, label, image = gemini.body["contents"][-1]["parts"]
    assert TINY_IMAGE not in json.dumps(response)
    assert "\n" in response["functionResponse"]["response"]["output"]
    assert label == {"text": "The result of tool call call_1 (get-tiny-image) also holds:"}
    assert image["inlineData"]["mimeType"] == "image/png" and image["inlineData"]["data"].startswith(TINY_IMAGE)
    assert [note for note in gemini.notes if note.startswith("/messages/")] == [
        "/messages/2/content/1: gemini takes no image in a tool result; moved to a user message after the tool "
        "results, behind a text naming its call",
    ]


def test_the_everything_servers_resources_reach_the_model_as_text() -> None:
    tools = Registry({})
    names = ["get-resource-links", "get-resource-reference"]
    with mcp_tools(tools, peer_command("everything", "stdio"), names=names, timeout=DEADLINE):
        _, links = _scripted_run(tools, "get-resource-links", {"count": 2})
        _, text = _scripted_run(tools, "get-resource-reference", {"resourceType": "Text", "resourceId": 1})
        _, blob = _scripted_run(tools, "get-resource-reference", {"resourceType": "Blob", "resourceId": 2})
    lines = links.messages[-1]["content"].splitlines()
    assert lines[1:] == [
        "[MCP resource link: Blob Resource 1 <demo://resource/dynamic/blob/1>, text/plain] Resource 1: plaintext resource",
        "[MCP resource link: Text Resource 2 <demo://resource/dynamic/text/2>, text/plain] Resource 2: plaintext resource",
    ]
    lines = text.messages[-1]["content"].splitlines()
    assert lines[1] == "[MCP resource demo://resource/dynamic/text/1, text/plain]"
    assert lines[2].startswith("Resource 1: This is a plaintext resource created at ")
    # A blob of text is read as the text it is, not as base64.
    lines = blob.messages[-1]["content"].splitlines()
    assert lines[1] == "[MCP resource demo://resource/dynamic/blob/2, text/plain]"
    assert lines[2].startswith("Resource 2: This is a base64 blob created at ")


SERVER = """
import sys
from toolgen.runtime import Registry, serve_mcp
from toolgen.runtime.tools.outcomes import ContentParts

PNG, WAV, PDF = sys.argv[1:4]
tools = Registry({})
parts = [
    {"type": "text", "text": "the snapshot:"},
    {"type": "image", "data": PNG, "media_type": "image/png"},
    {"type": "audio", "data": WAV, "format": "wav"},
    {"type": "file", "data": PDF, "media_type": "application/pdf", "filename": "report.pdf"},
]
tools.add("snapshot", {"type": "object"}, lambda args, ctx: ContentParts(parts), description="A snapshot.")
chart = ContentParts([{"type": "text", "text": '{"points": 3}'}, parts[1]], value={"points": 3})
schema = {"type": "object", "properties": {"points": {"type": "integer"}}, "required": ["points"]}
tools.add("chart", {"type": "object"}, lambda args, ctx: chart, output_schema=schema)
serve_mcp(tools)
"""


def test_a_toolgen_servers_image_tool_read_by_a_toolgen_client(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(SERVER, encoding="utf-8")
    tools = Registry({})
    with mcp_tools(tools, [sys.executable, str(script), PNG, WAV, PDF], timeout=DEADLINE):
        _, request = _scripted_run(tools, "snapshot", {})
        chart = tools.dispatch(tool_call("chart", {}, id="c2"))
    assert request.messages[-1]["content"] == [
        {"type": "text", "text": "the snapshot:"},
        {"type": "image", "data": PNG, "media_type": "image/png"},
        {"type": "audio", "data": WAV, "format": "wav"},
        {"type": "text", "text": "[MCP resource toolgen://attachment/3/report.pdf, application/pdf]"},
        {"type": "file", "data": PDF, "media_type": "application/pdf", "filename": "report.pdf"},
    ]
    # Structured content and an image: the data is the result, the image follows its JSON.
    assert chart.result == ContentParts(
        [{"type": "text", "text": '{"points": 3}'}, {"type": "image", "data": PNG, "media_type": "image/png"}],
        value={"points": 3},
    )
    assert chart.content == [dict(part) for part in chart.result.parts]


HOSTILE = """
import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

BLOCKS = [
    {"type": "text", "text": "odd things:"},
    {"type": "image", "data": "not base64 at all!", "mimeType": "image/png"},
    {"type": "image", "data": "SUkqAAAAAAAAAAAAAAAAAAAAAAA=", "mimeType": "image/" + "x" * 100000},
    {"type": "audio", "data": "", "mimeType": "audio/wav"},
    {"type": "resource", "resource": {"uri": "x://z.gz", "mimeType": "application/gzip", "blob": "H4sIAAAAAAAA"}},
]


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[types.Tool(name="odd", input_schema={"type": "object"})])


async def call_tool(ctx, params):
    return types.CallToolResult.model_validate({"content": BLOCKS})


async def main():
    server = Server("hostile", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)
"""


def test_a_servers_hostile_blocks_reach_the_model_as_notes(tmp_path: Path) -> None:
    script = tmp_path / "hostile.py"
    script.write_text(HOSTILE, encoding="utf-8")
    tools = Registry({})
    with mcp_tools(tools, [sys.executable, str(script)], timeout=DEADLINE):
        result, request = _scripted_run(tools, "odd", {})
    assert result.calls[0].status == "ok"
    assert request.messages[-1]["content"].splitlines() == [
        "odd things:",
        "[an MCP image block: it has data that is not base64 ('not base64 at all!'); left out]",
        "[an MCP image block: its 20 bytes are an unnamed type ('image/xxxxxxxxxxxxxxxxxxxxxxxx... (99976 characters"
        " cut)'), not PNG, JPEG, GIF or WebP, the images models are shown; left out]",
        "[an MCP audio block: it has no data; left out]",
        "[the MCP resource x://z.gz: its 9 bytes of application/gzip are nothing a model is shown; left out]",
    ]


def test_audio_a_wire_cannot_carry_is_named_in_a_text_and_the_request_is_sent() -> None:
    """Anthropic takes no audio anywhere: in a tool result it is replaced by a text naming it, with a note, and the
    request goes out (here to a port where nothing listens; tests/runtime/tools/test_tool_result_parts.py runs it to the end)."""
    tools = Registry({})
    tools.add("listen", {"type": "object"}, lambda args, ctx: tool_result([{"type": "audio", "data": WAV}]))
    model = HTTPModel("http://127.0.0.1:9", "m", wire="anthropic", api_key="k")
    events: list[Any] = []
    history = [
        {"role": "user", "content": "listen"},
        assistant_turn(None, tool_call("listen", {}, id="call_1")),
        {
            "role": "tool",
            "tool_call_id": "call_1",
            "content": tools.dispatch(tool_call("listen", {}, id="call_1")).content,
        },
    ]
    try:
        result = run(history, model, tools, on_event=events.append)
    finally:
        model.close()
    assert result.stop_reason == "error" and result.error.type == "connection_error", result.error
    (note,) = [event.data["message"] for event in events if event.type == "note"]
    assert note.startswith("/messages/2/content/0: anthropic takes no audio in a tool result or a user message;")
