"""A content block the client cannot read is kept as a note that quotes what the server sent.

MCP's TextContent has `text: string`, ImageContent and AudioContent `data: string` (base64), EmbeddedResource a
`resource` object with `text` or `blob`; a server may still send other JSON there. The note says what was left out
and shows the value: a string's repr, any other value's JSON, cut short when long.
"""

from __future__ import annotations

from typing import Any

import pytest

from toolgen.runtime.mcp.content import error_text, parts_from_mcp, tool_result

TIFF = "SUkqAAAAAAAAAAAAAAAAAAAAAAA="


@pytest.mark.parametrize(
    ("block", "said"),
    [
        ({"type": "text", "text": 42}, "[an MCP text block: its text is not text (42); left out]"),
        ({"type": "text", "text": 4.5}, "[an MCP text block: its text is not text (4.5); left out]"),
        ({"type": "text", "text": True}, "[an MCP text block: its text is not text (true); left out]"),
        ({"type": "text", "text": None}, "[an MCP text block: its text is not text (null); left out]"),
        ({"type": "text", "text": {"a": 1}}, '[an MCP text block: its text is not text ({"a": 1}); left out]'),
        ({"type": "text"}, "[an MCP text block: it has no text; left out]"),
        ({"type": "image", "data": 42}, "[an MCP image block: it has data that is not text (42); left out]"),
        (
            {"type": "image", "data": "data:image/png;base64,iVBORw0KGgo=", "mimeType": "image/png"},
            "[an MCP image block: it has data that is not base64 ('data:image/png;base64,iVBORw0KGgo='); left out]",
        ),
        (
            {"type": "audio", "data": "%%%"},
            "[an MCP audio block: it has data that is not base64 ('%%%'); left out]",
        ),
        (
            {"type": "image", "data": TIFF, "mimeType": 7},
            "[an MCP image block: its 20 bytes are an unnamed type (7), not PNG, JPEG, GIF or WebP, the images "
            "models are shown; left out]",
        ),
        (
            {"type": "image", "data": TIFF},
            "[an MCP image block: its 20 bytes are an unnamed type (no mimeType), not PNG, JPEG, GIF or WebP, the "
            "images models are shown; left out]",
        ),
        (
            {"type": "resource", "resource": "x://a"},
            "[an MCP resource block: its resource is no JSON object ('x://a'); left out]",
        ),
        ({"type": "resource"}, "[an MCP resource block: it holds no resource; left out]"),
        (
            {"type": "resource", "resource": {"uri": "x://a", "text": 5}},
            "[the MCP resource x://a: its text is not text (5); left out]",
        ),
        (
            {"type": "resource", "resource": {"uri": "x://a", "blob": 3}},
            "[the MCP resource x://a: its blob is data that is not text (3); left out]",
        ),
        (
            {"type": "resource", "resource": {"uri": "x://a", "blob": "???"}},
            "[the MCP resource x://a: its blob is data that is not base64 ('???'); left out]",
        ),
        (42, "[an MCP content block: it is no JSON object (42); left out]"),
        (None, "[an MCP content block: it is no JSON object (null); left out]"),
        ("hello", "[an MCP content block: it is no JSON object ('hello'); left out]"),
        ({"type": 5}, '[an MCP content block of type 5, which this client does not read: {"type": 5}]'),
    ],
)
def test_a_block_that_cannot_be_read_is_a_note_quoting_what_came(block: Any, said: str) -> None:
    assert parts_from_mcp([block]) == [{"type": "text", "text": said}]


def test_a_long_value_is_quoted_cut_short() -> None:
    (part,) = parts_from_mcp([{"type": "text", "text": list(range(10_000))}])
    text = part["text"]
    assert text.startswith("[an MCP text block: its text is not text ([0, 1, 2, 3, ")
    assert text.endswith(" characters cut)); left out]")
    assert len(text) < 200
    (part,) = parts_from_mcp([{"type": "image", "data": "!" * 1_000_000, "mimeType": "image/png"}])
    assert part["text"] == (
        "[an MCP image block: it has data that is not base64 ('" + "!" * 30 + "... (999970 characters cut)'); left out]"
    )


def test_the_number_reaches_the_model_beside_the_blocks_that_were_read() -> None:
    blocks = [{"type": "text", "text": "the count:"}, {"type": "text", "text": 42}]
    assert tool_result(blocks) == "the count:\n[an MCP text block: its text is not text (42); left out]"
    assert error_text(blocks) == "the count:\n[an MCP text block: its text is not text (42); left out]"
